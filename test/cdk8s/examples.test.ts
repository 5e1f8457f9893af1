import { Testing } from 'cdk8s';
import { buildExamples } from '../../examples/main';
import { validateCoordinatedPolicy, validateGateway, validateRayService, validateRoleBasedGroup, validateRoute } from '../../lib/spec';
import { captureStderr, single } from './helpers';

describe('examples app', () => {
  test('buildExamples synthesizes every chart without errors or warnings, with the expected kinds', () => {
    const app = buildExamples(Testing.app());
    const { result: charts, stderr } = captureStderr(() => app.charts.map((chart) => ({ id: chart.node.id, manifests: Testing.synth(chart) })));
    expect(stderr).toBe('');
    const kinds = Object.fromEntries(charts.map((c) => [c.id, c.manifests.map((m: any) => m.kind).sort()]));
    expect(kinds).toEqual({
      'llm-service': ['RayService'],
      'grpc-service': ['GRPCRoute', 'Gateway', 'GatewayClass', 'RayService'],
      'prefill-decode': ['CoordinatedPolicy', 'RoleBasedGroup'],
      'affinity-scheduled': ['RoleBasedGroup'],
      'prefill-decode-operator': ['RoleBasedGroup'],
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
    expect(colocated.spec.roles.map((r: any) => r.name)).toEqual(['prefill-b0', 'prefill-b1', 'decode-b0', 'decode-b1']);
    expect(validateRoleBasedGroup(colocated)).toEqual(clean);

    const operated = single(byId['prefill-decode-operator'], 'RoleBasedGroup');
    expect(operated.metadata.labels['rayshift.dev/coordination-executor']).toBe('operator');
    expect(JSON.parse(operated.metadata.annotations['rayshift.dev/coordination'])).toBeDefined();
    expect(validateRoleBasedGroup(operated)).toEqual(clean);
  });
});
