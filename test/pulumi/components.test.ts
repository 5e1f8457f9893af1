/**
 * The Pulumi components under `pulumi.runtime.setMocks`: children and their names, the model's
 * validation failing the component with every problem listed, route ownership, and the dynamic
 * resources' providers serializing (the dynamic Resource constructor serializes under mocks) into
 * code that calls their operations module's functions by method name.
 */
import * as path from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { INCREMENTAL, SERVE, clusterSpec, installMocks, registered, reset, settle, valueOf } from './mocks';

installMocks();

import { Gateway, GatewayClass, GrpcRoute, HttpRoute, RayService, RoleBasedGroup } from '../../lib/pulumi';

beforeEach(reset);

const byType = (type: string) => registered.filter((r) => r.type === type);

describe('RayService', () => {
  test('executor kuberay: a ray.io/v1 RayService awaited for Ready, and an UpgradeProgress follower', async () => {
    const svc = new RayService('llm', { metadata: { namespace: 'serving' }, rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: INCREMENTAL, deadlineSeconds: 900 });
    await settle(svc, svc.resource!, svc.progress!);
    expect(byType('rayshift:index:RayService').map((r) => r.name)).toEqual(['llm']);
    const [cr] = byType('kubernetes:ray.io/v1:RayService');
    expect(cr.name).toBe('llm-rayservice');
    expect(cr.inputs.metadata).toMatchObject({ name: 'llm', namespace: 'serving', annotations: { 'pulumi.com/waitFor': 'condition=Ready', 'pulumi.com/timeoutSeconds': '900' } });
    expect(cr.inputs.spec.upgradeStrategy).toEqual(INCREMENTAL);
    const [progress] = byType('pulumi-nodejs:dynamic/rayshift:UpgradeProgress');
    expect(progress.name).toBe('llm-progress');
    expect(progress.inputs).toMatchObject({ apiVersion: 'ray.io/v1', name: 'llm', namespace: 'serving', deadlineSeconds: 900 });
    expect(progress.inputs.goalSpecHash).toMatch(/^[0-9A-Z]{8,}$/);
    expect(typeof progress.inputs.__provider).toBe('string');
  });

  test('executor operator: the rayshift.dev object with its extensions, awaited the same way', async () => {
    const svc = new RayService('llm', {
      executor: 'operator',
      rayClusterConfig: clusterSpec(),
      serveConfig: SERVE,
      upgradeStrategy: INCREMENTAL,
      rayshift: { gatewayRef: { name: 'shared' } },
    });
    await settle(svc, svc.resource!, svc.progress!);
    const [cr] = byType('kubernetes:rayshift.dev/v1alpha1:RayService');
    expect(cr.inputs.metadata.annotations).toEqual({ 'pulumi.com/waitFor': 'condition=Ready' });
    expect(cr.inputs.spec.rayshift).toEqual({ gatewayRef: { name: 'shared' } });
    expect(byType('pulumi-nodejs:dynamic/rayshift:UpgradeProgress')[0].inputs.apiVersion).toBe('rayshift.dev/v1alpha1');
  });

  test('executor pulumi: no RayService object, one RayServiceMigration whose provider serializes without the kubeconfig', async () => {
    const kubeconfig = 'apiVersion: v1\nkind: Config\n# secret-token-abc123\n';
    const svc = new RayService('llm', {
      executor: 'pulumi',
      metadata: { namespace: 'serving', labels: { team: 'ml' } },
      rayClusterConfig: clusterSpec(),
      serveConfig: SERVE,
      upgradeStrategy: INCREMENTAL,
      rayshift: { routeKind: 'HTTP' },
      kubeconfig,
      dashboardAddressTemplate: 'http://127.0.0.1:9/{namespace}/{cluster}',
      deadlineSeconds: 120,
      onDeadline: 'pause',
    });
    await settle(svc, svc.migration!);
    expect(registered.filter((r) => r.type.startsWith('kubernetes:'))).toEqual([]);
    const [migration] = byType('pulumi-nodejs:dynamic/rayshift:RayServiceMigration');
    expect(migration.name).toBe('llm-migration');
    expect(migration.inputs).toMatchObject({
      name: 'llm',
      namespace: 'serving',
      labels: { team: 'ml' },
      dashboardAddressTemplate: 'http://127.0.0.1:9/{namespace}/{cluster}',
      deadlineSeconds: 120,
      onDeadline: 'pause',
      capacityPollMs: 1000,
    });
    expect(migration.inputs.spec.rayshift).toEqual({ routeKind: 'HTTP' });
    expect(migration.inputs.spec.serveConfigV2).toBe(SERVE);
    const provider = migration.inputs.__provider as string;
    expect(provider).toContain('migration-operations');
    expect(provider).not.toContain('secret-token-abc123');
    expect(await valueOf(svc.migration!.recordName)).toBeUndefined(); // computed by the provider, unknown to mocks
  });

  test('capacityPolicy shrinkFirst flows through both rayshift executors; maxSurgePercent 100 with it fails the component, naming the range', async () => {
    const zeroSurge = { type: 'NewClusterWithIncrementalUpgrade' as const, clusterUpgradeOptions: { ...INCREMENTAL.clusterUpgradeOptions, maxSurgePercent: 25, stepSizePercent: 25 } };
    const op = new RayService('llm', { executor: 'operator', rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: zeroSurge, rayshift: { capacityPolicy: 'shrinkFirst' } });
    const pl = new RayService('chat', { executor: 'pulumi', rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: zeroSurge, rayshift: { capacityPolicy: 'shrinkFirst' }, kubeconfig: 'apiVersion: v1\nkind: Config\n' });
    await settle(op, op.resource!, pl, pl.migration!);
    expect(byType('kubernetes:rayshift.dev/v1alpha1:RayService')[0].inputs.spec.rayshift).toEqual({ capacityPolicy: 'shrinkFirst' });
    expect(byType('pulumi-nodejs:dynamic/rayshift:RayServiceMigration')[0].inputs.spec.rayshift).toEqual({ capacityPolicy: 'shrinkFirst' });
    const full = { ...zeroSurge, clusterUpgradeOptions: { ...zeroSurge.clusterUpgradeOptions, maxSurgePercent: 100 } };
    expect(() => new RayService('bad', { executor: 'pulumi', rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: full, rayshift: { capacityPolicy: 'shrinkFirst' } }))
      .toThrow(/maxSurgePercent: is 100 with capacityPolicy shrinkFirst.*must be an integer from 1 to 99/);
  });

  test('every validation problem of the model fails the component at once', () => {
    const bad = () =>
      new RayService('llm', {
        executor: 'pulumi',
        rayClusterConfig: clusterSpec(),
        serveConfig: SERVE,
        upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { maxSurgePercent: 50, stepSizePercent: 0, intervalSeconds: 0, gatewayClassName: 'simulated' } },
      });
    expect(bad).toThrow(pulumi.ResourceError);
    expect(bad).toThrow(/\(2 problems\):\n.*stepSizePercent: must be an integer from 1 to 100; got 0.*\n.*intervalSeconds: must be an integer/);
  });

  test('rayshift extensions are rejected for executor kuberay, as in the construct', () => {
    expect(() => new RayService('llm', { rayClusterConfig: clusterSpec(), serveConfig: SERVE, rayshift: { paused: true } })).toThrow(/spec\.rayshift: rayshift extensions need apiVersion/);
  });
});

describe('Gateway API components', () => {
  test('GatewayClass, Gateway and HttpRoute chain by name and dependency', async () => {
    const cls = new GatewayClass('traefik', { controllerName: 'traefik.io/gateway-controller' });
    const gw = new Gateway('shared', { metadata: { namespace: 'gateways' }, gatewayClass: cls });
    const route = new HttpRoute('llm-route', {
      metadata: { namespace: 'serving' },
      parents: [gw],
      rules: [{ backendRefs: [{ name: 'llm-serve-svc', port: 8000, weight: 100 }] }],
    });
    await settle(cls, gw, route, cls.resource, gw.resource, route.resource);
    expect(byType('kubernetes:gateway.networking.k8s.io/v1:GatewayClass')[0]).toMatchObject({ name: 'traefik-gatewayclass', inputs: { spec: { controllerName: 'traefik.io/gateway-controller' } } });
    expect(byType('kubernetes:gateway.networking.k8s.io/v1:Gateway')[0].inputs.spec).toEqual({ gatewayClassName: 'traefik', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] });
    const [r] = byType('kubernetes:gateway.networking.k8s.io/v1:HTTPRoute');
    expect(r.name).toBe('llm-route-httproute');
    expect(r.inputs.spec.parentRefs).toEqual([{ name: 'shared', namespace: 'gateways' }]);
    expect(byType('rayshift:index:HttpRoute').map((x) => x.name)).toEqual(['llm-route']);
  });

  test('a route whose weights a migration owns ignores spec.rules; one Pulumi owns does not', async () => {
    const rules = [{ backendRefs: [{ name: 'grpc-abcde-serve-svc', port: 9000, weight: 100 }] }];
    const ignored = new Map<string, string[] | undefined>();
    const transformations: pulumi.ResourceTransformation[] = [(a) => void ignored.set(a.name, a.opts.ignoreChanges)];
    const owned = new GrpcRoute('grpc', { parents: [{ name: 'shared' }], rules, weightsOwnedByMigration: true }, { transformations });
    const plain = new GrpcRoute('plain', { parents: [{ name: 'shared' }], rules }, { transformations });
    await settle(owned, plain, owned.resource, plain.resource);
    expect(byType('kubernetes:gateway.networking.k8s.io/v1:GRPCRoute').map((r) => r.name)).toEqual(['grpc-grpcroute', 'plain-grpcroute']);
    expect(ignored.get('grpc-grpcroute')).toEqual(['spec.rules']);
    expect(ignored.get('plain-grpcroute')).toBeUndefined();
  });

  test('a route without parents (a JavaScript caller) fails naming the prop, not with a TypeError', () => {
    const args = { rules: [{ backendRefs: [{ name: 'x', port: 9000 }] }] } as unknown as ConstructorParameters<typeof GrpcRoute>[1];
    expect(() => new GrpcRoute('no-parents', args)).toThrow(/parents: is required: the Gateways/);
  });

  test('a Gateway without its class (a JavaScript caller) fails naming it, not with a TypeError', () => {
    const args = { listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }] } as unknown as ConstructorParameters<typeof Gateway>[1];
    expect(() => new Gateway('no-class', args)).toThrow(/Gateway\/no-class: spec\.gatewayClassName: is required; got unset/);
  });

  test('a RoleBasedGroup whose AffinityScheduling rule has no ratios, under executor operator (a JavaScript caller), fails naming them', () => {
    const roles = ['prefill', 'decode'].map((name) => ({ name, replicas: 2, template: { spec: { containers: [{ name, image: 'vllm:1' }] } } }));
    const args = { executor: 'operator', roles, coordination: [{ name: 'pd', roles: ['prefill', 'decode'], affinityScheduling: {} }] } as unknown as ConstructorParameters<typeof RoleBasedGroup>[1];
    expect(() => new RoleBasedGroup('no-ratios', args)).toThrow(/spec\.coordination\[0\]\.affinityScheduling\.ratios: must map every role of the rule to its pods per batch; got unset/);
  });

  test('route validation problems fail the component', () => {
    expect(() => new HttpRoute('bad', { parents: [{ name: 'Not_A_Name' }], rules: [{ backendRefs: [{ name: 'x', port: 0, weight: -1 }] }] })).toThrow(
      /\(3 problems\):\n.*spec\.parentRefs\[0\]\.name: must name a Gateway.*\n.*backendRefs\[0\]\.port: must be an integer from 1 to 65535.*\n.*backendRefs\[0\]\.weight: must be an integer from 0/,
    );
  });
});

describe('RoleBasedGroup', () => {
  const roles = ['prefill', 'decode'].map((name) => ({ name, replicas: 4, template: { spec: { containers: [{ name, image: 'vllm:1' }] } } }));
  const coordination = [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%' } }];

  test('executor rbg on v1alpha2: the group and a CoordinatedPolicy named after it', async () => {
    const group = new RoleBasedGroup('pd', { roles, coordination });
    await settle(group, group.group, group.policy);
    expect(byType('kubernetes:workloads.x-k8s.io/v1alpha2:RoleBasedGroup').map((r) => r.name)).toEqual(['pd-rolebasedgroup']);
    const [policy] = byType('kubernetes:workloads.x-k8s.io/v1alpha2:CoordinatedPolicy');
    expect(policy.name).toBe('pd-coordinatedpolicy');
    expect(policy.inputs.metadata.name).toBe('pd');
  });

  test('executor operator: no policy; the rules ride on the group for the operator', async () => {
    const group = new RoleBasedGroup('pd', { roles, coordination, executor: 'operator' });
    await settle(group, group.group);
    expect(await valueOf(group.policy)).toBeUndefined();
    const [g] = byType('kubernetes:workloads.x-k8s.io/v1alpha2:RoleBasedGroup');
    expect(g.inputs.metadata.labels).toEqual({ 'rayshift.dev/coordination-executor': 'operator' });
  });

  test('executor pulumi: the group with rayshift coordination, and a RoleBasedGroupRollout that serializes', async () => {
    const group = new RoleBasedGroup('pd', { roles, coordination, executor: 'pulumi', metadata: { namespace: 'serving' }, deadlineSeconds: 600 });
    await settle(group, group.group, group.rollout!);
    expect(await valueOf(group.policy)).toBeUndefined();
    expect(byType('kubernetes:workloads.x-k8s.io/v1alpha2:RoleBasedGroup')[0].inputs.metadata.labels).toEqual({ 'rayshift.dev/coordination-executor': 'pulumi' });
    const [rollout] = byType('pulumi-nodejs:dynamic/rayshift:RoleBasedGroupRollout');
    expect(rollout.name).toBe('pd-rollout');
    expect(rollout.inputs).toMatchObject({ apiVersion: 'workloads.x-k8s.io/v1alpha2', name: 'pd', namespace: 'serving', deadlineSeconds: 600, pollMs: 1000 });
    expect(rollout.inputs.specHash).toMatch(/^[0-9a-f]{16}$/);
    expect(rollout.inputs.__provider).toContain('rbg-rollout-operations');
  });

  test('a template change changes the rollout input that triggers an update', async () => {
    const hashOf = async (image: string) => {
      reset();
      const g = new RoleBasedGroup('pd', { roles: roles.map((r) => ({ ...r, template: { spec: { containers: [{ name: r.name, image }] } } })), coordination, executor: 'pulumi' });
      await settle(g, g.rollout!);
      return byType('pulumi-nodejs:dynamic/rayshift:RoleBasedGroupRollout')[0].inputs.specHash as string;
    };
    expect(await hashOf('vllm:1')).toBe(await hashOf('vllm:1'));
    expect(await hashOf('vllm:2')).not.toBe(await hashOf('vllm:1'));
  });

  test('model problems of roles and rules are all listed, each once (by the group, not again by its CoordinatedPolicy)', () => {
    expect(() => new RoleBasedGroup('pd', { roles, coordination: [{ name: 'pd', roles: ['prefill', 'nope'], rollingUpdate: { maxSkew: '250%' } }] })).toThrow(
      /\(2 problems\):\n.*RoleBasedGroup\/pd: spec\.coordination\[0\]\.roles\[1\]: "nope" is not a role.*\n.*RoleBasedGroup\/pd: spec\.coordination\[0\]\.rollingUpdate\.maxSkew: "250%" is outside[^\n]*$/,
    );
  });
});

describe('dynamic providers', () => {
  const kubeconfig = 'apiVersion: v1\nkind: Config\n# secret-token-abc123\n';
  const roles = ['prefill', 'decode'].map((name) => ({ name, replicas: 4, template: { spec: { containers: [{ name, image: 'vllm:1' }] } } }));
  const coordination = [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%' } }];
  const cases: { type: string; module: string; optional: string[]; build: () => pulumi.Resource }[] = [
    { type: 'RayServiceMigration', module: 'migration-operations', optional: ['read', 'delete'], build: () => new RayService('llm', { executor: 'pulumi', rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: INCREMENTAL, kubeconfig }).migration! },
    { type: 'UpgradeProgress', module: 'upgrade-progress-operations', optional: [], build: () => new RayService('llm', { rayClusterConfig: clusterSpec(), serveConfig: SERVE, upgradeStrategy: INCREMENTAL, kubeconfig }).progress! },
    { type: 'RoleBasedGroupRollout', module: 'rbg-rollout-operations', optional: [], build: () => new RoleBasedGroup('pd', { roles, coordination, executor: 'pulumi', kubeconfig }).rollout! },
  ];

  /**
   * The provider serialized into the `__provider` input of the resource of `type`, deserialized with
   * a `require` that answers its operations module with a recorder of the calls it gets.
   */
  async function deserializedProvider(type: string, module: string, build: () => pulumi.Resource) {
    await settle(build());
    const text = byType(`pulumi-nodejs:dynamic/rayshift:${type}`)[0].inputs.__provider as string;
    const modulePath = path.resolve(__dirname, '../../lib/pulumi', `${module}.ts`);
    const calls: unknown[][] = [];
    const operations = new Proxy({}, { get: (_target, method) => (...args: unknown[]) => (calls.push([method, ...args]), Promise.resolve({ outs: {} })) });
    const fakeRequire = (id: string): unknown => (id === modulePath ? operations : id === 'tsx/cjs/api' ? { register: () => undefined } : require(id));
    const holder = { exports: {} as { handler(): Record<string, (...args: unknown[]) => Promise<unknown>> } };
    new Function('module', 'exports', 'require', text)(holder, holder.exports, fakeRequire);
    return { text, modulePath, calls, provider: holder.exports.handler() };
  }

  test.each(cases)('$type: the provider captures the path of its operations module, never the kubeconfig', async ({ type, module, build }) => {
    const { text, modulePath } = await deserializedProvider(type, module, build);
    expect(text).toContain(modulePath);
    expect(text).not.toContain('secret-token-abc123');
  });

  test.each(cases)('$type: each method of the deserialized provider calls the function of that name, with the stack settings', async ({ type, module, optional, build }) => {
    const { provider, calls } = await deserializedProvider(type, module, build);
    expect(Object.keys(provider).filter((k) => typeof provider[k] === 'function').sort()).toEqual(['configure', 'create', 'diff', 'update', ...optional].sort());
    await provider.configure({ config: { get: (key: string) => (key === 'rayshift:context' ? 'kind-ci' : undefined) } });
    const settings = { kubeconfig: undefined, context: 'kind-ci' };
    await provider.diff('ns/x', { old: 1 }, { new: 2 });
    await provider.create({ new: 2 });
    await provider.update('ns/x', { old: 1 }, { new: 2 });
    const expected: unknown[][] = [['diff', { old: 1 }, { new: 2 }], ['create', settings, { new: 2 }], ['update', settings, { new: 2 }]];
    if (optional.includes('read')) {
      await provider.read('ns/x', { old: 1 });
      expected.push(['read', settings, 'ns/x', { old: 1 }]);
    }
    if (optional.includes('delete')) {
      await provider.delete('ns/x', { old: 1 });
      expected.push(['delete', settings, { old: 1 }]);
    }
    expect(calls).toEqual(expected);
  });
});
