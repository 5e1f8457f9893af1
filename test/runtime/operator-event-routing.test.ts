/**
 * Which RayService a head Pod's or a serve EndpointSlice's change wakes (operator/event-service.ts):
 * through the RayCluster they are labelled with, to the rayshift RayService controlling it, and
 * never to a cluster some other controller (KubeRay's own RayService) owns.
 */
import { KubeObject } from '../../lib/runtime/kube/types';
import { RoutingView, controllingServiceKey, serviceOfHeadPod, serviceOfServeEndpoints } from '../../operator/event-service';

const NS = 'serving';

function owned(kind: string, name: string, owner: { apiVersion: string; kind: string; name: string; controller?: boolean }): KubeObject {
  return { apiVersion: 'ray.io/v1', kind, metadata: { name, namespace: NS, ownerReferences: [{ uid: `uid-${owner.name}`, controller: true, ...owner }] } };
}

/** A view with one rayshift service `web`, its cluster `web-abc12`, and KubeRay's service `kr` with cluster `kr-xyz89`. */
const view: RoutingView = {
  hasService: (namespace, name) => namespace === NS && name === 'web',
  cluster: async (namespace, name) => {
    if (namespace !== NS) return undefined;
    if (name === 'web-abc12') return owned('RayCluster', name, { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', name: 'web' });
    if (name === 'kr-xyz89') return owned('RayCluster', name, { apiVersion: 'ray.io/v1', kind: 'RayService', name: 'kr' });
    return undefined;
  },
};

function pod(labels: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'head-0', namespace: NS, labels: { 'ray.io/node-type': 'head', ...labels } } };
}

function slice(labels: Record<string, string>): KubeObject {
  return { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'svc-x1', namespace: NS, labels } };
}

test('a head Pod wakes the rayshift service controlling its RayCluster; not KubeRay\'s, not an unknown or unlabelled one', async () => {
  const got = await Promise.all([
    serviceOfHeadPod(pod({ 'ray.io/cluster': 'web-abc12' }), view),
    serviceOfHeadPod(pod({ 'ray.io/cluster': 'kr-xyz89' }), view),
    serviceOfHeadPod(pod({ 'ray.io/cluster': 'gone-00000' }), view),
    serviceOfHeadPod(pod({}), view),
  ]);
  expect(got).toEqual([`${NS}/web`, undefined, undefined, undefined]);
});

test('a serve EndpointSlice wakes the service its stable Service names, or the controller of the cluster its per-cluster Service names', async () => {
  const got = await Promise.all([
    serviceOfServeEndpoints(slice({ 'ray.io/originated-from-cr-name': 'web', 'ray.io/originated-from-crd': 'RayService' }), view),
    serviceOfServeEndpoints(slice({ 'ray.io/originated-from-cr-name': 'web-abc12', 'ray.io/originated-from-crd': 'RayService' }), view),
    serviceOfServeEndpoints(slice({ 'ray.io/originated-from-cr-name': 'kr-xyz89', 'ray.io/originated-from-crd': 'RayService' }), view),
    serviceOfServeEndpoints(slice({ 'kubernetes.io/service-name': 'other' }), view),
  ]);
  expect(got).toEqual([`${NS}/web`, `${NS}/web`, undefined, undefined]);
});

test('only a controller reference to a rayshift RayService counts', () => {
  const base = owned('Service', 's', { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', name: 'web' });
  const notController: KubeObject = { ...base, metadata: { ...base.metadata, ownerReferences: [{ ...base.metadata.ownerReferences![0], controller: false }] } };
  expect([
    controllingServiceKey(base),
    controllingServiceKey(notController),
    controllingServiceKey(owned('Service', 's', { apiVersion: 'ray.io/v1', kind: 'RayService', name: 'web' })),
    controllingServiceKey({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: NS } }),
  ]).toEqual([`${NS}/web`, undefined, undefined, undefined]);
});
