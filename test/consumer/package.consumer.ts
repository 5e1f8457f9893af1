/**
 * rayshift as a user installs it: `npm pack` (with `prepack`), then fresh projects in the temporary
 * folder, outside the repository (no `../shared`, no repository `node_modules`, the repository's
 * `node_modules/.bin` off `PATH`), that install the tarball from its path and their other packages
 * from the npm registry:
 *
 * - the tarball carries the public surface only, and publint and Are The Types Wrong report nothing;
 * - a cdk8s-only app (written like the README's) compiles with `tsc` (library types checked) and
 *   `cdk8s synth`s on Node 24 and Node 22, gaining at most 25 MB and no Pulumi or Kubernetes-client
 *   package over the same app without rayshift;
 * - the installed `rayshift` bin: `--version`, `validate`, `plan --json`, and `dashboard` serving its page;
 * - a Pulumi project (Pulumi.yaml, runtime nodejs) importing `rayshift/pulumi`, compiled with the
 *   tsconfig of `pulumi new typescript` (no skipLibCheck): preview and up of an
 *   `executor: 'pulumi'` RayService with the real Pulumi CLI (built from Go modules) on the test
 *   cluster (the real KubeRay runs its RayClusters; Serve dashboards and the Gateway status are
 *   TEST-ONLY simulations), then an up that upgrades it, so the dynamic provider's serialized code runs from the installed package;
 *   and the installed Pulumi plugin package's entry serves the components' schema over gRPC.
 *   The program is inline (run by the Automation API from the project's own node_modules) because
 *   Pulumi's nodejs language host, `pulumi-language-nodejs`, is a Go module the proxy refuses (403).
 *
 * Run by `npm run test:consumer` (after `npm run controlplane:build`, `npm run cluster:build` and
 * `npm run pulumi:build`).
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { recordName } from '../../lib/pulumi/record-name';
import { OperatorEnv, startOperatorEnv, createNamespace, rayClusterConfig, serveConfig } from '../support/operator-env';
import { pulumiToolchain, TEST_PASSPHRASE } from '../support/pulumi';
import { servedSchema, startPluginProvider } from '../support/pulumi-plugin';
import { PackResult, consumerPath, copyFixture, freshProject, installedBytes, mb, nodeBinDir, npmInstall, packPackage, run } from './consumer-project';

const ROOT = path.resolve(__dirname, '../..');
const repoPackage = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };
/** The peers a user installs, at the versions the repository tests with. */
const peer = (name: string) => `${name}@${repoPackage.devDependencies[name].replace(/^[\^~]/, '')}`;
const CDK8S_APP_PACKAGES = [peer('cdk8s'), peer('constructs'), peer('cdk8s-cli'), peer('typescript')];
const MAX_ADDED_BYTES = 25 * 1024 * 1024;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-consumer-'));
const report: string[] = [];
let pack: PackResult;
let node24: Record<string, string>;

beforeAll(() => {
  pack = packPackage(work);
  node24 = { PATH: consumerPath(nodeBinDir(24, work)) };
  report.push(`package: ${pack.entryCount} files, ${mb(pack.size)} packed, ${mb(pack.unpackedSize)} unpacked`);
}, 600_000);

afterAll(() => {
  process.stdout.write(`\n== consumer report\n${report.map((l) => `  ${l}`).join('\n')}\n`);
  fs.rmSync(work, { recursive: true, force: true });
});

describe('the tarball', () => {
  test('carries the compiled library, CLI, operator chart, Helm chart, dashboard and LICENSE, and nothing of the repository', () => {
    const files = pack.files;
    for (const f of ['package.json', 'README.md', 'LICENSE', 'bin/rayshift.js', 'build/lib/index.js', 'build/lib/index.d.ts', 'build/lib/pulumi/index.js', 'build/lib/pulumi/index.d.ts', 'build/operator/chart/index.js', 'build/lib/cli/main.js', 'dist-ui/index.html', 'pulumi-plugin/PulumiPlugin.yaml', 'pulumi-plugin/index.js', 'build/lib/pulumi/plugin/generated/schema.json', 'charts/rayshift/Chart.yaml', 'charts/rayshift/values.yaml', 'charts/rayshift/crds/rayservices.rayshift.dev.yaml']) {
      expect(files).toContain(f);
    }
    // build/imports: the generated CRD types, which no published module requires since the constructs take their kinds from lib/spec.
    const strays = files.filter((f) => /^(test|bench|examples|scripts|proto|ui|imports|build\/imports|\.ci|lib|operator)\//.test(f) || /\.(ts|map)$/.test(f.replace(/\.d\.ts$/, '')) || /go\.(sum|mod)$/.test(f));
    expect(strays).toEqual([]);
  });

  test('publint and Are The Types Wrong report nothing', async () => {
    const lint = await run(ROOT, path.join(ROOT, 'node_modules', '.bin', 'publint'), ['run', pack.tarball, '--strict'], {});
    expect({ code: lint.code, output: lint.stdout + lint.stderr }).toMatchObject({ code: 0 });
    expect(lint.stdout + lint.stderr).not.toMatch(/Errors:|Warnings:|Suggestions:/);
    const attw = await run(ROOT, path.join(ROOT, 'node_modules', '.bin', 'attw'), [pack.tarball, '--format', 'json'], {});
    const analysis = JSON.parse(attw.stdout) as { analysis: { problems: unknown[]; entrypoints: Record<string, unknown> } };
    expect(analysis.analysis.problems).toEqual([]);
    expect(Object.keys(analysis.analysis.entrypoints).sort()).toEqual(['.', './operator', './package.json', './pulumi']);
    expect(attw.code).toBe(0);
  }, 300_000);
});

describe('a cdk8s app', () => {
  let baseline: string;
  let app: string;

  beforeAll(async () => {
    baseline = freshProject('cdk8s-baseline');
    app = freshProject('cdk8s');
    copyFixture('cdk8s-app', app);
    await npmInstall(baseline, CDK8S_APP_PACKAGES, node24);
    await npmInstall(app, [...CDK8S_APP_PACKAGES, pack.tarball], node24);
  }, 900_000);

  test('gains at most 25 MB and no Pulumi or Kubernetes-client package', () => {
    const added = installedBytes(path.join(app, 'node_modules')) - installedBytes(path.join(baseline, 'node_modules'));
    report.push(`cdk8s app node_modules: ${mb(installedBytes(path.join(baseline, 'node_modules')))} without rayshift, ${mb(installedBytes(path.join(app, 'node_modules')))} with it (+${mb(added)})`);
    const unwanted = ['@pulumi', '@kubernetes/client-node', '@connectrpc', 'pino', 'prom-client'].filter((p) => fs.existsSync(path.join(app, 'node_modules', p)));
    expect(unwanted).toEqual([]);
    expect(added).toBeLessThanOrEqual(MAX_ADDED_BYTES);
  });

  describe.each([24, 22] as const)('on Node %i', (major) => {
    let env: Record<string, string>;
    beforeAll(() => {
      env = { PATH: consumerPath(nodeBinDir(major, work)) };
    }, 300_000);

    test('compiles against the library types and synthesizes with cdk8s synth', async () => {
      const version = await run(app, 'node', ['--version'], env);
      expect(version.stdout).toMatch(new RegExp(`^v${major}\\.`));
      const tsc = await run(app, bin(app, 'tsc'), ['-p', '.'], env);
      expect({ code: tsc.code, out: tsc.stdout + tsc.stderr }).toEqual({ code: 0, out: '' });
      fs.rmSync(path.join(app, 'dist'), { recursive: true, force: true });
      const synth = await run(app, bin(app, 'cdk8s'), ['synth', '--no-check-upgrade'], env);
      expect({ code: synth.code, err: synth.stderr }).toMatchObject({ code: 0 });
      const docs = parseAllDocuments(fs.readFileSync(path.join(app, 'dist', 'llm.k8s.yaml'), 'utf8')).map((d) => d.toJSON() as { apiVersion: string; kind: string; metadata: { namespace?: string } });
      expect(docs.map((d) => `${d.apiVersion} ${d.kind}`).sort()).toEqual([
        'gateway.networking.k8s.io/v1 Gateway',
        'gateway.networking.k8s.io/v1 GatewayClass',
        'gateway.networking.k8s.io/v1 HTTPRoute',
        'ray.io/v1 RayService',
        'workloads.x-k8s.io/v1alpha2 CoordinatedPolicy',
        'workloads.x-k8s.io/v1alpha2 RoleBasedGroup',
      ]);
      // plan() from the package, inside the app (cdk8s synth keeps the app's stdout to itself).
      const direct = await run(app, 'node', ['main.js'], env);
      expect({ code: direct.code, out: direct.stdout }).toEqual({ code: 0, out: expect.stringMatching(/^llm upgrade: \d+ steps over \d+ s, peak 125%$/m) });
    }, 600_000);

    test('the installed rayshift bin: --version, validate and plan --json', async () => {
      const version = await run(app, bin(app, 'rayshift'), ['--version'], env);
      expect({ code: version.code, out: version.stdout.trim() }).toEqual({ code: 0, out: repoPackage.version });
      const validate = await run(app, bin(app, 'rayshift'), ['validate', 'dist/llm.k8s.yaml'], env);
      expect({ code: validate.code, err: validate.stderr }).toMatchObject({ code: 0 });
      const planned = await run(app, bin(app, 'rayshift'), ['plan', '--json', 'dist/llm.k8s.yaml'], env);
      expect(planned.code).toBe(0);
      const plans = (JSON.parse(planned.stdout) as { plans: { kind: string; name: string; peakCapacityPercent?: number }[] }).plans;
      expect(plans.map((p) => `${p.kind}/${p.name}`).sort()).toEqual(['RayService/llm', 'RoleBasedGroup/pd-inference']);
      expect(plans.find((p) => p.kind === 'RayService')?.peakCapacityPercent).toBe(125);
    }, 300_000);
  });

  test('rayshift dashboard serves its page from the installed package', async () => {
    const child = spawn(bin(app, 'rayshift'), ['dashboard', '--api-server', 'https://127.0.0.1:9', '--listen', '127.0.0.1:0'], { cwd: app, env: { ...process.env, ...node24 } });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /rayshift dashboard at (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]);
        });
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        child.on('exit', (code) => reject(new Error(`rayshift dashboard exited with ${code}: ${out}`)));
      });
      const page = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        http.get(url, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        }).on('error', reject);
      });
      expect(page.status).toBe(200);
      expect(page.body).toMatch(/<script[^>]+src="\.\/assets\/index-[\w-]+\.js"/);
    } finally {
      child.kill('SIGINT');
    }
  }, 120_000);
});

describe('a Pulumi program', () => {
  const NS = 'consumer';
  let env: OperatorEnv;
  let project: string;
  let cliEnv: Record<string, string>;
  let stackConfig: Record<string, { value: string; secret?: boolean }>;

  beforeAll(async () => {
    project = freshProject('pulumi');
    copyFixture('pulumi-app', project);
    await npmInstall(project, [pack.tarball, peer('@pulumi/pulumi'), peer('@pulumi/kubernetes'), peer('@kubernetes/client-node'), peer('typescript'), peer('@types/node')], node24);
    env = await startOperatorEnv();
    await createNamespace(env.admin, NS);
    const toolchain = pulumiToolchain();
    const home = path.join(project, '.pulumi-home');
    fs.mkdirSync(path.join(project, 'state'));
    fs.mkdirSync(home);
    cliEnv = {
      PATH: [toolchain.binDir, node24.PATH].join(path.delimiter),
      PULUMI_ROOT: toolchain.root,
      PULUMI_HOME: home,
      PULUMI_BACKEND_URL: `file://${path.join(project, 'state')}`,
      PULUMI_CONFIG_PASSPHRASE: TEST_PASSPHRASE,
      PULUMI_SKIP_UPDATE_CHECK: 'true',
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    };
    stackConfig = {
      namespace: { value: NS },
      kubeconfig: { value: fs.readFileSync(env.cp.kubeconfigPath, 'utf8'), secret: true },
      dashboardAddressTemplate: { value: env.fleet.template },
      rayClusterConfig: { value: JSON.stringify(rayClusterConfig('1')) },
      serveConfig: { value: serveConfig() },
    };
  }, 900_000);

  afterAll(async () => {
    await env?.stop();
  });

  const upWith = async (cpu: string) => {
    stackConfig.rayClusterConfig = { value: JSON.stringify(rayClusterConfig(cpu)) };
    const r = await run(project, 'node', ['run.js', JSON.stringify(stackConfig)], cliEnv);
    if (r.code !== 0) throw new Error(`node run.js failed (${r.code}):\n${r.stderr}`);
    return r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { op: string; result?: string; changes?: Record<string, number>; active?: string });
  };

  test('compiles with the tsconfig of `pulumi new typescript` (library types checked)', async () => {
    const tsc = await run(project, bin(project, 'tsc'), ['-p', '.'], node24);
    expect({ code: tsc.code, out: tsc.stdout + tsc.stderr }).toEqual({ code: 0, out: '' });
  });

  test('needs no cdk8s-cli', () => {
    expect(fs.existsSync(path.join(project, 'node_modules', 'cdk8s-cli'))).toBe(false);
    report.push(`Pulumi app node_modules: ${mb(installedBytes(path.join(project, 'node_modules')))}`);
  });

  test('preview and up create the service; an up with a new cluster spec upgrades it through the installed provider', () => env.cluster.printLogsOnFailure(async () => {
    const [preview, up] = await upWith('1');
    expect(preview).toMatchObject({ op: 'preview', changes: { create: 3 } });
    expect(up).toMatchObject({ op: 'up', result: 'succeeded', changes: { create: 3 } });
    expect(up.active).toMatch(/^fruit-\w{5}$/);
    const [, upgrade] = await upWith('2');
    expect(upgrade).toMatchObject({ op: 'up', result: 'succeeded', changes: { update: 1 } });
    expect(upgrade.active).toMatch(/^fruit-\w{5}$/);
    expect(upgrade.active).not.toBe(up.active);
    const record = await env.admin.get(KnownTypes.ConfigMap, recordName('fruit'), NS);
    expect(JSON.parse((record.data as Record<string, string>).status).engineState.activeClusterName).toBe(upgrade.active);
    const route = await env.admin.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true }, 'fruit-httproute', NS);
    expect((route.spec as { rules: { backendRefs: { name: string; weight: number }[] }[] }).rules[0].backendRefs.map((b) => [b.name, b.weight])).toEqual([[`${upgrade.active}-serve-svc`, 100]]);
    // The provider's code was loaded from the installed package: the state names its module there.
    const state = fs.readFileSync(findStackState(path.join(project, 'state')), 'utf8');
    expect(state).toContain(path.join(project, 'node_modules', 'rayshift', 'build', 'lib', 'pulumi'));
    expect(state).not.toContain(ROOT + path.sep);
  }), 900_000);

  test('the installed plugin package (rayshift/pulumi-plugin, for `pulumi package add`) serves the components\' schema', async () => {
    const entry = path.join(project, 'node_modules', 'rayshift', 'pulumi-plugin', 'index.js');
    const provider = await startPluginProvider(entry, { cwd: project, env: { ...process.env, ...node24 }, node: 'node' });
    try {
      const schema = await servedSchema(provider.port);
      expect({ name: schema.name, resources: Object.keys(schema.resources).sort() }).toEqual({
        name: 'rayshift',
        resources: ['Gateway', 'GatewayClass', 'GrpcRoute', 'HttpRoute', 'RayService', 'RoleBasedGroup'].map((c) => `rayshift:index:${c}`),
      });
    } finally {
      provider.stop();
    }
  });
});

/**
 * A command the project installed, as `npx` runs it (called directly: npx would add npm's own
 * warnings about this machine's configuration to the output).
 */
function bin(project: string, name: string): string {
  return path.join(project, 'node_modules', '.bin', name);
}

/** The file backend's checkpoint of the one stack under `stateDir`. */
function findStackState(stateDir: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.includes(`${path.sep}stacks${path.sep}`) && p.endsWith('.json')) found.push(p);
    }
  };
  walk(stateDir);
  if (found.length !== 1) throw new Error(`expected one stack checkpoint under ${stateDir}, found ${JSON.stringify(found)}`);
  return found[0];
}
