/**
 * The `rollback` steering verb of RoleBasedGroup rollouts rayshift's executor runs, in one place:
 * whether it applies to a group's coordinations (and why not, naming the phase), the merge patch it
 * makes, and how the executor reads the request back. The verb names the revisions it rolls back
 * (`rayshift.dev/rollback: <revision>,…`, each a coordination's `revision`), so a late or repeated
 * request never touches a later rollout and the executor leaves it in place. The API server, the
 * CLI's kubeconfig path and the reconciler ask here; the executor starts the same rollback rounds as
 * a failed gate (`rbg-rollback.ts`). Pure and free of Node types.
 */
import type { CoordinationStatus } from './rbg-coordination-status';
import { LAST_STEERING_ANNOTATION, lastSteeringOf, type SteeringRecord } from './steering';

/** Steering annotation of a RoleBasedGroup: the coordination revisions, comma-separated, a person asked to roll back. */
export const RBG_ROLLBACK_ANNOTATION = 'rayshift.dev/rollback';

/** The coordinations a rollback applies to: rollouts in flight (`Progressing`) or stopped (`Failed`). */
function inFlight(coordinations: readonly CoordinationStatus[]): CoordinationStatus[] {
  return coordinations.filter((c) => c.phase === 'Progressing' || c.phase === 'Failed');
}

/**
 * Why `rollback` does not apply to a group whose executor reported `coordinations`, or `undefined`
 * when it does. A role with every replica updated has made the new revision its workload's current
 * one (RBG's RoleInstanceSet, a StatefulSet), which recreates any replica from it: no rollback round
 * can return such a role, so the verb is refused rather than left running forever.
 */
export function rbgRollbackRefusal(coordinations: readonly CoordinationStatus[]): string | undefined {
  const phases = coordinations.map((c) => `${c.name} ${c.phase}`).join(', ') || 'no coordination reported';
  const flying = inFlight(coordinations);
  if (flying.length === 0) {
    const back = coordinations.some((c) => c.phase === 'RollingBack');
    return `${back ? 'cannot rollback: a rollback is already running' : 'nothing to rollback: no rollout is in flight'} (${phases})`;
  }
  for (const c of flying) {
    const done = c.roles.find((r) => r.desired > 0 && r.updated >= r.desired && r.partition === 0);
    if (done) return `cannot rollback ${c.name}: ${done.name} has every replica (${done.updated}/${done.desired}) on the new revision, which its workload now recreates replicas from; revert the template to roll forward instead (${phases})`;
  }
  return undefined;
}

/** The revisions `rollback` names: every coordination in flight (checked with {@link rbgRollbackRefusal}). */
export function rbgRollbackRevisions(coordinations: readonly CoordinationStatus[]): string[] {
  return inFlight(coordinations).map((c) => c.revision);
}

/** The JSON merge patch of `rollback` on a group whose executor reported `coordinations`: the revisions named, and `record` as the last steering. */
export function rbgRollbackPatch(coordinations: readonly CoordinationStatus[], record: SteeringRecord): { metadata: { annotations: Record<string, string> } } {
  return { metadata: { annotations: { [RBG_ROLLBACK_ANNOTATION]: rbgRollbackRevisions(coordinations).join(','), [LAST_STEERING_ANNOTATION]: JSON.stringify(record) } } };
}

/** A person's rollback of coordination revisions, as the executor reads it. */
export interface RbgRollbackRequest {
  /** Coordination revisions to roll back. */
  readonly revisions: readonly string[];
  /** Who asked and why, in words (from the last steering record, when it is the rollback's). */
  readonly cause: string;
}

/** The rollback a group's annotations ask for, if any. */
export function rbgRollbackRequestOf(annotations: Readonly<Record<string, string>> | undefined): RbgRollbackRequest | undefined {
  const revisions = (annotations?.[RBG_ROLLBACK_ANNOTATION] ?? '').split(',').map((r) => r.trim()).filter((r) => r !== '');
  if (revisions.length === 0) return undefined;
  const record = lastSteeringOf(annotations);
  const who = record?.verb === 'rollback' && record.user !== '' ? ` by ${record.user}` : '';
  const why = record?.verb === 'rollback' && record.reason !== '' ? `: ${record.reason}` : '';
  return { revisions, cause: `rollback requested${who}${why}` };
}
