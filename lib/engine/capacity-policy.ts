/**
 * The capacity policy at the start of an upgrade (`spec.rayshift.capacityPolicy`), applied to the
 * preflight's verdict: `wait` starts the upgrade as without a preflight (the pending cluster is
 * created and its Pods wait for the scheduler, as KubeRay's do, so a node autoscaler sees them ask
 * for capacity) with the reason in `status.capacity` and one Warning Event; `fail` refuses it
 * (phase Failed, no pending cluster) until the goal spec changes. `shrinkFirst` acts only on a
 * misfit, like the others: a surge that fits runs as usual (no dip when none is needed); one that
 * fits only once the old cluster's Pods are gone runs without a surge (`capacity.shrinkFirst`, the
 * old cluster gives back a step before the new one takes it); one that does not fit even then is
 * refused as under `fail`, since shrinking the old cluster would cost availability and free too little.
 *
 * When the executor could not read the cluster (`unread`), nothing is known of the fit: `wait`
 * starts the upgrade (it would start one that does not fit too) with one Warning Event
 * `CapacityUnknown`; `fail` and `shrinkFirst` hold it (phase Running, reason `CapacityUnknown`, one
 * Event) and read again every `CAPACITY_REREAD_MS` until a read decides, since they promise not to
 * create a surge that does not fit. The hold is not a refusal: a read that was only interrupted
 * (an API server restarting) costs one retry.
 */
import { isUnread } from './capacity-preflight';
import type { EngineRun } from './engine-run';
import type { ObservedCluster } from './observation';
import { RAY_SERVICE_DEFAULTS } from '../spec/rayservice';
import type { RayServiceStatus } from './status';

/** Reason of the Event (and, under `fail`, of the status) when an upgrade's Pods (or a RoleBasedGroup rollout's first round) do not fit. */
export const CAPACITY_EVENT_REASON = 'InsufficientCapacity';

/** The `action` of that Event. */
export const CAPACITY_EVENT_ACTION = 'CapacityPreflight';

/** Reason of the Event (and, while an upgrade or rollout is held, of the status) when the cluster could not be read for a preflight. */
export const CAPACITY_UNKNOWN_REASON = 'CapacityUnknown';

/** How long a held upgrade or rollout waits before its preflight reads the cluster again (ms). */
export const CAPACITY_REREAD_MS = 10_000;

/** The record's message (and the Event's cause) when the cluster could not be read for a preflight: `why` is the API's answer. */
export function unreadMessage(why: string): string {
  return `the cluster could not be read: ${why}`;
}

/** What a held upgrade or rollout waits for, in its Event and status. */
export const REREAD_NOTE = `the preflight reads the cluster again every ${CAPACITY_REREAD_MS / 1000} s`;

/** Whether `policy` holds an upgrade or rollout whose preflight could not read the cluster (see the file comment). */
export function holdsWhenUnread(policy: string): boolean {
  return policy !== 'wait';
}

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

/**
 * Applies the policy to the run's preflight and records it in `s.capacity`; true when the upgrade
 * starts now (always, unless `fail` meets a misfit). A run decides a preflight once per upgrade
 * (the next has a pending cluster, or a refused spec, and asks for none), so a misfit records one Event.
 */
export function admitUpgrade(r: EngineRun): boolean {
  const { s, now } = r;
  const verdict = r.obs.capacity;
  if (verdict === undefined) {
    s.capacity = undefined;
    return true;
  }
  if (isUnread(verdict)) return admitUnread(r, verdict.unread);
  s.capacity = { outcome: verdict.outcome, ...(verdict.message !== undefined ? { message: verdict.message } : {}), at: now };
  if (verdict.outcome === 'fits') return true;
  const policy = r.opts.capacityPolicy ?? RAY_SERVICE_DEFAULTS.capacityPolicy;
  const zeroSurge = policy === 'shrinkFirst' && verdict.outcome === 'fitsAfterOldShrinks';
  const fail = policy === 'fail' || (policy === 'shrinkFirst' && !zeroSurge);
  const why = verdict.outcome === 'fitsAfterOldShrinks' && policy !== 'shrinkFirst'
    ? `${verdict.message ?? ''} (it fits only once the old cluster shrinks: capacityPolicy shrinkFirst would start it without a surge)`
    : verdict.message ?? '';
  const what = zeroSurge
    ? `started without a surge (capacityPolicy shrinkFirst): the old cluster gives back ${r.opts.maxSurgePercent}% of its capacity before the new one takes it, so the service runs at ${100 - r.opts.maxSurgePercent}% during each step`
    : fail
      ? `not started (capacityPolicy ${policy}${policy === 'shrinkFirst' ? ': it does not fit even once the old cluster has shrunk' : ''})`
      : 'started; its new Pods wait for the scheduler until capacity is free (capacityPolicy wait)';
  if (zeroSurge) s.capacity = { ...s.capacity, shrinkFirst: true };
  r.events.push({ type: 'Warning', reason: CAPACITY_EVENT_REASON, action: CAPACITY_EVENT_ACTION, message: `upgrade ${what}: ${why}` });
  if (!fail) return true;
  s.reason = CAPACITY_EVENT_REASON;
  s.phase = 'Failed';
  s.rejectedSpecHash = r.obs.goalSpecHash;
  return false;
}

/** `admitUpgrade` when the cluster could not be read: `wait` starts, `fail` and `shrinkFirst` hold and read again (one Event per hold). */
function admitUnread(r: EngineRun, why: string): boolean {
  const { s, now } = r;
  const policy = r.opts.capacityPolicy ?? RAY_SERVICE_DEFAULTS.capacityPolicy;
  const held = holdsWhenUnread(policy);
  const message = unreadMessage(why);
  const heldBefore = s.reason === CAPACITY_UNKNOWN_REASON;
  s.capacity = { outcome: 'unknown', message, at: heldBefore && s.capacity ? s.capacity.at : now };
  const what = held
    ? `held (capacityPolicy ${policy} starts no surge it has not placed; ${REREAD_NOTE})`
    : 'started without a capacity preflight (capacityPolicy wait)';
  if (!heldBefore) r.events.push({ type: 'Warning', reason: CAPACITY_UNKNOWN_REASON, action: CAPACITY_EVENT_ACTION, message: `upgrade ${what}: ${message}` });
  if (!held) return true;
  s.reason = CAPACITY_UNKNOWN_REASON;
  r.wake(now + CAPACITY_REREAD_MS);
  return false;
}
