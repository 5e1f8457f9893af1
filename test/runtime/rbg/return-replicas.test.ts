/**
 * The runtime half of a rollback round (lib/runtime/rbg/return-replicas.ts) against a TEST-ONLY
 * in-memory API server: the deletes below the partition, and RBG v0.8's in-place revert of the
 * ordinals the webhook's partition cannot reach, written as RBG's own in-place update writes a
 * RoleInstance (read in v0.8.0-alpha.5's pkg/inplace/instance/inplaceupdate). The real controller
 * runs it in test/integration/cluster-rbg-analysis.test.ts.
 */
import { KubeClient } from '../../../lib/runtime/kube/client';
import type { HttpRequest, HttpResponse, StreamHandle, Transport } from '../../../lib/runtime/kube/transport';
import type { KubeObject } from '../../../lib/runtime/kube/types';
import { returnReplicas } from '../../../lib/runtime/rbg/return-replicas';

const NS = 'llm';
const OLD = 'pd-decode-old';
const NEW = 'pd-decode-new';
const OLD_TEMPLATE = { components: [{ name: 'decode', size: 1, template: { spec: { containers: [{ name: 'decode', image: 'sglang:v1' }] } } }] };

/** Serves discovery, the RoleInstanceSet, its ControllerRevision and RoleInstances; records every write. */
class FakeApi implements Transport {
  readonly server = 'https://fake';
  readonly writes: { method: string; path: string; body?: any }[] = [];
  /** `earlierOwned`: the ordinal whose controller is an earlier RoleInstanceSet of the same name (another uid). */
  /** `stateless`: the set in RBG's Stateless pattern, its instances named `<set>-<random id>`, each with its readiness and revision label. */
  constructor(
    private readonly paused: boolean,
    private readonly earlierOwned?: number,
    private readonly stateless?: readonly { id: string; ready: boolean; label: string }[],
  ) {}

  async request(req: HttpRequest): Promise<HttpResponse> {
    const p = req.path.split('?')[0];
    if (req.method !== 'GET') {
      this.writes.push({ method: req.method, path: p, body: req.body ? JSON.parse(req.body) : undefined });
      return reply(200, req.body ? JSON.parse(req.body) : { kind: 'Status', status: 'Success' });
    }
    if (p === '/apis/workloads.x-k8s.io/v1alpha2') {
      return reply(200, { kind: 'APIResourceList', groupVersion: 'workloads.x-k8s.io/v1alpha2', resources: [{ name: 'roleinstancesets', kind: 'RoleInstanceSet', namespaced: true }, { name: 'roleinstances', kind: 'RoleInstance', namespaced: true }] });
    }
    if (p === '/apis/apps/v1') return reply(200, { kind: 'APIResourceList', groupVersion: 'apps/v1', resources: [{ name: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true }] });
    if (p === `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/roleinstancesets/pd-decode`) {
      const annotations = this.stateless ? { 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateless' } : {};
      return reply(200, { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet', metadata: { name: 'pd-decode', namespace: NS, uid: 'ris', annotations }, spec: { replicas: 2, updateStrategy: { partition: 1, paused: this.paused } }, status: { currentRevision: OLD, updateRevision: NEW, updatedReplicas: 2 } });
    }
    if (p === `/apis/apps/v1/namespaces/${NS}/controllerrevisions/${OLD}`) {
      return reply(200, { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: OLD, namespace: NS }, revision: 1, data: { spec: { roleInstanceTemplate: OLD_TEMPLATE, $patch: 'replace' } } });
    }
    if (p === `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/roleinstances`) {
      const instance = (i: number): KubeObject => ({
        apiVersion: 'workloads.x-k8s.io/v1alpha2',
        kind: 'RoleInstance',
        metadata: { name: `pd-decode-${this.stateless?.[i].id ?? i}`, namespace: NS, uid: `uid-${i}`, resourceVersion: `${10 + i}`, labels: { 'controller-revision-hash': this.stateless ? this.stateless[i].label : NEW }, annotations: {}, ownerReferences: [{ apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet', name: 'pd-decode', uid: i === this.earlierOwned ? 'an-earlier-ris' : 'ris', controller: true }] },
        spec: { components: [{ name: 'decode', size: 1, template: { spec: { containers: [{ name: 'decode', image: 'sglang:v2' }] } } }], readinessGates: [{ conditionType: 'RoleInstanceInPlaceUpdateReady' }] },
        status: { conditions: [{ type: 'RoleInstanceReady', status: this.stateless?.[i].ready === false ? 'False' : 'True' }] },
      });
      // The API server's label selection, for the one label a list here may select on.
      const selector = new URLSearchParams(req.path.split('?')[1] ?? '').get('labelSelector') ?? '';
      const wanted = /controller-revision-hash=([^,]+)/.exec(selector)?.[1];
      const items = [instance(0), instance(1)].filter((x) => wanted === undefined || x.metadata.labels?.['controller-revision-hash'] === wanted);
      return reply(200, { kind: 'List', metadata: { resourceVersion: '20' }, items });
    }
    return reply(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${p} not found` });
  }

  async stream(): Promise<StreamHandle> {
    throw new Error('no watches here');
  }

  close(): void {}
}

function reply(status: number, body: unknown): HttpResponse {
  return { status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) };
}

const group: KubeObject = { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroup', metadata: { name: 'pd', namespace: NS }, spec: { roles: [{ name: 'prefill' }, { name: 'decode', replicas: 2 }] } };

test('RBG v0.8, decode paused at partition 1 of 2: ordinal 0 is deleted (uid-guarded) and ordinal 1 reverted in place to the current revision, as RBG writes an in-place update', async () => {
  const api = new FakeApi(true);
  const result = await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, revertBelow: 2, maxUnavailable: 2 });
  expect(result).toEqual({ deleted: 1, reverted: 1 });
  expect(api.writes.map((w) => [w.method, w.path])).toEqual([
    ['DELETE', `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/roleinstances/pd-decode-0`],
    ['PUT', `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/roleinstances/pd-decode-1`],
  ]);
  expect(api.writes[0].body).toMatchObject({ preconditions: { uid: 'uid-0' }, propagationPolicy: 'Foreground' });
  const put = api.writes[1].body;
  expect(put.metadata).toMatchObject({ resourceVersion: '11', labels: { 'controller-revision-hash': OLD } });
  expect(JSON.parse(put.metadata.annotations['rbg.workloads.x-k8s.io/inplace-update-state'])).toMatchObject({ revision: OLD });
  expect(put.spec).toEqual({ ...OLD_TEMPLATE, readinessGates: [{ conditionType: 'RoleInstanceInPlaceUpdateReady' }] });
});

test('an unpaused RoleInstanceSet would update a reverted instance forward again: nothing is reverted until it carries paused', async () => {
  const api = new FakeApi(false);
  const result = await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, revertBelow: 2, maxUnavailable: 2 });
  expect(result).toEqual({ deleted: 1, reverted: 0 });
  expect(api.writes.map((w) => w.method)).toEqual(['DELETE']);
});

test('without revertBelow (RBG v0.6.0, v0.7.0) only the ordinals below the partition are returned, by deleting them', async () => {
  const api = new FakeApi(true);
  expect(await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, maxUnavailable: 2 })).toEqual({ deleted: 1, reverted: 0 });
  expect(api.writes.map((w) => [w.method, w.path.split('/').pop()])).toEqual([['DELETE', 'pd-decode-0']]);
});

test('a replica controlled by an earlier RoleInstanceSet of the same name (another uid) is neither deleted nor reverted', async () => {
  const api = new FakeApi(true, 0);
  expect(await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, revertBelow: 2, maxUnavailable: 2 })).toEqual({ deleted: 0, reverted: 1 });
  expect(api.writes.map((w) => [w.method, w.path.split('/').pop()])).toEqual([['PUT', 'pd-decode-1']]);
});

test('under maxUnavailable 1 with both instances Ready, one pass deletes ordinal 0 and leaves the revert of ordinal 1 for a later pass', async () => {
  const api = new FakeApi(true);
  expect(await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, revertBelow: 2, maxUnavailable: 1 })).toEqual({ deleted: 1, reverted: 0 });
  expect(api.writes.map((w) => [w.method, w.path.split('/').pop()])).toEqual([['DELETE', 'pd-decode-0']]);
});

// A Stateless RoleInstanceSet (routed roles) names its instances with 5 random characters from
// "bcdfghjklmnpqrstvwxz2456789" (RBG v0.7.0 statelessmode/sync/scale.go:331-342): `24567` reads as
// an ordinal, the other as none; neither is one. It labels them with the revision's last segment
// (`new` for `pd-decode-new`, statelessmode/utils/utils.go WriteRevisionHash), not its name.
const STATELESS = [
  { id: 'x7k2q', ready: true, label: 'new' },
  { id: '24567', ready: false, label: 'new' },
];

test('Stateless set, decode at partition 1 of 2, both instances abandoned: one is deleted (the not-ready one, uid-guarded), by revision and readiness, not by ordinal', async () => {
  const api = new FakeApi(true, undefined, STATELESS);
  expect(await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, maxUnavailable: 2 })).toEqual({ deleted: 1, reverted: 0 });
  expect(api.writes.map((w) => [w.method, w.path.split('/').pop()])).toEqual([['DELETE', 'pd-decode-24567']]);
  expect(api.writes[0].body).toMatchObject({ preconditions: { uid: 'uid-1' }, propagationPolicy: 'Foreground' });
});

test('Stateless set with a capped partition (RBG v0.8), paused: the not-ready instance deleted, the other reverted in place; unpaused, nothing reverted', async () => {
  const paused = new FakeApi(true, undefined, STATELESS);
  expect(await returnReplicas(new KubeClient(paused), group, { name: 'decode', index: 1, below: 1, revertBelow: 2, maxUnavailable: 2 })).toEqual({ deleted: 1, reverted: 1 });
  expect(paused.writes.map((w) => [w.method, w.path.split('/').pop()])).toEqual([
    ['DELETE', 'pd-decode-24567'],
    ['PUT', 'pd-decode-x7k2q'],
  ]);
  // The revision label as the set itself writes it: the short hash.
  expect(paused.writes[1].body.metadata.labels).toMatchObject({ 'controller-revision-hash': 'old' });
  const unpaused = new FakeApi(false, undefined, STATELESS);
  expect(await returnReplicas(new KubeClient(unpaused), group, { name: 'decode', index: 1, below: 1, revertBelow: 2, maxUnavailable: 2 })).toEqual({ deleted: 1, reverted: 0 });
});

test('Stateless set: an instance another RoleInstanceSet controls (another uid) is not chosen', async () => {
  const api = new FakeApi(true, 1, STATELESS);
  // Of the two only x7k2q is this set's: 1 of 2 may stay on the abandoned revision, so nothing goes.
  expect(await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, maxUnavailable: 2 })).toEqual({ deleted: 0, reverted: 0 });
  expect(api.writes).toEqual([]);
});

test('Stateless set: an instance on the previous revision (label `old`) is never chosen, one on the abandoned one is', async () => {
  const api = new FakeApi(true, undefined, [
    { id: 'b4n9z', ready: false, label: 'old' },
    { id: 'x7k2q', ready: true, label: 'new' },
  ]);
  // Partition 1 of 2: at most 1 may stay on the abandoned revision, and only 1 is: nothing goes, the not-ready old one neither.
  expect(await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, maxUnavailable: 2 })).toEqual({ deleted: 0, reverted: 0 });
  // With the capped partition (round 2 of 2), x7k2q is reverted.
  expect(await returnReplicas(new KubeClient(api), group, { name: 'decode', index: 1, below: 1, revertBelow: 2, maxUnavailable: 2 })).toEqual({ deleted: 0, reverted: 1 });
  expect(api.writes.map((w) => [w.method, w.path.split('/').pop()])).toEqual([['PUT', 'pd-decode-x7k2q']]);
});
