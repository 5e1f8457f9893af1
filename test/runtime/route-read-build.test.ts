/**
 * buildServiceRoute: KubeRay's HTTPRoute shape, a GRPCRoute, and a built route that
 * planWeightPatch manages.
 */
import { serviceRouteName } from '../../lib/spec/object-names';
import { buildServiceRoute, clusterBackends } from '../../lib/runtime/route/build';
import { planWeightPatch } from '../../lib/runtime/route/weight-patch';
import { ACTIVE, apply } from './support/route-fixtures';

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
