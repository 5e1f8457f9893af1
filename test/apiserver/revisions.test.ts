/** The revisions of a RayService, derived from the RayClusters it controls and its current spec. */
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { revisionsOf } from '../../lib/apiserver/handlers/rayservice-revisions';
import { RevisionState } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
import { clusterSpecHash } from '../../lib/engine/cluster-hash';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayClusterConfig, rayService, serveConfig } from '../support/operator-env';

const UID = 'svc-uid';

/** A RayCluster the operator made for the service (or, with `ownerUid`, for another owner) from `cpu`'s spec. */
function cluster(name: string, cpu: string, created: string, opts: { ownerUid?: string; serve?: string } = {}): KubeObject {
  const spec = rayClusterConfig(cpu);
  return {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: created,
      annotations: { 'rayshift.dev/cluster-spec-hash': clusterSpecHash(spec as never), ...(opts.serve !== undefined ? { 'rayshift.dev/serve-config': opts.serve } : {}) },
      ownerReferences: [{ apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', name: 'svc', uid: opts.ownerUid ?? UID, controller: true }],
    },
    spec,
  };
}

/** The service at `cpu`'s spec with the operator's engine state naming the active and pending clusters. */
function service(cpu: string, active: string, pending?: string): KubeObject {
  const svc = rayService('ns', 'svc', { cpu });
  svc.metadata.uid = UID;
  svc.status = { engineState: { phase: pending ? 'Upgrading' : 'Running', reason: 'Migrating', activeClusterName: active, ...(pending ? { pendingClusterName: pending } : {}) } };
  return svc;
}

test('during an upgrade: the pending cluster runs the current spec, the active one the spec to roll back to, newest first', () => {
  const clusters = [
    cluster('svc-old', '1', '2026-11-21T10:00:00Z', { serve: serveConfig(2) }),
    cluster('svc-act', '2', '2026-11-21T11:00:00Z', { serve: serveConfig(3) }),
    cluster('svc-new', '3', '2026-11-21T12:00:00Z'),
    cluster('svc-foreign', '3', '2026-11-21T12:30:00Z', { ownerUid: 'someone-else' }),
  ];
  const revisions = revisionsOf(service('3', 'svc-act', 'svc-new'), clusters);
  expect(revisions.map((r) => [r.cluster, RevisionState[r.state], r.current])).toEqual([
    ['svc-new', 'PENDING', true],
    ['svc-act', 'ACTIVE', false],
    ['svc-old', 'RETIRED', false],
  ]);
  const [pending, active] = revisions;
  expect(pending.serveConfigV2).toBe(''); // nothing applied yet
  expect(active.serveConfigV2).toBe(serveConfig(3));
  expect(active.specHash).toBe(clusterSpecHash(rayClusterConfig('2') as never));
  // The spec that reverts to a revision hashes like it.
  expect(clusterSpecHash(active.rayClusterConfig as never)).toBe(active.specHash);
  expect(timestampMs(active.createTime!)).toBe(Date.parse('2026-11-21T11:00:00Z'));
});

test('a current spec no cluster runs yet comes first, without a cluster', () => {
  const revisions = revisionsOf(service('9', 'svc-act'), [cluster('svc-act', '2', '2026-11-21T11:00:00Z')]);
  expect(revisions.map((r) => [r.cluster, RevisionState[r.state], r.current])).toEqual([
    ['', 'NOT_RUNNING', true],
    ['svc-act', 'ACTIVE', false],
  ]);
  expect(revisions[0].specHash).toBe(clusterSpecHash(rayClusterConfig('9') as never));
  expect(revisions[0].serveConfigV2).toBe(serveConfig());
  expect(revisions[0].createTime).toBeUndefined();
});

test('a cluster whose spec no longer hashes like its annotation offers no spec to revert to', () => {
  const tampered = cluster('svc-act', '2', '2026-11-21T11:00:00Z');
  tampered.metadata.annotations!['rayshift.dev/cluster-spec-hash'] = 'not-this-spec';
  const [revision] = revisionsOf(service('2', 'svc-act'), [tampered]).filter((r) => r.cluster === 'svc-act');
  expect(revision.rayClusterConfig).toBeUndefined();
  expect(revision.state).toBe(RevisionState.ACTIVE);
});

test('clusters created within the same second are ordered by stage of life (pending before active), whatever their names', () => {
  for (const [pendingName, activeName] of [['svc-a', 'svc-z'], ['svc-z', 'svc-a']]) {
    const clusters = [cluster(activeName, '2', '2026-11-21T11:00:00Z'), cluster(pendingName, '3', '2026-11-21T11:00:00Z')];
    const revisions = revisionsOf(service('3', activeName, pendingName), clusters);
    expect(revisions.map((r) => [r.cluster, RevisionState[r.state]])).toEqual([
      [pendingName, 'PENDING'],
      [activeName, 'ACTIVE'],
    ]);
  }
});

test("the serving revision comes from the operator's record, not from its RayCluster, which any RayCluster editor can change", () => {
  // Someone who may edit RayClusters rewrote the serving cluster: another spec (hash annotation to match) and Serve config.
  const tampered = cluster('svc-act', '5', '2026-11-21T11:00:00Z', { serve: serveConfig(4, 'evil.app:build') });
  const svc = service('3', 'svc-act', 'svc-new');
  svc.status = { ...(svc.status as object), servingSpec: { rayClusterName: 'svc-act', specHash: clusterSpecHash(rayClusterConfig('2') as never), rayClusterConfig: rayClusterConfig('2'), serveConfigV2: serveConfig(3) } };
  const active = revisionsOf(svc, [tampered, cluster('svc-new', '3', '2026-11-21T12:00:00Z')]).find((r) => r.state === RevisionState.ACTIVE)!;
  expect(active.serveConfigV2).toBe(serveConfig(3));
  expect(active.specHash).toBe(clusterSpecHash(rayClusterConfig('2') as never));
  expect(clusterSpecHash(active.rayClusterConfig as never)).toBe(active.specHash);
});
