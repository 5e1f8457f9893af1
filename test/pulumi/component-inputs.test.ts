/**
 * Component props given as `pulumi.Input`s: another resource's output (an autonamed Namespace's
 * name, which exists only once the mock provider has created it) flows into a RayService and a
 * RoleBasedGroup, whose children carry the resolved value; a problem in an output-valued spec
 * fails the component naming the field, as a plain value does at construction.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as path from 'node:path';
import * as k8s from '@pulumi/kubernetes';
import * as pulumi from '@pulumi/pulumi';
import { AUTONAME_SUFFIX, INCREMENTAL, SERVE, clusterSpec, installMocks, registered, reset, settle, valueOf } from './mocks';

installMocks();

import { RayClusterSpecBuilder } from '../../lib/cdk8s';
import { Gateway, HttpRoute, RayService, RoleBasedGroup } from '../../lib/pulumi';

beforeEach(reset);

const byType = (type: string) => registered.filter((r) => r.type === type);

/**
 * Runs test/pulumi/invalid-input-program.ts with `which` component: its exit code, its error
 * output and the resource types it registered.
 */
async function runInvalid(which: 'rayservice' | 'rolebasedgroup'): Promise<{ code: number | null; stderr: string; types: string[] }> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'invalid-input-program.ts'), which], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr, types: JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as string[] };
}

describe('RayService', () => {
  test('the namespace of an autonamed Namespace and a Gateway component\'s name reach the RayService object and its follower', async () => {
    const ns = new k8s.core.v1.Namespace('team', {});
    const gateway = new Gateway('shared', { gatewayClass: 'simulated', metadata: { namespace: 'gateways' }, listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] });
    const svc = new RayService('llm', {
      executor: 'operator',
      metadata: ns.metadata.name.apply((namespace) => ({ namespace, labels: { team: namespace } })),
      rayClusterConfig: clusterSpec(),
      serveConfig: SERVE,
      upgradeStrategy: INCREMENTAL,
      rayshift: pulumi.output({ gatewayRef: { name: gateway.gatewayName, namespace: 'gateways' } }),
    });
    await settle(svc, svc.resource, svc.progress!);
    expect(await valueOf(svc.namespace)).toBe(`team${AUTONAME_SUFFIX}`);
    expect(await valueOf(svc.serviceName)).toBe('llm');
    const [cr] = byType('kubernetes:rayshift.dev/v1alpha1:RayService');
    expect(cr.name).toBe('llm-rayservice');
    expect(cr.inputs.metadata).toMatchObject({ name: 'llm', namespace: 'team-x7k2p', labels: { team: 'team-x7k2p' }, annotations: { 'pulumi.com/waitFor': 'condition=Ready' } });
    expect(cr.inputs.spec.rayshift).toEqual({ gatewayRef: { name: 'shared', namespace: 'gateways' } });
    const [progress] = byType('pulumi-nodejs:dynamic/rayshift:UpgradeProgress');
    expect(progress.inputs).toMatchObject({ apiVersion: 'rayshift.dev/v1alpha1', name: 'llm', namespace: 'team-x7k2p' });
  });

  test('the RayService object depends on the Namespace its namespace came from (the resources Pulumi records as its dependencies)', async () => {
    const ns = new k8s.core.v1.Namespace('deps', {});
    const props = new Map<string, Record<string, unknown>>();
    const transformations: pulumi.ResourceTransformation[] = [(a) => void props.set(a.name, a.props)];
    const svc = new RayService('llm', { metadata: ns.metadata.name.apply((namespace) => ({ namespace })), rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: INCREMENTAL }, { transformations });
    await settle(svc, svc.resource, svc.progress!);
    const dependencies = (value: unknown) => (value as { allResources(): Promise<Set<pulumi.Resource>> }).allResources();
    const child = props.get('llm-rayservice')!;
    expect([...(await dependencies(child.metadata))]).toEqual([ns]);
    expect([...(await dependencies(child.spec))]).toEqual([ns]);
  });

  test('a cluster builder made from an output keeps its methods: the spec it renders carries the resolved image', async () => {
    const image = pulumi.output(Promise.resolve('rayproject/ray:2.53.0'));
    const svc = new RayService('llm', {
      rayClusterConfig: image.apply((tag) => new RayClusterSpecBuilder({ image: tag, head: { resources: { cpu: '1', memory: '2Gi' } }, workerGroups: [{ groupName: 'cpu', minReplicas: 1, maxReplicas: 2, resources: { cpu: '1', memory: '2Gi' } }] })),
      serveConfig: SERVE,
      upgradeStrategy: INCREMENTAL,
    });
    await settle(svc, svc.resource, svc.progress!);
    const [cr] = byType('kubernetes:ray.io/v1:RayService');
    const cluster = cr.inputs.spec.rayClusterConfig;
    // The builder turns the autoscaler on for an incremental upgrade: only the builder, not a copy of its fields, does.
    expect(cluster.enableInTreeAutoscaling).toBe(true);
    expect([cluster.headGroupSpec, ...cluster.workerGroupSpecs].map((g: any) => g.template.spec.containers[0].image)).toEqual(['rayproject/ray:2.53.0', 'rayproject/ray:2.53.0']);
  });

  test('executor pulumi: the migration gets the resolved namespace, spec and labels', async () => {
    const ns = new k8s.core.v1.Namespace('serving', {});
    const svc = new RayService('llm', {
      executor: 'pulumi',
      metadata: ns.metadata.name.apply((namespace) => ({ namespace, labels: { tier: 'gpu' } })),
      rayClusterConfig: Promise.resolve(clusterSpec('2')),
      serveConfig: pulumi.output(SERVE),
      upgradeStrategy: INCREMENTAL,
    });
    await settle(svc, svc.migration!);
    expect(registered.filter((r) => r.type.startsWith('kubernetes:ray') || r.type.startsWith('kubernetes:rayshift'))).toEqual([]);
    const [migration] = byType('pulumi-nodejs:dynamic/rayshift:RayServiceMigration');
    expect(migration.inputs).toMatchObject({ name: 'llm', namespace: 'serving-x7k2p', labels: { tier: 'gpu' } });
    expect(migration.inputs.spec.serveConfigV2).toBe(SERVE);
    expect(migration.inputs.spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources).toEqual({ requests: { cpu: '2' } });
  });

  test('a problem in an output-valued spec fails the program naming the field, and no RayService object is created', async () => {
    // In a process of its own: the failed registrations end it as they end a Pulumi program.
    const run = await runInvalid('rayservice');
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/invalid rayshift resource \(1 problem\):\n\s*- RayService\/llm: .*stepSizePercent: must be an integer from 1 to 100; got 0/);
    expect(run.types).toContain('rayshift:index:RayService');
    expect(run.types.filter((t) => t.startsWith('kubernetes:'))).toEqual([]);
  }, 60_000);
});

describe('RoleBasedGroup', () => {
  const roles = (image: string) => ['prefill', 'decode'].map((name) => ({ name, replicas: 4, template: { spec: { containers: [{ name, image }] } } }));
  const coordination = [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%' } }];

  test('the namespace of an autonamed Namespace and output-valued roles reach the group, its policy and its rollout', async () => {
    const ns = new k8s.core.v1.Namespace('inference', {});
    const image = pulumi.output(Promise.resolve('registry.example/vllm:0.9.1'));
    const metadata = ns.metadata.name.apply((namespace) => ({ namespace }));
    const rbg = new RoleBasedGroup('pd', { roles: image.apply(roles), coordination, metadata });
    await settle(rbg, rbg.group, rbg.policy);
    const [group] = byType('kubernetes:workloads.x-k8s.io/v1alpha2:RoleBasedGroup');
    expect(group.inputs.metadata).toMatchObject({ name: 'pd', namespace: 'inference-x7k2p' });
    expect(group.inputs.spec.roles.map((r: any) => r.standalonePattern.template.spec.containers[0].image)).toEqual(['registry.example/vllm:0.9.1', 'registry.example/vllm:0.9.1']);
    const [policy] = byType('kubernetes:workloads.x-k8s.io/v1alpha2:CoordinatedPolicy');
    expect(policy.inputs.metadata).toMatchObject({ name: 'pd', namespace: 'inference-x7k2p' });

    reset();
    const pulumiRun = new RoleBasedGroup('pd-run', { roles: image.apply(roles), coordination, metadata, executor: 'pulumi' });
    await settle(pulumiRun, pulumiRun.group, pulumiRun.rollout!);
    const [rollout] = byType('pulumi-nodejs:dynamic/rayshift:RoleBasedGroupRollout');
    expect(rollout.inputs).toMatchObject({ name: 'pd-run', namespace: 'inference-x7k2p', apiVersion: 'workloads.x-k8s.io/v1alpha2' });
  });

  test('a problem in output-valued roles fails the program naming the field, and no group is created', async () => {
    const run = await runInvalid('rolebasedgroup');
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/invalid rayshift resource \(1 problem\):\n\s*- RoleBasedGroup\/pd: spec\.roles\[0\]\.replicas: must be an integer/);
    expect(run.types).toEqual(['rayshift:index:RoleBasedGroup']);
  }, 60_000);
});

describe('Gateway API components', () => {
  test('a Gateway in an autonamed Namespace: its route\'s parentRef carries the resolved namespace; a reference\'s listener may be an output', async () => {
    const ns = new k8s.core.v1.Namespace('edge', {});
    const gw = new Gateway('shared', { gatewayClass: pulumi.output('traefik'), metadata: ns.metadata.name.apply((namespace) => ({ namespace })) });
    const listener = pulumi.output(Promise.resolve('https'));
    const route = new HttpRoute('llm-route', {
      parents: [gw, listener.apply((sectionName) => ({ name: 'other', namespace: 'gateways', sectionName }))],
      rules: [{ backendRefs: [{ name: 'llm-serve-svc', port: 8000, weight: 100 }] }],
    });
    await settle(gw, route, gw.resource, route.resource);
    expect(await valueOf(gw.namespace)).toBe('edge-x7k2p');
    expect(byType('kubernetes:gateway.networking.k8s.io/v1:Gateway')[0].inputs).toMatchObject({ metadata: { name: 'shared', namespace: 'edge-x7k2p' }, spec: { gatewayClassName: 'traefik' } });
    const [r] = byType('kubernetes:gateway.networking.k8s.io/v1:HTTPRoute');
    expect(r.inputs.spec.parentRefs).toEqual([
      { name: 'shared', namespace: 'edge-x7k2p' },
      { name: 'other', namespace: 'gateways', sectionName: 'https' },
    ]);
  });
});
