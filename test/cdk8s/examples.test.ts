import { Testing } from 'cdk8s';
import { GitOpsServiceChart } from '../../examples/gitops';
import { PrefillDecodeRoutedChart } from '../../examples/prefill-decode-routed';
import { buildExamples } from '../../examples/main';
import * as constructs from '../../lib/cdk8s';
import { validateCoordinatedPolicy, validateGateway, validateRayService, validateRoleBasedGroup, validateRoleBasedGroupWarmup, validateRoute } from '../../lib/spec';
import { captureStderr, ofKind, single } from './helpers';

describe('examples app', () => {
  test('buildExamples synthesizes every chart without errors, with the expected kinds; the one warning is shrinkFirst\'s trade', () => {
    const app = buildExamples(Testing.app());
    const { result: charts, stderr } = captureStderr(() => app.charts.map((chart) => ({ id: chart.node.id, manifests: Testing.synth(chart) })));
    // shrinkFirst always warns that it trades availability for accelerators (docs/capacity.md); nothing else may.
    expect(stderr.split('\n').filter((l) => l !== '')).toEqual([expect.stringMatching(/^warning: RayService\/llm: spec\.rayshift\.capacityPolicy: "shrinkFirst" trades availability for accelerators: .* runs at 75% /)]);
    const kinds = Object.fromEntries(charts.map((c) => [c.id, c.manifests.map((m: any) => m.kind).sort()]));
    expect(kinds).toEqual({
      'llm-service': ['RayService'],
      'grpc-service': ['GRPCRoute', 'Gateway', 'GatewayClass', 'RayService'],
      'prefill-decode': ['CoordinatedPolicy', 'RoleBasedGroup'],
      'affinity-scheduled': ['RoleBasedGroup'],
      'prefill-decode-operator': ['RoleBasedGroup'],
      'prefill-decode-warmup': ['RoleBasedGroup', 'RoleBasedGroupWarmup'],
      'prefill-decode-routed': ['Deployment', 'HTTPRoute', 'Role', 'RoleBasedGroup', 'RoleBinding', 'Service', 'ServiceAccount'],
      'openai-gateway': ['Gateway', 'HTTPRoute', 'RayService', 'RayService'],
      'shrink-first': ['RayService'],
    });
  });

  test('the example manifests pass the wire validators and carry what their docs promise', () => {
    const app = buildExamples(Testing.app());
    const byId = Object.fromEntries(app.charts.map((chart) => [chart.node.id, Testing.synth(chart)]));
    const clean = { errors: [], warnings: [] };

    const llm = single(byId['llm-service'], 'RayService');
    expect(llm.apiVersion).toBe('ray.io/v1');
    expect(llm.metadata).toEqual({ name: 'llm', namespace: 'llm' });
    expect(llm.spec.upgradeStrategy.type).toBe('NewClusterWithIncrementalUpgrade');
    expect(llm.spec.rayClusterConfig.enableInTreeAutoscaling).toBe(true);
    expect(validateRayService(llm)).toEqual(clean);

    const tight = single(byId['shrink-first'], 'RayService');
    expect(tight.apiVersion).toBe('rayshift.dev/v1alpha1');
    expect(tight.spec.rayshift.capacityPolicy).toBe('shrinkFirst');
    expect(tight.spec.rayClusterConfig.enableInTreeAutoscaling).toBe(true);
    const checked = validateRayService(tight);
    expect(checked.errors).toEqual([]);
    expect(checked.warnings).toEqual([expect.objectContaining({ path: 'spec.rayshift.capacityPolicy', message: expect.stringContaining('"shrinkFirst" trades availability for accelerators') })]);

    const grpc = byId['grpc-service'];
    expect(validateRayService(single(grpc, 'RayService'))).toEqual(clean);
    expect(validateGateway(single(grpc, 'Gateway'))).toEqual(clean);
    const route = single(grpc, 'GRPCRoute');
    expect(validateRoute(route)).toEqual(clean);
    expect(route.spec.parentRefs).toEqual([{ name: 'inference', namespace: 'embeddings' }]);
    expect(route.spec.rules[0].backendRefs).toEqual([{ name: 'embedder-serve-svc', port: 9000 }]);

    const pd = byId['prefill-decode'];
    const group = single(pd, 'RoleBasedGroup');
    const policy = single(pd, 'CoordinatedPolicy');
    expect(policy.metadata).toEqual(group.metadata);
    expect(validateRoleBasedGroup(group)).toEqual(clean);
    expect(validateCoordinatedPolicy(policy, group)).toEqual(clean);

    const colocated = single(byId['affinity-scheduled'], 'RoleBasedGroup');
    expect(colocated.apiVersion).toBe('workloads.x-k8s.io/v1alpha1');
    expect(colocated.spec.roles.map((r: any) => r.name)).toEqual(['prefill-b0', 'prefill-b1', 'decode-b0', 'decode-b1']);
    expect(validateRoleBasedGroup(colocated)).toEqual(clean);

    const operated = single(byId['prefill-decode-operator'], 'RoleBasedGroup');
    expect(operated.metadata.labels['rayshift.dev/coordination-executor']).toBe('operator');
    expect(JSON.parse(operated.metadata.annotations['rayshift.dev/coordination'])).toBeDefined();
    expect(validateRoleBasedGroup(operated)).toEqual(clean);

    const warm = byId['prefill-decode-warmup'];
    const warmed = single(warm, 'RoleBasedGroup');
    expect(JSON.parse(warmed.metadata.annotations['rayshift.dev/coordination']).warmup).toMatchObject({ globalTimeoutSeconds: 600, onFailure: 'Fail' });
    expect(validateRoleBasedGroup(warmed, { rbgVersion: 'v0.8' })).toEqual(clean);
    const prepull = single(warm, 'RoleBasedGroupWarmup');
    expect(prepull.spec.targetNodes).toBeDefined();
    expect(validateRoleBasedGroupWarmup(prepull, { rbgVersion: 'v0.8' })).toEqual(clean);

    const openai = byId['openai-gateway'];
    for (const svc of ofKind(openai, 'RayService')) {
      expect(svc.spec.upgradeStrategy).toEqual({ type: 'None' });
      expect(svc.spec.rayClusterConfig.enableInTreeAutoscaling).toBe(true);
      expect(validateRayService(svc)).toEqual(clean);
    }
    expect(validateGateway(single(openai, 'Gateway'))).toEqual(clean);
    const split = single(openai, 'HTTPRoute');
    expect(validateRoute(split)).toEqual(clean);
    expect(split.spec.parentRefs).toEqual([{ name: 'openai', namespace: 'openai' }]);
    expect(split.spec.rules.map((r: any) => r.backendRefs)).toEqual([
      [{ name: 'chat-green-serve-svc', port: 8000 }],
      [
        { name: 'chat-blue-serve-svc', port: 8000, weight: 90 },
        { name: 'chat-green-serve-svc', port: 8000, weight: 10 },
      ],
    ]);
  });

  test('the examples use every construct of lib/cdk8s: both RayService executors, both RBG versions, affinity batches', () => {
    const app = buildExamples(Testing.app());
    // `npm run synth` writes the GitOps service too (buildGitOpsExample), the examples' only
    // operator-executed RayService; its operator chart is no lib/cdk8s construct, so it stays out.
    new GitOpsServiceChart(app, 'gitops-service', { namespace: 'chat' });

    // Every construct class lib/cdk8s exports (the ValidatedObject subclasses), found by reflection so
    // that a new construct fails here until an example uses it; the list pins what reflection found.
    const exported = Object.entries(constructs).filter(
      ([, value]) => typeof value === 'function' && value.prototype instanceof constructs.ValidatedObject,
    );
    expect(exported.map(([name]) => name).sort()).toEqual(['CoordinatedPolicy', 'Gateway', 'GatewayClass', 'GrpcRoute', 'HttpRoute', 'RayService', 'RoleBasedGroup', 'RoleBasedGroupWarmup', 'RouteBase']);
    // An abstract base (RouteBase) counts as used through its subclasses.
    const used = app.node.findAll().map((c) => c.constructor);
    expect(exported.filter(([, cls]) => !used.some((u) => u === cls || u.prototype instanceof (cls as never))).map(([name]) => name)).toEqual([]);

    // The variants a class alone does not show, read off the synthesized output.
    const manifests: any[] = app.charts.flatMap((chart) => Testing.synth(chart));
    const has = (kind: string, apiVersion: string, test: (m: any) => boolean = () => true) =>
      manifests.some((m) => m.kind === kind && m.apiVersion === apiVersion && test(m));
    const roleTemplates = (group: any): any[] => group.spec.roles.map((r: any) => r.template ?? r.standalonePattern?.template);
    const covered: Record<string, boolean> = {
      'RayService, executor kuberay': has('RayService', 'ray.io/v1'),
      'RayService, executor operator': has('RayService', 'rayshift.dev/v1alpha1'),
      // The builder's mark: a head container named ray-head with the gcs, dashboard, client and serve ports.
      RayClusterSpecBuilder: manifests.some(
        (m) =>
          m.kind === 'RayService' &&
          m.spec.rayClusterConfig.headGroupSpec.template.spec.containers.some(
            (c: any) => c.name === 'ray-head' && ['gcs', 'dashboard', 'client', 'serve'].every((p) => c.ports?.some((q: any) => q.name === p)),
          ),
      ),
      GatewayClass: has('GatewayClass', 'gateway.networking.k8s.io/v1'),
      Gateway: has('Gateway', 'gateway.networking.k8s.io/v1'),
      HTTPRoute: has('HTTPRoute', 'gateway.networking.k8s.io/v1'),
      GRPCRoute: has('GRPCRoute', 'gateway.networking.k8s.io/v1'),
      'RoleBasedGroup v1alpha2': has('RoleBasedGroup', 'workloads.x-k8s.io/v1alpha2'),
      'RoleBasedGroup v1alpha1': has('RoleBasedGroup', 'workloads.x-k8s.io/v1alpha1'),
      'RoleBasedGroup, executor operator': manifests.some(
        (m) => m.kind === 'RoleBasedGroup' && m.metadata.labels?.['rayshift.dev/coordination-executor'] === 'operator',
      ),
      CoordinatedPolicy: has('CoordinatedPolicy', 'workloads.x-k8s.io/v1alpha2'),
      'AffinityScheduling batches': manifests.some(
        (m) =>
          m.kind === 'RoleBasedGroup' &&
          roleTemplates(m).some((t: any) => Object.keys(t?.metadata?.labels ?? {}).some((l) => l.startsWith(constructs.BATCH_LABEL_PREFIX))),
      ),
    };
    expect(Object.keys(covered).filter((what) => !covered[what])).toEqual([]);
  });
});

test('the routed prefill/decode example: one router outside a rollout; with the old routerRevision a new image keeps the old router, all traffic on it', () => {
  const before = new PrefillDecodeRoutedChart(Testing.app(), 'routed', { namespace: 'pd' });
  const v1 = before.group.routerRevision('pd-rollout')!;
  expect(single(Testing.synth(before), 'HTTPRoute').spec.rules[0].backendRefs).toEqual([{ name: `pd-routed-pd-rollout-router-${v1}`, port: 30000, weight: 100 }]);
  const during = new PrefillDecodeRoutedChart(Testing.app(), 'routed', { namespace: 'pd', image: 'lmsysorg/sglang:v0.5.6', previousRevision: v1 });
  const v2 = during.group.routerRevision('pd-rollout')!;
  const manifests = Testing.synth(during);
  expect(ofKind(manifests, 'Deployment').map((d) => d.metadata.name)).toEqual([`pd-routed-pd-rollout-router-${v1}`, `pd-routed-pd-rollout-router-${v2}`]);
  expect(single(manifests, 'HTTPRoute').spec.rules[0].backendRefs.map((b: any) => b.weight)).toEqual([100, 0]);
  expect(validateRoleBasedGroup(single(manifests, 'RoleBasedGroup'))).toEqual({ errors: [], warnings: [] });
});
