/**
 * Watching the real scheduler while an upgrade runs: the executor reads the pending cluster's Pods
 * whose `PodScheduled` condition is `False`/`Unschedulable` (the scheduler writes its reason, e.g.
 * `0/1 nodes are available: 1 Insufficient nvidia.com/gpu.`, into that condition), and the engine
 * records them in `status.surgeUnschedulable`. Once some have been Unschedulable for
 * `surgeUnschedulableSeconds`, it records one Warning Event per episode and, under
 * `capacityPolicy: fail`, asks for the upgrade to be rolled back instead of waiting for the
 * progress deadline; under `wait` the upgrade goes on waiting (a node autoscaler may add nodes).
 * The verdict (`judgeSurge`) and the Event's words (`surgeEventMessage`) are shared with a
 * RoleBasedGroup rollout's watch (`surgeOr`, rbg-coordination.ts; its Pods read as `rbg-surge-scheduling.ts` says).
 */
import type { EngineRun } from './engine-run';
import { asArray, asObject } from '../spec/read';
import type { CapacityPolicy } from '../spec/capacity-policy';
import { RAY_SERVICE_DEFAULTS } from '../spec/rayservice';
import { WAITING_ON_SERVE, type RayServiceStatus } from './status';

/** The pending cluster's Pods the scheduler could not place, as the executor read them. */
export interface SurgeScheduling {
  /** Pods with `PodScheduled=False`, reason `Unschedulable`. */
  readonly unschedulablePods: number;
  /** The earliest `lastTransitionTime` of those conditions (epoch ms). */
  readonly since: number;
  /** The scheduler's message on the Pod Unschedulable longest, at most `SURGE_MESSAGE_MAX` characters. */
  readonly message: string;
  /** The roles of those Pods, when the executor tells them apart (a RoleBasedGroup's). */
  readonly roles?: readonly string[];
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

/** The Event's `action`: the scheduler watch, not the recorder's own. */
export const SURGE_EVENT_ACTION = 'SurgeScheduling';

/** How often an upgrade whose pending head is not ready looks at its Pods again, ms: Pods are not watched, and nothing else wakes such a pass. */
export const SURGE_RECHECK_MS = 5_000;

/** Longest scheduler message kept: the status and the Event stay bounded whatever the scheduler writes. */
export const SURGE_MESSAGE_MAX = 1024;

/**
 * Whether the executor should read the pending cluster's Pods for the next run: a pending cluster
 * exists and the upgrade waits on it (`WAITING_ON_SERVE`: only then can a Pod the scheduler cannot
 * place hold it up; a bound is counted from the Pod's own condition time, so a Pod first read at
 * the next wait is judged as if read all along), or Pods were recorded Unschedulable (read until
 * none is, which clears the record). Not every pass: a list per pass was 7 Pod lists per traffic
 * step at N = 100 in the vs-KubeRay bench's audit (issue 37).
 */
export function needsSurgeScheduling(status: Partial<RayServiceStatus> | undefined): boolean {
  if (status?.pendingClusterName === undefined) return false;
  return status.surgeUnschedulable !== undefined || (status.reason !== undefined && WAITING_ON_SERVE.has(status.reason));
}

/**
 * The Unschedulable Pods among `pods` (listed Pod objects), or undefined when there are none. A
 * condition without a readable `lastTransitionTime` counts from `now` (the executor's read time).
 * With `notBefore` (epoch ms), a Pod Unschedulable since before then is not counted: it was so
 * before the rollout started, which it cannot be charged to.
 */
export function surgeSchedulingOf(pods: readonly unknown[], now: number, notBefore = -Infinity): SurgeScheduling | undefined {
  let count = 0;
  let since = Infinity;
  let message = '';
  // Conditions carry whole seconds: a Pod Unschedulable in the rollout's first second reads as that second's start.
  const from = Math.floor(notBefore / 1000) * 1000;
  for (const p of pods) {
    const pod = asObject(p);
    if (asObject(pod.metadata).deletionTimestamp !== undefined) continue;
    const c = asArray(asObject(pod.status).conditions).map(asObject).find((x) => x.type === 'PodScheduled');
    if (c === undefined || c.status !== 'False' || c.reason !== 'Unschedulable') continue;
    const parsed = Date.parse(String(c.lastTransitionTime));
    const at = Number.isFinite(parsed) ? parsed : now;
    if (at < from) continue;
    count++;
    if (at < since) {
      since = at;
      message = String(c.message ?? '').slice(0, SURGE_MESSAGE_MAX);
    }
  }
  return count === 0 ? undefined : { unschedulablePods: count, since, message };
}

/**
 * What the scheduler watch decides on one pass, for a RayService's upgrade and a RoleBasedGroup's
 * rollout alike (`judgeSurge`).
 */
export interface SurgeJudgement {
  /** Unschedulable for the bound or longer. */
  readonly boundExceeded: boolean;
  /** When the bound passes (epoch ms), while it has not yet: the executor's wake. */
  readonly wakeAt?: number;
  /** The bound passed and the previous pass had not said so: this episode's one Event is due. */
  readonly report: boolean;
  /** Past the bound under `capacityPolicy: fail`: the caller rolls back (unless it already does). */
  readonly fail: boolean;
}

/**
 * The verdict on Pods `seen` Unschedulable: past `boundSeconds` or not, the wake until then, the
 * Event once per episode (`reportedBefore`: the previous pass's record said the bound had passed;
 * an episode ends when no Pod is Unschedulable, which clears the record), and `fail` under `policy` fail.
 */
export function judgeSurge(seen: SurgeScheduling, reportedBefore: boolean, boundSeconds: number, policy: CapacityPolicy, now: number): SurgeJudgement {
  const boundAt = seen.since + boundSeconds * 1000;
  if (now < boundAt) return { boundExceeded: false, wakeAt: boundAt, report: false, fail: false };
  return { boundExceeded: true, report: !reportedBefore, fail: policy === 'fail' };
}

/**
 * The Event's words, for both callers: `3 Pods of the new cluster svc-x Unschedulable for 61 s
 * (surgeUnschedulableSeconds 60); <then>: <the scheduler's message>`, `subject` naming whose Pods.
 */
export function surgeEventMessage(seen: SurgeScheduling, subject: string, boundSeconds: number, then: string, now: number): string {
  return `${podsInWords(seen.unschedulablePods)} of ${subject} Unschedulable for ${Math.floor((now - seen.since) / 1000)} s (surgeUnschedulableSeconds ${boundSeconds}); ${then}: ${seen.message}`;
}

/** `1 Pod`, `2 Pods`: the scheduler watch's count in its Events and status lines. */
export function podsInWords(n: number): string {
  return `${n} Pod${n === 1 ? '' : 's'}`;
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
  const policy = r.opts.capacityPolicy ?? RAY_SERVICE_DEFAULTS.capacityPolicy;
  const verdict = judgeSurge(seen, before?.boundExceeded === true, boundSeconds, policy, now);
  s.surgeUnschedulable = { pods: seen.unschedulablePods, since: seen.since, message: seen.message, boundExceeded: verdict.boundExceeded };
  if (verdict.wakeAt !== undefined) r.wake(verdict.wakeAt);
  const fail = verdict.fail && s.rollback === undefined;
  if (verdict.report) {
    const then = fail ? 'rolling the upgrade back (capacityPolicy fail)' : s.rollback !== undefined ? `rolling back (${s.rollback})` : `the upgrade waits for capacity (capacityPolicy ${policy})`;
    r.events.push({ type: 'Warning', reason: SURGE_EVENT_REASON, action: SURGE_EVENT_ACTION, message: surgeEventMessage(seen, `the new cluster ${s.pendingClusterName ?? ''}`, boundSeconds, then, now) });
  }
  return fail;
}
