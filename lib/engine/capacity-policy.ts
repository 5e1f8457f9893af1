/**
 * The capacity policy at the start of an upgrade (`spec.rayshift.capacityPolicy`): when the
 * preflight says the new cluster's first Pods do not fit now, `wait` holds the upgrade (no pending
 * cluster, phase Running, reason InsufficientCapacity) and looks again every
 * `CAPACITY_RECHECK_MS`; `fail` refuses it (phase Failed) until the goal spec changes. Either
 * records one Warning Event per new outcome. `fitsAfterOldShrinks` is a misfit here: only a
 * zero-surge upgrade (`shrinkFirst`, not built yet) could start it.
 */
import type { EngineRun } from './engine-run';
import type { ObservedCluster } from './observation';
import { RAY_SERVICE_DEFAULTS } from '../spec/rayservice';
import type { RayServiceStatus } from './status';

/** How long a held (`wait`) upgrade waits before the preflight runs again, ms: node capacity is not watched. */
export const CAPACITY_RECHECK_MS = 10_000;

/** Reason of the Event and the status while an upgrade's Pods do not fit. */
export const CAPACITY_EVENT_REASON = 'InsufficientCapacity';

/**
 * Whether the next engine run would start an upgrade, so the executor should read the cluster's
 * capacity for it: an active cluster serves, nothing is pending, the goal spec differs from the
 * active cluster's and was not given up, and the strategy creates a second cluster.
 */
export function needsCapacityPreflight(status: Partial<RayServiceStatus> | undefined, goalSpecHash: string, clusters: readonly ObservedCluster[], strategy: string): boolean {
  if (strategy === 'None' || status === undefined || status.pendingClusterName !== undefined || status.activeClusterName === undefined) return false;
  const active = clusters.find((c) => c.name === status.activeClusterName);
  return active !== undefined && active.specHash !== goalSpecHash && status.rejectedSpecHash !== goalSpecHash;
}

/** Applies the policy to the run's preflight; true when the upgrade may start now. */
export function admitUpgrade(r: EngineRun): boolean {
  const { s, now } = r;
  const verdict = r.obs.capacity;
  if (verdict === undefined) return true;
  const previous = s.capacity;
  const same = previous !== undefined && previous.outcome === verdict.outcome && previous.message === verdict.message;
  s.capacity = same ? previous : { outcome: verdict.outcome, ...(verdict.message !== undefined ? { message: verdict.message } : {}), at: now };
  if (verdict.outcome === 'fits') return true;
  const policy = r.opts.capacityPolicy ?? RAY_SERVICE_DEFAULTS.capacityPolicy;
  const why = verdict.outcome === 'fitsAfterOldShrinks'
    ? `${verdict.message ?? ''} (it fits only once the old cluster shrinks, which needs capacityPolicy shrinkFirst, not yet supported)`
    : verdict.message ?? '';
  if (!same || s.reason !== CAPACITY_EVENT_REASON) {
    r.events.push({ type: 'Warning', reason: CAPACITY_EVENT_REASON, action: 'CapacityPreflight', message: `upgrade ${policy === 'fail' ? 'not started (capacityPolicy fail)' : 'held until it fits (capacityPolicy wait)'}: ${why}` });
  }
  s.reason = CAPACITY_EVENT_REASON;
  if (policy === 'fail') {
    s.phase = 'Failed';
    s.rejectedSpecHash = r.obs.goalSpecHash;
  } else {
    s.phase = 'Running';
    r.wake(now + CAPACITY_RECHECK_MS);
  }
  return false;
}
