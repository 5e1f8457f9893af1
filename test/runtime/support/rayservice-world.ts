/**
 * TEST-ONLY: what the controllers around a RayService reconciler would do, played on a `FakeKube`
 * by hand, so a unit test decides exactly when KubeRay reports a head ready or a Gateway
 * implementation accepts a route.
 */
import { KubeObject } from '../../../lib/runtime/kube/types';
import { GATEWAY, HTTPROUTE, RAYCLUSTER } from '../../../lib/spec/object-names';
import { FakeKube } from './fake-kube';

function condition(type: string, generation: number | undefined): Record<string, unknown> {
  return { type, status: 'True', reason: type, message: '', observedGeneration: generation, lastTransitionTime: '2026-01-01T00:00:00Z' };
}

/** KubeRay reports the head pod of every RayCluster in `namespace` ready. */
export function headsReady(kube: FakeKube, namespace: string): void {
  for (const c of kube.listNow(RAYCLUSTER, namespace)) {
    kube.mutate(RAYCLUSTER, String(c.metadata.name), namespace, (o) => ({ ...o, status: { conditions: [{ type: 'HeadPodReady', status: 'True' }] } }));
  }
}

/** A Gateway implementation accepts every Gateway and HTTPRoute in `namespace` at its current generation. */
export function gatewayAccepts(kube: FakeKube, namespace: string): void {
  for (const g of kube.listNow(GATEWAY, namespace)) {
    kube.mutate(GATEWAY, String(g.metadata.name), namespace, (o) => ({ ...o, status: { conditions: [condition('Accepted', o.metadata.generation), condition('Programmed', o.metadata.generation)] } }));
  }
  for (const r of kube.listNow(HTTPROUTE, namespace)) {
    kube.mutate(HTTPROUTE, String(r.metadata.name), namespace, (o: KubeObject) => {
      const parents = ((o.spec as { parentRefs?: unknown[] }).parentRefs ?? []).map((parentRef) => ({
        parentRef,
        controllerName: 'rayshift.dev/fake-gateway-controller',
        conditions: [condition('Accepted', o.metadata.generation), condition('ResolvedRefs', o.metadata.generation)],
      }));
      return { ...o, status: { parents } };
    });
  }
}
