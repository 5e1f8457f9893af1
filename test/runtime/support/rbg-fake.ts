/**
 * The RBG reconciler's in-memory API for its unit tests: FakeKube with the discovery the reconciler
 * asks (no RoleBasedGroupWarmup, so not RBG v0.8), a log of every list, and Node lists refused on
 * demand; and a coordinated v1alpha2 group whose roles ask 1 GPU per replica at `v1`, 2 at `v2`.
 */
import { KubeApiError, UnknownKindError } from '../../../lib/runtime/kube/errors';
import type { ListOptions } from '../../../lib/runtime/kube/request-options';
import type { KubeList, KubeObject, ResourceType } from '../../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE } from '../../../lib/spec/object-names';
import { FakeKube } from './fake-kube';

/** RBG's group label on the Pods of a group. */
export const GROUP_LABEL = 'rbg.workloads.x-k8s.io/group-name';
/** RBG's role label on the Pods of a role. */
export const ROLE_LABEL = 'rbg.workloads.x-k8s.io/role-name';

/** FakeKube as the RBG reconciler sees it, logging each list as `Kind namespace|* [fieldSelector] [labelSelector]`. */
export class RbgFakeKube extends FakeKube {
  readonly lists: string[] = [];
  /** Node lists answer 403, as for an operator without the cluster-wide read. */
  forbidNodes = false;
  async resolve(type: ResourceType): Promise<never> {
    throw new UnknownKindError(type.apiVersion, type.kind);
  }
  override async list<T extends KubeObject = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    this.lists.push(`${type.kind} ${opts.namespace ?? '*'}${opts.fieldSelector ? ` ${opts.fieldSelector}` : ''}${opts.labelSelector ? ` ${JSON.stringify(opts.labelSelector)}` : ''}`);
    if (type.kind === 'Node' && this.forbidNodes) throw new KubeApiError({ statusCode: 403, message: 'nodes is forbidden', method: 'GET', path: '/api/v1/nodes' });
    return super.list<T>(type, opts);
  }
  /** The label selectors of the Pod lists by label (the group's Pods; not the capacity preflight's bound Pods). */
  get podListsByLabel(): string[] {
    return this.lists.filter((l) => l.startsWith('Pod ') && l.includes(' {')).map((l) => l.slice(l.indexOf(' {') + 1));
  }
}

/** A role of `replicas` standalone replicas at `image`: 2 GPUs per replica at `v2`, else 1. */
export const gpuRole = (name: string, replicas: number, image: string) => ({
  name,
  replicas,
  standalonePattern: { template: { spec: { containers: [{ name, image, resources: { limits: { 'nvidia.com/gpu': image === 'v2' ? '2' : '1' } } }] } } },
});

/** Group `ns/pd` with prefill ×2 and decode ×1 at v1, coordinated by the operator under one policy with `policy`'s fields. */
export function coordinatedGroup(policy: Record<string, unknown>): KubeObject {
  const policies = [{ name: 'pd', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '100%', maxUnavailable: 1 } }, ...policy }];
  return {
    apiVersion: RBG_V1ALPHA2_TYPE.apiVersion,
    kind: 'RoleBasedGroup',
    metadata: { name: 'pd', namespace: 'ns', labels: { 'rayshift.dev/coordination-executor': 'operator' }, annotations: { 'rayshift.dev/coordination': JSON.stringify({ policies }) } },
    spec: { roles: [gpuRole('prefill', 2, 'v1'), gpuRole('decode', 1, 'v1')] },
  };
}

/** Changes `ns/pd`'s role templates to `image` (keeping each role's rollout strategy, which the reconciler wrote). */
export function changeRelease(kube: FakeKube, image: string): void {
  kube.mutate(RBG_V1ALPHA2_TYPE, 'pd', 'ns', (g) => ({
    ...g,
    spec: { roles: [gpuRole('prefill', 2, image), gpuRole('decode', 1, image)].map((r, i) => ({ ...r, rolloutStrategy: (g.spec as { roles: { rolloutStrategy: unknown }[] }).roles[i].rolloutStrategy })) },
  }));
}

/** RBG's controller catching up: `ns/pd`'s status observes its generation, with these counts per role. */
export function settle(kube: FakeKube, counts: Record<string, { updated: number; ready: number }>): void {
  kube.mutate(RBG_V1ALPHA2_TYPE, 'pd', 'ns', (g) => ({
    ...g,
    status: { observedGeneration: g.metadata.generation, roleStatuses: Object.entries(counts).map(([name, c]) => ({ name, replicas: 0, updatedReplicas: c.updated, readyReplicas: c.ready })) },
  }));
}

/** The Events the reconciler created, in order. */
export const createdEvents = (kube: FakeKube) => kube.writes.filter((w) => w.verb === 'create' && w.kind === 'Event').map((w) => w.body as { reason: string; note: string; action: string });
