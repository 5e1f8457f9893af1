/**
 * The runtime half of a rollback round (lib/engine/rbg-rollback.ts): replaces the replicas of one
 * role that run the abandoned revision below the partition the round wrote. RBG's workloads never
 * roll a replica back themselves; they recreate a missing ordinal below their partition from their
 * current revision (the one before the rollout), so deleting such a replica returns it. Observed with
 * RBG v0.7.0's RoleInstanceSet: with its partition raised from 2 to 3, nothing moved back; its
 * RoleInstance `-2` deleted came back at the current revision, its Pod on the old image.
 *
 * RBG v0.8's webhook admits no partition ≥ replicas, and its RoleInstanceSet recreates a missing
 * ordinal at or above the partition from the new revision: the ordinals a round cannot put below
 * the partition (`RoleReturn.revertBelow`) are reverted in place instead, as the RoleInstanceSet's
 * own in-place update writes a RoleInstance (pkg/inplace/instance/inplaceupdate, v0.8.0-alpha.5),
 * with the current revision: its ControllerRevision's `spec.roleInstanceTemplate` as the spec (plus
 * the in-place readiness gate), its name as the revision label, and the in-place update state, once
 * the RoleInstanceSet carries `paused` (else it would update the instance forward again). The
 * RoleInstance's controller then brings its Pods to that spec; the RoleInstanceSet, paused, leaves
 * an existing instance at its revision.
 *
 * Which replicas go is the engine's choice: by ordinal (`orderedReturn`, lib/engine/rbg-ordered-return.ts);
 * on a RoleInstanceSet in RBG's Stateless pattern (routed roles), which names its instances
 * `<set>-<random>`, by revision and readiness (`unorderedReturn`, lib/engine/rbg-unordered-return.ts,
 * with what that set does read in RBG's source); the deletes and reverts are the same.
 */
import type { ReplicaReturn, RoleReturn } from '../../engine/rbg-coordination-types';
import { orderedReturn } from '../../engine/rbg-ordered-return';
import { unorderedReturn } from '../../engine/rbg-unordered-return';
import { CONTROLLER_REVISION_LABEL, ROLE_INSTANCE_TYPE, sameRevision, statelessRevisionLabel } from '../../spec/object-names';
import { JsonObject, asArray, asObject } from '../../spec/read';
import { KubeClient } from '../kube/client';
import { KubeApiError } from '../kube/errors';
import { KnownTypes, KubeObject, ResourceType } from '../kube/types';
import { podReady } from '../kube/pod-ready';
import { deleteReplica } from './delete-replica';
import { controlledReplicas, controls, desiredReplicas, isStatelessSet, roleInstanceReady, workloadOf, workloadStatus } from './workloads';

/** apps/v1 ControllerRevision: a RoleInstanceSet's revisions of its template. */
const CONTROLLER_REVISION_TYPE: ResourceType = { apiVersion: 'apps/v1', kind: 'ControllerRevision', plural: 'controllerrevisions', namespaced: true };
/** RBG's annotation of an in-place update's state on a RoleInstance (`constants.InPlaceUpdateStateKey`). */
const IN_PLACE_UPDATE_STATE = 'rbg.workloads.x-k8s.io/inplace-update-state';
/** The readiness gate RBG adds to every RoleInstance it updates in place. */
const IN_PLACE_READY_GATE = 'RoleInstanceInPlaceUpdateReady';

/** What one return did. */
export interface Returned {
  /** Replicas deleted (their workload recreates them from its current revision). */
  readonly deleted: number;
  /** RoleInstances reverted in place to the current revision. */
  readonly reverted: number;
}

/** The kind of each workload's replicas, named `<workload>-<ordinal>` and labelled with their revision. */
const REPLICA_TYPES: Readonly<Record<string, ResourceType>> = { RoleInstanceSet: ROLE_INSTANCE_TYPE, StatefulSet: KnownTypes.Pod };

/**
 * Deletes the replicas of the role `ret` names whose ordinal is below `ret.below` and whose
 * revision label is the workload's update revision (the abandoned one), a Ready one only within the
 * role's `ret.maxUnavailable` as the same list of its replicas shows them (the rest wait for a later
 * pass), once the workload carries a
 * partition of at least `ret.below` (else a replica would come back on the abandoned revision), and
 * reverts in place those from `ret.below` up to `ret.revertBelow` (RoleInstances only); only
 * replicas the workload controls (its uid in their controller reference) are touched. On a
 * Stateless RoleInstanceSet the replicas are the ones `unorderedReturn` names instead of ordinals.
 * Each delete is guarded by the replica's uid and each revert by its resourceVersion, so a replica
 * replaced meanwhile stays. Nothing is done when the workload is not there yet, or is of a kind
 * without replicas it could recreate (a Deployment, a LeaderWorkerSet).
 */
export async function returnReplicas(client: KubeClient, group: KubeObject, ret: RoleReturn): Promise<Returned> {
  const none: Returned = { deleted: 0, reverted: 0 };
  const role = asObject(asArray(asObject(group.spec).roles)[ret.index]);
  if (role.name !== ret.name) return none;
  const ref = workloadOf(group as unknown as JsonObject, role);
  const replicaType = REPLICA_TYPES[ref.type.kind];
  const namespace = String(group.metadata.namespace);
  if (!replicaType) return none;
  const workload = await client.tryGet(ref.type, ref.name, namespace);
  if (!workload) return none;
  const status = workloadStatus(workload as unknown as JsonObject);
  const current = status.currentRevision;
  const abandoned = status.updateRevision;
  if (abandoned === undefined || current === undefined || abandoned === current || (status.partition ?? -1) < ret.below) return none;
  const stateless = isStatelessSet(workload);
  // A reverted replica stays on the current revision only while its RoleInstanceSet is paused.
  const revertable = replicaType === ROLE_INSTANCE_TYPE && asObject(asObject(workload.spec).updateStrategy).paused === true;
  // Every replica the workload controls, from one list (its selector): the ones a return may take
  // down are counted against the ones down in that same list.
  const selector = asObject(asObject(workload.spec).selector).matchLabels as Record<string, string> | undefined;
  const listed = await client.list(replicaType, { namespace, ...(selector ? { labelSelector: selector } : {}) });
  // One replica as the engine's choice reads it, with whether it runs the abandoned revision.
  const state = (r: KubeObject, onAbandoned: boolean) => ({
    name: String(r.metadata.name),
    abandoned: onAbandoned,
    ready: replicaType === ROLE_INSTANCE_TYPE ? roleInstanceReady(r) : podReady(r),
    terminating: Boolean(r.metadata.deletionTimestamp),
  });
  let mine: KubeObject[];
  let chosen: ReplicaReturn;
  if (stateless) {
    // Its instances carry the revision's short hash (statelessRevisionLabel), each compared as RBG
    // compares them; the ones being deleted count as returned.
    mine = listed.items.filter((r) => controls(workload, r));
    const onAbandoned = (r: KubeObject) => sameRevision(r.metadata.labels?.[CONTROLLER_REVISION_LABEL], abandoned);
    chosen = unorderedReturn(
      mine.map((r) => state(r, onAbandoned(r))),
      desiredReplicas(workload),
      ret,
      revertable,
    );
  } else {
    // Only the replicas this workload controls (by uid): a same-named one of an earlier workload is not its to return.
    const controlled = controlledReplicas(workload, listed.items);
    mine = controlled.map((x) => x.replica);
    chosen = orderedReturn(
      controlled.map(({ replica: r, ordinal }) => ({ ...state(r, r.metadata.labels?.[CONTROLLER_REVISION_LABEL] === abandoned), ordinal })),
      desiredReplicas(workload),
      ret,
      revertable,
    );
  }
  const named = (names: readonly string[]) => names.map((n) => mine.find((r) => r.metadata.name === n)!);
  const toDelete = named(chosen.remove);
  const toRevert = named(chosen.revert);
  let deleted = 0;
  for (const replica of toDelete) if (await deleteReplica(client, replicaType, replica, namespace)) deleted++;
  let reverted = 0;
  if (toRevert.length > 0) {
    const template = await revisionTemplate(client, current, namespace);
    const label = stateless ? statelessRevisionLabel(current) : current;
    for (const replica of toRevert) if (await revertInstance(client, replica, current, label, template)) reverted++;
  }
  return { deleted, reverted };
}

/** `spec.roleInstanceTemplate` of the ControllerRevision `name` (a RoleInstanceSet's revision of its template). */
async function revisionTemplate(client: KubeClient, name: string, namespace: string): Promise<JsonObject> {
  const rev = await client.get(CONTROLLER_REVISION_TYPE, name, namespace);
  const template = asObject(asObject(asObject((rev as unknown as JsonObject).data).spec).roleInstanceTemplate);
  if (asArray(template.components).length === 0) throw new Error(`ControllerRevision ${namespace}/${name} has no spec.roleInstanceTemplate.components: cannot revert a RoleInstance to it`);
  return template;
}

/**
 * Writes `template` (with the in-place readiness gate) into the RoleInstance `r` with the revision
 * label `label` and the in-place update state of `revision`; PUT guarded by the resourceVersion read.
 * False when the instance changed meanwhile (the next pass looks again).
 */
async function revertInstance(client: KubeClient, r: KubeObject, revision: string, label: string, template: JsonObject): Promise<boolean> {
  const gates = asArray(template.readinessGates).map(asObject);
  const spec = { ...template, readinessGates: gates.some((g) => g.conditionType === IN_PLACE_READY_GATE) ? gates : [...gates, { conditionType: IN_PLACE_READY_GATE }] };
  const state = JSON.stringify({ revision, updateTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
  const next = {
    ...r,
    metadata: { ...r.metadata, labels: { ...r.metadata.labels, [CONTROLLER_REVISION_LABEL]: label }, annotations: { ...r.metadata.annotations, [IN_PLACE_UPDATE_STATE]: state } },
    spec,
  } as KubeObject;
  try {
    await client.update(next);
    return true;
  } catch (err) {
    if (err instanceof KubeApiError && (err.isConflict || err.statusCode === 404)) return false;
    throw err;
  }
}
