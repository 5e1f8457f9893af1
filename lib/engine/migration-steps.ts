/**
 * The step rules of an incremental migration, on plain numbers. They decide the next move once the
 * world has converged on the current intent; waiting (readiness, intervals) is decided elsewhere.
 *
 * Forward (KubeRay's order): move traffic until it reaches the pending target capacity, then drop
 * the active capacity while both sum to more than 100, else raise the pending capacity by
 * maxSurge; finish when the active capacity is 0 and the pending weight 100. A traffic step is
 * `min(step, pendingTC − pendingWeight)`, so a step that does not divide maxSurge is cut at the
 * capacity: maxSurge 25 / step 10 gives 10, 20, 25, 35, 45, 50, 60, 70, 75, … (KubeRay #4636).
 *
 * Rollback mirrors it (KubeRay's `reconcileRollbackState`): traffic back to the active cluster
 * up to its target capacity, then the pending capacity down while the sum exceeds 100, else the
 * active capacity up, until active is at 100/100 and pending capacity at 0.
 *
 * Unlike KubeRay, a capacity is never lowered below the traffic its cluster still receives
 * (`max(tc − maxSurge, weight)`), so weight ≤ target capacity holds on both sides at every step
 * even when maxSurge does not divide 100 or a rollback starts between two steps.
 */

/** The four numbers a migration moves. */
export interface MigrationPoint {
  readonly activeTargetCapacity: number;
  readonly pendingTargetCapacity: number;
  readonly activeWeight: number;
  readonly pendingWeight: number;
}

/** Next forward move. */
export type ForwardMove =
  | { readonly kind: 'shift-traffic'; readonly pendingWeight: number }
  | { readonly kind: 'scale-active'; readonly activeTargetCapacity: number }
  | { readonly kind: 'scale-pending'; readonly pendingTargetCapacity: number }
  | { readonly kind: 'promote' };

/** Next rollback move. */
export type RollbackMove =
  | { readonly kind: 'shift-traffic'; readonly activeWeight: number }
  | { readonly kind: 'scale-active'; readonly activeTargetCapacity: number }
  | { readonly kind: 'scale-pending'; readonly pendingTargetCapacity: number }
  | { readonly kind: 'complete' };

/** The next forward move from `p`; `jump` moves traffic straight to the pending capacity (promote-now). */
export function nextForwardMove(p: MigrationPoint, maxSurge: number, step: number, jump: boolean): ForwardMove {
  const { activeTargetCapacity: atc, pendingTargetCapacity: ptc, pendingWeight: pw } = p;
  if (pw < ptc) return { kind: 'shift-traffic', pendingWeight: jump ? ptc : Math.min(100, pw + step, ptc) };
  if (atc === 0 && pw === 100) return { kind: 'promote' };
  if (atc + ptc > 100) return { kind: 'scale-active', activeTargetCapacity: Math.max(atc - maxSurge, 100 - pw) };
  return { kind: 'scale-pending', pendingTargetCapacity: Math.min(100, ptc + maxSurge) };
}

/** The next rollback move from `p`. */
export function nextRollbackMove(p: MigrationPoint, maxSurge: number, step: number): RollbackMove {
  const { activeTargetCapacity: atc, pendingTargetCapacity: ptc, activeWeight: aw } = p;
  if (aw < atc) return { kind: 'shift-traffic', activeWeight: Math.min(100, aw + step, atc) };
  if (atc === 100 && aw === 100 && ptc === 0) return { kind: 'complete' };
  if (atc + ptc > 100) return { kind: 'scale-pending', pendingTargetCapacity: Math.max(ptc - maxSurge, 100 - aw) };
  return { kind: 'scale-active', activeTargetCapacity: Math.min(100, atc + maxSurge) };
}
