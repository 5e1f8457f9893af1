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
 * - Pulumi projects run with the `pulumi` CLI in their folders, as a user types it (`pulumi login
 *   file://…`, `stack init`, `config set`, `preview`, `up --yes`; PULUMI_CONFIG_PASSPHRASE set), the
 *   CLI and its language hosts `pulumi-language-nodejs`/`-python` built from source
 *   (`npm run pulumi:build`), on the test cluster (the real KubeRay runs the RayClusters; Serve
 *   dashboards and the Gateway status are TEST-ONLY simulations):
 *   - TypeScript (Pulumi.yaml runtime nodejs, index.ts importing `rayshift/pulumi`, compiled with the
 *     tsconfig of `pulumi new typescript`, no skipLibCheck): preview and up of an
 *     `executor: 'pulumi'` RayService, then an up that upgrades it, so the dynamic provider's
 *     serialized code runs from the installed package;
 *   - Python (runtime python, a virtualenv by `pulumi install`): `pulumi package add` of the installed
 *     plugin package generates the SDK through the language hosts, and preview and up create the
 *     same kind of service with the components served by the plugin's provider.
 *
 * Run by `npm run test:consumer` (after `npm run controlplane:build`, `npm run cluster:build` and
 * `npm run pulumi:build`); the Python part needs python3 with venv and PyPI.
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

describe('Pulumi programs, run with the pulumi CLI in their folders', () => {
  const NS = 'consumer';
  let env: OperatorEnv;
  let cliEnv: Record<string, string>;
  let kubeconfig: string;

  beforeAll(async () => {
    env = await startOperatorEnv();
    await createNamespace(env.admin, NS);
    kubeconfig = fs.readFileSync(env.cp.kubeconfigPath, 'utf8');
    const toolchain = pulumiToolchain();
    // The user's shell: the Pulumi CLI and its language hosts on PATH (a user's ~/.pulumi/bin), Node 24
    // and the machine's python3; a PULUMI_HOME of the test's own instead of the user's ~/.pulumi.
    const home = path.join(work, 'pulumi-home');
    fs.mkdirSync(home);
    cliEnv = {
      PATH: [toolchain.binDir, node24.PATH].join(path.delimiter),
      PULUMI_HOME: home,
      PULUMI_CONFIG_PASSPHRASE: TEST_PASSPHRASE,
      PULUMI_SKIP_UPDATE_CHECK: 'true',
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: 'true',
    };
    const state = path.join(work, 'pulumi-state');
    fs.mkdirSync(state);
    await pulumi(work, 'login', `file://${state}`);
  }, 900_000);

  afterAll(async () => {
    await env?.stop();
  });

  /** `pulumi ARGS…` in `project`, as typed in a shell there; throws with its output on failure. */
  async function pulumi(project: string, ...args: string[]): Promise<string> {
    const r = await run(project, 'pulumi', args, cliEnv);
    if (r.code !== 0) throw new Error(`pulumi ${args.join(' ')} in ${project} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  }

  /** A new stack `dev` of `project` with the settings of the service and `cluster` (the varying part). */
  async function initStack(project: string, cluster: [string, string]): Promise<void> {
    await pulumi(project, 'stack', 'init', 'dev');
    await pulumi(project, 'config', 'set', 'namespace', NS);
    await pulumi(project, 'config', 'set', '--secret', 'kubeconfig', kubeconfig);
    await pulumi(project, 'config', 'set', 'dashboardAddressTemplate', env.fleet.template);
    await pulumi(project, 'config', 'set', 'serveConfig', serveConfig());
    await pulumi(project, 'config', 'set', ...cluster);
  }

  /** What `preview` or `up` printed under "Resources:", e.g. `{ create: 3 }` or `{ created: 3 }`. */
  function changes(out: string): Record<string, number> {
    const block = out.slice(out.lastIndexOf('Resources:'));
    return Object.fromEntries([...block.matchAll(/^\s+[-+~]+ (\d+) (to create|to update|created|updated|to delete|deleted)$/gm)].map((m) => [m[2].replace('to ', ''), Number(m[1])]));
  }

  /** The service's active cluster as the engine's record on the cluster says it, after `up`. */
  async function recordedActive(name: string): Promise<string> {
    const record = await env.admin.get(KnownTypes.ConfigMap, recordName(name), NS);
    return JSON.parse((record.data as Record<string, string>).status).engineState.activeClusterName as string;
  }

  describe('in TypeScript, importing rayshift/pulumi', () => {
    let project: string;

    beforeAll(async () => {
      project = freshProject('pulumi');
      copyFixture('pulumi-app', project);
      await npmInstall(project, [pack.tarball, peer('@pulumi/pulumi'), peer('@pulumi/kubernetes'), peer('@kubernetes/client-node'), peer('typescript'), peer('@types/node')], node24);
    }, 900_000);

    test('compiles with the tsconfig of `pulumi new typescript` (library types checked)', async () => {
      const tsc = await run(project, bin(project, 'tsc'), ['-p', '.', '--noEmit'], node24);
      expect({ code: tsc.code, out: tsc.stdout + tsc.stderr }).toEqual({ code: 0, out: '' });
    });

    test('needs no cdk8s-cli', () => {
      expect(fs.existsSync(path.join(project, 'node_modules', 'cdk8s-cli'))).toBe(false);
      report.push(`Pulumi app node_modules: ${mb(installedBytes(path.join(project, 'node_modules')))}`);
    });

    test('pulumi preview and pulumi up create the service; an up with a new cluster spec upgrades it through the installed provider', () => env.cluster.printLogsOnFailure(async () => {
      await initStack(project, ['rayClusterConfig', JSON.stringify(rayClusterConfig('1'))]);
      const t0 = Date.now();
      expect(changes(await pulumi(project, 'preview'))).toEqual({ create: 3 });
      expect(changes(await pulumi(project, 'up', '--yes'))).toEqual({ created: 3 });
      const active = (await pulumi(project, 'stack', 'output', 'active')).trim();
      expect(active).toMatch(/^fruit-\w{5}$/);
      expect(await recordedActive('fruit')).toBe(active);
      await pulumi(project, 'config', 'set', 'rayClusterConfig', JSON.stringify(rayClusterConfig('2')));
      expect(changes(await pulumi(project, 'up', '--yes'))).toEqual({ updated: 1 });
      report.push(`TypeScript project: pulumi preview, up, up (upgrade) in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      const upgraded = (await pulumi(project, 'stack', 'output', 'active')).trim();
      expect(upgraded).toMatch(/^fruit-\w{5}$/);
      expect(upgraded).not.toBe(active);
      expect(await recordedActive('fruit')).toBe(upgraded);
      const route = await env.admin.get({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true }, 'fruit-httproute', NS);
      expect((route.spec as { rules: { backendRefs: { name: string; weight: number }[] }[] }).rules[0].backendRefs.map((b) => [b.name, b.weight])).toEqual([[`${upgraded}-serve-svc`, 100]]);
      // The provider's code was loaded from the installed package: the state names its module there.
      const state = await pulumi(project, 'stack', 'export');
      expect(state).toContain(path.join(project, 'node_modules', 'rayshift', 'build', 'lib', 'pulumi'));
      expect(state).not.toContain(ROOT + path.sep);
    }), 900_000);
  });

  describe('in Python, through `pulumi package add` of the installed plugin package', () => {
    let project: string;

    beforeAll(async () => {
      project = freshProject('pulumi-py');
      fs.rmSync(path.join(project, 'package.json'));
      copyFixture('pulumi-py-app', project);
      // The plugin package's provider runs on Node with the components and what they run on (docs/pulumi-plugin.md).
      await npmInstall(project, [pack.tarball, peer('@pulumi/pulumi'), peer('@pulumi/kubernetes'), peer('@kubernetes/client-node')], node24);
      await pulumi(project, 'install');
      await pulumi(project, 'package', 'add', './node_modules/rayshift/pulumi-plugin');
    }, 900_000);

    test('pulumi package add generated the SDK and put it in the project', () => {
      const yaml = fs.readFileSync(path.join(project, 'Pulumi.yaml'), 'utf8');
      expect(yaml).toMatch(/packages:\s+rayshift: \.\/node_modules\/rayshift\/pulumi-plugin/);
      expect(fs.existsSync(path.join(project, 'sdks', 'rayshift'))).toBe(true);
    });

    test('pulumi preview and pulumi up create the service', () => env.cluster.printLogsOnFailure(async () => {
      await initStack(project, ['cpu', '1']);
      const t0 = Date.now();
      expect(changes(await pulumi(project, 'preview'))).toMatchObject({ create: expect.any(Number) });
      const up = changes(await pulumi(project, 'up', '--yes'));
      report.push(`Python project: pulumi preview, up in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      expect(up.created).toBeGreaterThanOrEqual(3);
      const active = (await pulumi(project, 'stack', 'output', 'active')).trim();
      expect(active).toMatch(/^fruit-py-\w{5}$/);
      expect(await recordedActive('fruit-py')).toBe(active);
    }), 900_000);
  });
});

/**
 * A command the project installed, as `npx` runs it (called directly: npx would add npm's own
 * warnings about this machine's configuration to the output).
 */
function bin(project: string, name: string): string {
  return path.join(project, 'node_modules', '.bin', name);
}
