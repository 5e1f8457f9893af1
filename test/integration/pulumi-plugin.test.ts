/**
 * The rayshift Pulumi plugin package from Python, with the real Pulumi CLI (built from Go modules)
 * and Pulumi's Python SDK from PyPI: test/python/pulumi/program.py uses the SDK generated from the
 * package's schema (`scripts/build-pulumi-sdk.sh`, Pulumi's own Python code generator), and the CLI
 * asks the plugin's provider (`pulumi-plugin/index.js`, run here and attached with
 * `PULUMI_DEBUG_PROVIDERS`, as Pulumi's Node.js language host would start it) to construct each
 * component. The same program in TypeScript, with the components in-process, must preview the same
 * resources with the same Kubernetes objects, and the same bad options must fail with the same
 * problems.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EngineEvent } from '@pulumi/pulumi/automation';
import { Gateway, GatewayClass, GrpcRoute, HttpRoute, RayService, RoleBasedGroup } from '../../lib/pulumi';
import { RayClusterConfig } from '../../lib/spec/raycluster';
import { projectRoot } from '../../lib/crds/resolve';
import { startPulumiStack } from '../support/pulumi';
import { PluginPython, ProgramRunResult, startPluginPython, withoutProviders } from '../support/pulumi-plugin';

let work: string;
let python: PluginPython;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-plugin-'));
  python = await startPluginPython(work);
}, 300_000);

afterAll(() => {
  python?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** program.py's pod template and RayCluster, in TypeScript. */
const sglang = (role: string) => ({
  metadata: { labels: { app: role } },
  spec: { containers: [{ name: role, image: 'lmsysorg/sglang:v0.5.5', resources: { limits: { 'nvidia.com/gpu': '1' } } }] },
});
function rayCluster(cpu: string): RayClusterConfig {
  const container = { name: 'ray', image: 'rayproject/ray:2.52.0', resources: { limits: { cpu, memory: '2Gi' } } };
  return {
    rayVersion: '2.52.0',
    enableInTreeAutoscaling: true,
    headGroupSpec: { rayStartParams: {}, template: { spec: { containers: [container] } } },
    workerGroupSpecs: [{ groupName: 'cpu', replicas: 1, minReplicas: 1, maxReplicas: 4, rayStartParams: {}, template: { spec: { containers: [{ ...container, name: 'ray-worker' }] } } }],
  };
}

/**
 * The TypeScript twin of program.py (same names, same props), the components in-process. With
 * `bad`, the component's error is kept in `rejected` (thrown out of an inline program, it would
 * reach Jest, not the preview's result).
 */
function typescriptProgram(bad: boolean, rejected: string[] = []) {
  return async () => {
    if (bad) {
      try {
        new RayService('llm', {
          metadata: { name: 'llm', namespace: 'serving' },
          rayClusterConfig: rayCluster('1'),
          serveConfig: { applications: [{ name: 'a', importPath: 'not a path' }] },
          upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { maxSurgePercent: 0, stepSizePercent: 150, intervalSeconds: 0, gatewayClassName: 'traefik' } },
        });
      } catch (error) {
        rejected.push(String(error));
      }
      return {};
    }
    new GatewayClass('gwc', { metadata: { name: 'traefik' }, controllerName: 'traefik.io/gateway-controller' });
    const gw = new Gateway('gw', {
      metadata: { name: 'shared', namespace: 'serving' },
      gatewayClass: 'traefik',
      listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }, { name: 'grpc', protocol: 'HTTP', port: 9000 }],
    });
    const route = new HttpRoute(
      'route',
      {
        metadata: { name: 'chat', namespace: 'serving' },
        parents: [{ name: 'shared', namespace: 'serving' }],
        hostnames: ['chat.example.com'],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/v1' } }], backendRefs: [{ name: 'llm-a-serve-svc', port: 8000, weight: 90 }, { name: 'llm-b-serve-svc', port: 8000, weight: 10 }] }],
      },
      { dependsOn: [gw] },
    );
    new GrpcRoute('grpc', {
      metadata: { name: 'embed', namespace: 'serving' },
      parents: [{ name: 'shared', namespace: 'serving', sectionName: 'grpc' }],
      rules: [{ matches: [{ method: { service: 'embedder.Embedder' } }], backendRefs: [{ name: 'llm-a-serve-svc', port: 9000, weight: 100 }] }],
    });
    const service = new RayService('llm', {
      metadata: { name: 'llm', namespace: 'serving' },
      rayClusterConfig: rayCluster('1'),
      serveConfig: { applications: [{ name: 'chat', importPath: 'app:deployment', routePrefix: '/' }] },
      upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 30, gatewayClassName: 'traefik' } },
      executor: 'operator',
    });
    const group = new RoleBasedGroup('pd', {
      metadata: { name: 'pd', namespace: 'serving' },
      roles: [
        { name: 'prefill', replicas: 4, template: sglang('prefill') },
        { name: 'decode', replicas: 2, template: sglang('decode') },
      ],
      coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%', maxUnavailable: 1 } }],
    });
    return { route: route.routeName, service: service.serviceName, executor: service.executor, group: group.groupName };
  };
}

/** Previews the TypeScript twin on a fresh stack of the same project and stack names. */
async function previewTypeScript(bad = false): Promise<ProgramRunResult> {
  const rejected: string[] = [];
  const stack = await startPulumiStack({ projectName: 'plugin', stackName: 'test', program: typescriptProgram(bad, rejected) });
  const urns: string[] = [];
  const objects: Record<string, unknown> = {};
  const onEvent = (e: EngineEvent) => {
    const metadata = e.resourcePreEvent?.metadata;
    if (metadata === undefined) return;
    urns.push(metadata.urn);
    if (metadata.type.startsWith('kubernetes:') && metadata.new) objects[metadata.urn] = metadata.new.inputs;
  };
  try {
    await stack.stack.preview({ onEvent });
    return rejected.length > 0 ? { error: rejected.join('\n') } : { urns: withoutProviders(urns), objects };
  } finally {
    await stack.dispose();
  }
}

/** The model's problem lines in an error (`- RayService/llm: <field>: <message>`). */
function problems(error: string | undefined): string[] {
  return [...new Set((error ?? '').split(/\\n|\n/).map((l) => l.trim()).filter((l) => /^- \w+\/[\w.-]+: /.test(l)))].sort();
}

describe('the rayshift plugin package from a Python program', () => {
  test('previews the same resources as its TypeScript twin: every component and the children it renders, with the same objects', async () => {
    const fromPython = await python.run(fs.mkdtempSync(path.join(work, 'py-')), 'preview', 'all');
    expect(fromPython.error).toBeUndefined();
    const fromTypeScript = await previewTypeScript();
    expect(fromPython.urns).toEqual(fromTypeScript.urns);
    // The Kubernetes objects rendered from the Python program's props are the TypeScript ones.
    expect(Object.keys(fromPython.objects!).length).toBe(7); // with the group's CoordinatedPolicy
    expect(fromPython.objects).toEqual(fromTypeScript.objects);
    const rayService = Object.entries(fromPython.objects!).find(([urn]) => urn.endsWith('::llm-rayservice'))![1] as { spec: Record<string, any> };
    expect(rayService.spec.upgradeStrategy.clusterUpgradeOptions).toEqual({ maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 30, gatewayClassName: 'traefik' });
    expect(rayService.spec.serveConfigV2).toBe('applications:\n- name: chat\n  route_prefix: /\n  import_path: app:deployment\n');
    const types = new Set(fromPython.urns!.map((u) => u.split('::')[2]));
    for (const t of ['GatewayClass', 'Gateway', 'HttpRoute', 'GrpcRoute', 'RayService', 'RoleBasedGroup']) {
      expect(types).toContain(`rayshift:index:${t}`);
    }
    expect(types).toContain('rayshift:index:RoleBasedGroup$kubernetes:workloads.x-k8s.io/v1alpha2:CoordinatedPolicy');
    expect(types).toContain('rayshift:index:RayService$kubernetes:rayshift.dev/v1alpha1:RayService');
  }, 300_000);

  test('bad options fail the preview with the model\'s problems, each naming its field, the same as in TypeScript', async () => {
    const fromPython = await python.run(fs.mkdtempSync(path.join(work, 'py-')), 'preview', 'bad');
    const fromTypeScript = await previewTypeScript(true);
    const expected = problems(fromTypeScript.error);
    expect(expected.length).toBeGreaterThanOrEqual(4);
    expect(problems(fromPython.error)).toEqual(expected);
    expect(expected.join('\n')).toMatch(/stepSizePercent/);
  }, 300_000);

  test('the Python program of docs/pulumi-plugin.md previews its GatewayClass and its RayService run by executor pulumi', async () => {
    const doc = fs.readFileSync(path.join(projectRoot(), 'docs', 'pulumi-plugin.md'), 'utf8');
    const blocks = [...doc.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toHaveLength(1);
    const file = path.join(work, 'doc-program.py');
    fs.writeFileSync(file, blocks[0]);
    const result = await python.run(fs.mkdtempSync(path.join(work, 'py-')), 'preview', 'file', { RAYSHIFT_PROGRAM_FILE: file });
    expect(result.error).toBeUndefined();
    expect(result.urns!.map((u) => u.split('::').slice(2).join('::'))).toEqual(
      expect.arrayContaining(['rayshift:index:GatewayClass::gwc', 'rayshift:index:RayService::llm', 'rayshift:index:RayService$pulumi-nodejs:dynamic/rayshift:RayServiceMigration::llm-migration']),
    );
  }, 300_000);
});
