/**
 * Watching the real scheduler while an upgrade runs: the executor reads the pending cluster's Pods
 * whose `PodScheduled` condition is `False`/`Unschedulable` (the scheduler writes its reason, e.g.
 * `0/1 nodes are available: 1 Insufficient nvidia.com/gpu.`, into that condition), and the engine
 * records them in `status.surgeUnschedulable`. Once some have been Unschedulable for
 * `surgeUnschedulableSeconds`, it records one Warning Event per episode and, under
 * `capacityPolicy: fail`, asks for the upgrade to be rolled back instead of waiting for the
 * progress deadline; under `wait` the upgrade goes on waiting (a node autoscaler may add nodes).
 */
import type { EngineRun } from './engine-run';
import { asArray, asObject } from '../spec/read';
import { RAY_SERVICE_DEFAULTS } from '../spec/rayservice';
import type { RayServiceStatus } from './status';

/** The pending cluster's Pods the scheduler could not place, as the executor read them. */
export interface SurgeScheduling {
  /** Pods with `PodScheduled=False`, reason `Unschedulable`. */
  readonly unschedulablePods: number;
  /** The earliest `lastTransitionTime` of those conditions (epoch ms). */
  readonly since: number;
  /** The scheduler's message on the Pod Unschedulable longest, at most `SURGE_MESSAGE_MAX` characters. */
  readonly message: string;
}

/** `status.surgeUnschedulable`: the surge's unschedulable Pods while the upgrade runs. */
export interface SurgeUnschedulableRecord {
  readonly pods: number;
  /** Epoch ms. */
  readonly since: number;
  readonly message: string;
  /** Unschedulable for `surgeUnschedulableSeconds` or longer (reported). */
  readonly boundExceeded: boolean;
}

/** Reason of the Event once the surge is Unschedulable past the bound (and of the rollback under `fail`). */
export const SURGE_EVENT_REASON = 'SurgeUnschedulable';

/** How often an upgrade whose pending head is not ready looks at its Pods again, ms: Pods are not watched, and nothing else wakes such a pass. */
export const SURGE_RECHECK_MS = 5_000;

/** Longest scheduler message kept: the status and the Event stay bounded whatever the scheduler writes. */
export const SURGE_MESSAGE_MAX = 1024;

/** Whether the executor should read the pending cluster's Pods for the next run: a pending cluster exists. */
export function needsSurgeScheduling(status: Partial<RayServiceStatus> | undefined): boolean {
  return status?.pendingClusterName !== undefined;
}

/**
 * The Unschedulable Pods among `pods` (listed Pod objects), or undefined when there are none. A
 * condition without a readable `lastTransitionTime` counts from `now` (the executor's read time).
 */
export function surgeSchedulingOf(pods: readonly unknown[], now: number): SurgeScheduling | undefined {
  let count = 0;
  let since = Infinity;
  let message = '';
  for (const p of pods) {
    const pod = asObject(p);
    if (asObject(pod.metadata).deletionTimestamp !== undefined) continue;
    const c = asArray(asObject(pod.status).conditions).map(asObject).find((x) => x.type === 'PodScheduled');
    if (c === undefined || c.status !== 'False' || c.reason !== 'Unschedulable') continue;
    count++;
    const parsed = Date.parse(String(c.lastTransitionTime));
    const at = Number.isFinite(parsed) ? parsed : now;
    if (at < since) {
      since = at;
      message = String(c.message ?? '').slice(0, SURGE_MESSAGE_MAX);
    }
  }
  return count === 0 ? undefined : { unschedulablePods: count, since, message };
}

/**
 * Records the run's observed surge scheduling in `s.surgeUnschedulable` and wakes the engine when
 * the bound will pass (or, while the pending head is not ready, every `SURGE_RECHECK_MS`). True
 * when the upgrade must be rolled back: Unschedulable past the bound under `capacityPolicy: fail`,
 * and no rollback runs yet.
 */
export function judgeSurgeScheduling(r: EngineRun): boolean {
  const { s, now } = r;
  const seen = r.obs.surgeScheduling;
  const before = s.surgeUnschedulable;
  if (seen === undefined) {
    s.surgeUnschedulable = undefined;
    if (r.pending?.headReady !== true) r.wake(now + SURGE_RECHECK_MS);
    return false;
  }
  const boundSeconds = r.opts.surgeUnschedulableSeconds ?? RAY_SERVICE_DEFAULTS.surgeUnschedulableSeconds;
  const exceeded = now - seen.since >= boundSeconds * 1000;
  s.surgeUnschedulable = { pods: seen.unschedulablePods, since: seen.since, message: seen.message, boundExceeded: exceeded };
  if (!exceeded) {
    r.wake(seen.since + boundSeconds * 1000);
    return false;
  }
  const policy = r.opts.capacityPolicy ?? RAY_SERVICE_DEFAULTS.capacityPolicy;
  const fail = policy === 'fail' && s.rollback === undefined;
  if (before?.boundExceeded !== true) {
    const pods = `${seen.unschedulablePods} Pod${seen.unschedulablePods === 1 ? '' : 's'}`;
    const then = fail ? 'rolling the upgrade back (capacityPolicy fail)' : s.rollback !== undefined ? `rolling back (${s.rollback})` : `the upgrade waits for capacity (capacityPolicy ${policy})`;
    r.events.push({
      type: 'Warning',
      reason: SURGE_EVENT_REASON,
      action: 'SurgeScheduling',
      message: `${pods} of the new cluster ${s.pendingClusterName ?? ''} Unschedulable for ${Math.floor((now - seen.since) / 1000)} s (surgeUnschedulableSeconds ${boundSeconds}); ${then}: ${seen.message}`,
    });
  }
  return fail;
}
