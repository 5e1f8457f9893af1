/**
 * readWeights on a shared HTTPRoute (managed weights, absent backends, shares, disagreeing rules)
 * and buildServiceRoute: KubeRay's HTTPRoute shape, a GRPCRoute, and a built route that
 * planWeightPatch manages.
 */
import { serviceRouteName } from '../../lib/spec/object-names';
import { buildServiceRoute, clusterBackends } from '../../lib/runtime/route/build';
import { planWeightPatch, readWeights } from '../../lib/runtime/route/weight-patch';
import { ACTIVE, PENDING, apply, backend, sharedHttpRoute } from './support/route-fixtures';

describe('readWeights', () => {
  test('reads managed weights, absent backends as undefined, and the share including unmanaged backends', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs[0].weight = 100;
    route.spec.rules[1].backendRefs.push(backend(PENDING));
    expect(readWeights(route, [{ name: ACTIVE }, { name: PENDING }, { name: 'gone' }])).toEqual([
      { name: ACTIVE, weight: 100, sharePercent: (100 * 100) / 201, consistent: true },
      { name: PENDING, weight: 1, sharePercent: 100 / 201, consistent: true },
      { name: 'gone', weight: undefined, sharePercent: 0, consistent: true },
    ]);
  });

  test('flags rules that disagree', () => {
    const route = sharedHttpRoute();
    route.spec.rules.push({ backendRefs: [backend(ACTIVE, 50)] });
    expect(readWeights(route, [{ name: ACTIVE }])[0]).toMatchObject({ weight: 100, consistent: false });
  });

  test('a route without managed rules reads every backend as absent', () => {
    expect(readWeights(sharedHttpRoute(), [{ name: 'x' }])).toEqual([{ name: 'x', weight: undefined, sharePercent: 0, consistent: true }]);
  });
});

describe('buildServiceRoute', () => {
  test('KubeRay\'s HTTPRoute shape: <name>-httproute, parentRefs to <name>-gateway, one PathPrefix "/" rule, <cluster>-serve-svc backends', () => {
    const route = buildServiceRoute({ rayServiceName: 'llm', namespace: 'serving', backends: [{ cluster: 'llm-aaaaa', weight: 100 }] });
    expect(route).toEqual({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'llm-httproute', namespace: 'serving', labels: { 'app.kubernetes.io/managed-by': 'rayshift-operator', 'rayshift.dev/rayservice': 'llm' } },
      spec: {
        parentRefs: [{ name: 'llm-gateway', namespace: 'serving' }],
        rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: ACTIVE, namespace: 'serving', port: 8000, weight: 100 }] }],
      },
    });
  });

  test('GRPCRoute with a gatewayRef, a port, owner references and both clusters', () => {
    const owner = { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', name: 'llm', uid: 'u1', controller: true };
    const route = buildServiceRoute({
      rayServiceName: 'llm',
      namespace: 'serving',
      routeKind: 'GRPC',
      gatewayRef: { name: 'shared', namespace: 'gateways', sectionName: 'grpc' },
      backends: [{ cluster: 'llm-aaaaa', weight: 80 }, { cluster: 'llm-bbbbb', weight: 20 }],
      port: 9000,
      ownerReferences: [owner],
      labels: { team: 'ml' },
    }) as any;
    expect(route.kind).toBe('GRPCRoute');
    expect(route.metadata.name).toBe(serviceRouteName('llm', 'GRPC'));
    expect(route.metadata.ownerReferences).toEqual([owner]);
    expect(route.metadata.labels.team).toBe('ml');
    expect(route.spec.parentRefs).toEqual([{ name: 'shared', namespace: 'gateways', sectionName: 'grpc' }]);
    expect(route.spec.rules).toEqual([{ backendRefs: clusterBackends('serving', [{ cluster: 'llm-aaaaa', weight: 80 }, { cluster: 'llm-bbbbb', weight: 20 }], 9000) }]);
  });

  test('the built route is managed by planWeightPatch: the pending cluster is added next to the active one', () => {
    const route = buildServiceRoute({ rayServiceName: 'llm', namespace: 'serving', backends: [{ cluster: 'llm-aaaaa', weight: 100 }] });
    const managed = clusterBackends('serving', [{ cluster: 'llm-aaaaa', weight: 90 }, { cluster: 'llm-bbbbb', weight: 10 }]);
    const after = apply(route, planWeightPatch(route, managed));
    expect(after).toEqual(buildServiceRoute({ rayServiceName: 'llm', namespace: 'serving', backends: [{ cluster: 'llm-aaaaa', weight: 90 }, { cluster: 'llm-bbbbb', weight: 10 }] }));
  });
});
