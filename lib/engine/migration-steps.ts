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
 *
 * Zero surge (`capacityPolicy: shrinkFirst` on a misfit): the capacities never sum to more than
 * 100. Each round the giving cluster lowers its capacity by maxSurge first (the dip: the service
 * runs at 100 − maxSurge while it carries the traffic it had), then the taking cluster raises its
 * capacity by what was given back, then traffic moves onto that capacity. In the last round the
 * giver holds at most maxSurge and still carries that much traffic, and a capacity of 0 would serve
 * it with no replica: its traffic moves first (the taker carries up to maxSurge over its capacity,
 * the same dip on the other side), then its capacity goes to 0 and the taker's to 100. Traffic
 * never moves onto a cluster beyond its capacity except in that last round.
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

/**
 * A zero-surge round's next move once traffic sits on the taker up to its capacity (the taker is
 * the pending cluster going forward, the active one rolling back): `take` raises the taker's
 * capacity to what the giver left, `give` lowers the giver's by `maxSurge` (or, with no traffic
 * left on it, to 0), `drain` moves the giver's last traffic to the taker.
 */
function zeroSurgeMove(giverCapacity: number, takerCapacity: number, giverWeight: number, maxSurge: number): { readonly kind: 'take' | 'give'; readonly to: number } | { readonly kind: 'drain' } {
  if (giverCapacity + takerCapacity < 100) return { kind: 'take', to: 100 - giverCapacity };
  if (giverCapacity > maxSurge) return { kind: 'give', to: giverCapacity - maxSurge };
  if (giverWeight > 0) return { kind: 'drain' };
  return { kind: 'give', to: 0 };
}

/**
 * The next forward move from `p`; `jump` moves traffic straight to the pending capacity
 * (promote-now, or all of it in a zero-surge drain); `zeroSurge` keeps the capacities' sum ≤ 100.
 */
export function nextForwardMove(p: MigrationPoint, maxSurge: number, step: number, jump: boolean, zeroSurge = false): ForwardMove {
  const { activeTargetCapacity: atc, pendingTargetCapacity: ptc, activeWeight: aw, pendingWeight: pw } = p;
  if (pw < ptc) return { kind: 'shift-traffic', pendingWeight: jump ? ptc : Math.min(100, pw + step, ptc) };
  if (atc === 0 && pw === 100 && ptc === 100) return { kind: 'promote' };
  if (atc + ptc > 100) return { kind: 'scale-active', activeTargetCapacity: Math.max(atc - maxSurge, 100 - pw) };
  if (!zeroSurge) return { kind: 'scale-pending', pendingTargetCapacity: Math.min(100, ptc + maxSurge) };
  const z = zeroSurgeMove(atc, ptc, aw, maxSurge);
  if (z.kind === 'take') return { kind: 'scale-pending', pendingTargetCapacity: z.to };
  if (z.kind === 'give') return { kind: 'scale-active', activeTargetCapacity: z.to };
  return { kind: 'shift-traffic', pendingWeight: jump ? 100 : Math.min(100, pw + step) };
}

/** The next rollback move from `p`; `zeroSurge` keeps the capacities' sum ≤ 100, as going forward. */
export function nextRollbackMove(p: MigrationPoint, maxSurge: number, step: number, zeroSurge = false): RollbackMove {
  const { activeTargetCapacity: atc, pendingTargetCapacity: ptc, activeWeight: aw, pendingWeight: pw } = p;
  if (aw < atc) return { kind: 'shift-traffic', activeWeight: Math.min(100, aw + step, atc) };
  if (atc === 100 && aw === 100 && ptc === 0) return { kind: 'complete' };
  if (atc + ptc > 100) return { kind: 'scale-pending', pendingTargetCapacity: Math.max(ptc - maxSurge, 100 - aw) };
  if (!zeroSurge) return { kind: 'scale-active', activeTargetCapacity: Math.min(100, atc + maxSurge) };
  const z = zeroSurgeMove(ptc, atc, pw, maxSurge);
  if (z.kind === 'take') return { kind: 'scale-active', activeTargetCapacity: z.to };
  if (z.kind === 'give') return { kind: 'scale-pending', pendingTargetCapacity: z.to };
  return { kind: 'shift-traffic', activeWeight: Math.min(100, aw + step) };
}
