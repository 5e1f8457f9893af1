/**
 * Pure readings of an end-to-end upgrade run (no I/O): the per-second share of the new version,
 * the observed share in each window the data plane held one route weight vector, and the Serve replica
 * counts against `target_capacity`. The tests assert on these; the bench prints them.
 */
import { capacityAdjustedReplicas } from '../../../lib/runtime/serve/capacity';
import type { LoadSecond, RequestRecord } from './load';

/** One distinct weight vector of the managed route rule, as a watch saw it. */
export interface WeightChange {
  /** Epoch ms the watch event arrived. */
  readonly at: number;
  readonly weights: readonly { readonly name: string; readonly weight: number }[];
}

/**
 * One weight vector as Traefik's data plane applied it (traefik-applied-weights.ts): it switched
 * to it after `before` and by `at`, both epoch ms.
 */
export interface AppliedWeightChange extends WeightChange {
  /** When the last poll that still showed the previous vector was sent. */
  readonly before: number;
}

/** The share of `version` among successful answers per second (seconds with fewer than `minAnswers` are left out). */
export function perSecondShare(seconds: readonly LoadSecond[], version: string, minAnswers = 1): { second: number; share: number; answers: number }[] {
  return seconds
    .filter((s) => s.ok >= minAnswers)
    .map((s) => ({ second: s.second, share: (s.versions[version] ?? 0) / s.ok, answers: s.ok }));
}

/**
 * The same per-second share, with each answered request placed in the second it was actually sent
 * (`sentAt`, else due): when the event loop was late, requests due in one second go out in the
 * next, under the next second's weights.
 */
export function perSecondShareBySend(requests: readonly RequestRecord[], startedAt: number, version: string, minAnswers = 1): { second: number; share: number; answers: number }[] {
  const bySecond = new Map<number, { answers: number; of: number }>();
  for (const r of requests) {
    if (r.version === undefined) continue;
    const second = Math.max(0, Math.floor(((r.sentAt ?? r.at) - startedAt) / 1000));
    const b = bySecond.get(second) ?? { answers: 0, of: 0 };
    b.answers++;
    if (r.version === version) b.of++;
    bySecond.set(second, b);
  }
  return [...bySecond.entries()]
    .sort(([a], [b]) => a - b)
    .filter(([, b]) => b.answers >= minAnswers)
    .map(([second, b]) => ({ second, share: b.of / b.answers, answers: b.answers }));
}

/**
 * Seconds in which the share fell below the previous second's by more than `noiseRequests`
 * answers' worth (a weighted round robin splits a second's requests with ±1 granularity, and
 * concurrency reorders answers slightly). Empty when the share never decreased.
 */
export function shareDecreases(series: readonly { second: number; share: number; answers: number }[], noiseRequests = 3): { second: number; from: number; to: number }[] {
  const out: { second: number; from: number; to: number }[] = [];
  for (let i = 1; i < series.length; i++) {
    const prev = series[i - 1];
    const cur = series[i];
    if (cur.share < prev.share - noiseRequests / Math.min(prev.answers, cur.answers)) out.push({ second: cur.second, from: prev.share, to: cur.share });
  }
  return out;
}

/**
 * The ±5-point window check. A window is the stretch in which Traefik's data plane held one
 * weight vector: from the first poll of its API that showed the vector (`AppliedWeightChange.at`)
 * to the last poll that still showed it before the next one (`before`), minus `endGuardMs` (a
 * request sent just before a switch may reach Traefik's router just after it). It does not depend
 * on how long Traefik took to apply a weight the API server had: on a loaded machine that was
 * over a second, and a window started a fixed time after the test's watch saw the weight judged
 * answers of the previous one. Requests are placed by the time they were actually sent (`sentAt`),
 * not the time they were due.
 *
 * Inside a window the observed count of new-version answers `k` out of `n` must satisfy
 * `|k − n·w| ≤ 0.05·n + g`, i.e. the observed percent is within `5 + 100·g/n` points of the weight
 * `w`. The `g = WINDOW_GRANULARITY_REQUESTS` requests are the measurement's granularity, not
 * slack in the data plane: Traefik's weighted round robin is deterministic (earliest deadline
 * first), so over any run of consecutive requests a backend's count is within one request of its
 * weight's share whatever the phase the window starts in, and one more request may cross each
 * window edge because concurrent requests reach Traefik in a slightly different order than they
 * were sent. With n ≥ `minAnswers` = 50 the allowance is at most 9 points; at 100/s a 5 s step's
 * window (n ≈ 415) allows 5.5 points, a 2 s step's (n ≈ 115) 6.7. A window at 0 % or 100 %
 * allows the same: answers from the wrong version there beyond 5 % + 2 requests are a real failure.
 */
export const WINDOW_POINTS = 5;
/** Requests of granularity per window (see `WINDOW_POINTS`). */
export const WINDOW_GRANULARITY_REQUESTS = 2;
/** Default `endGuardMs`. */
export const WINDOW_END_GUARD_MS = 100;
/** Default `minAnswers`: shorter windows are not judged (they say too little at one request's granularity). */
export const WINDOW_MIN_ANSWERS = 50;

/** Allowed deviation of a window of `answers` answers, percentage points (see `WINDOW_POINTS`). */
export function windowTolerancePoints(answers: number, points = WINDOW_POINTS, granularityRequests = WINDOW_GRANULARITY_REQUESTS): number {
  return points + (100 * granularityRequests) / answers;
}

/** The observed share of the new version in one route-weight window. */
export interface WindowShare {
  /** The window's route weight of the new version's backends, percent. */
  readonly expectedPercent: number;
  /** Observed percent of successful answers from the new version, sent in the window. */
  readonly observedPercent: number;
  /** Successful answers in the window, and how many came from the new version. */
  readonly answers: number;
  readonly fromNew: number;
  /** Allowed |observed − expected|, points (`windowTolerancePoints(answers)`). */
  readonly tolerancePoints: number;
  /** Window bounds (epoch ms). */
  readonly from: number;
  readonly to: number;
}

/** When a request met the data plane: its send time when recorded, else its due time. */
function sentTime(r: RequestRecord): number {
  return r.sentAt ?? r.at;
}

/**
 * For each weight vector the data plane applied, the requests sent from its `at` until
 * `endGuardMs` before the next vector's `before` (or `endAt`), compared with the weight of the
 * backends `isNew` picks. Windows with fewer than `minAnswers` answers are left out (too short to
 * measure at this rate).
 */
export function windowShares(
  history: readonly AppliedWeightChange[],
  requests: readonly RequestRecord[],
  newVersion: string,
  isNew: (backend: string) => boolean,
  options: { endGuardMs?: number; endAt: number; minAnswers?: number },
): WindowShare[] {
  const out: WindowShare[] = [];
  const guardMs = options.endGuardMs ?? WINDOW_END_GUARD_MS;
  for (let i = 0; i < history.length; i++) {
    const from = history[i].at;
    const to = i + 1 < history.length ? history[i + 1].before - guardMs : options.endAt;
    if (to <= from) continue;
    const total = history[i].weights.reduce((a, w) => a + w.weight, 0);
    const expected = total === 0 ? 0 : (100 * history[i].weights.filter((w) => isNew(w.name)).reduce((a, w) => a + w.weight, 0)) / total;
    let answers = 0;
    let fromNew = 0;
    for (const r of requests) {
      const t = sentTime(r);
      if (t < from || t >= to || r.version === undefined) continue;
      answers++;
      if (r.version === newVersion) fromNew++;
    }
    if (answers < (options.minAnswers ?? WINDOW_MIN_ANSWERS)) continue;
    out.push({ expectedPercent: expected, observedPercent: (100 * fromNew) / answers, answers, fromNew, tolerancePoints: windowTolerancePoints(answers), from, to });
  }
  return out;
}

/** Windows whose observed share is farther from the weight than their tolerance. Empty when every window holds. */
export function windowsOutOfTolerance(windows: readonly WindowShare[]): WindowShare[] {
  return windows.filter((w) => Math.abs(w.observedPercent - w.expectedPercent) > w.tolerancePoints);
}

/**
 * The data plane's lag at the switch to the new version alone: the last answer from another
 * version, by send time, minus the moment the test's watch saw the first weight vector that gives
 * the new version 100 %. Undefined when no vector does; 0 or less when nothing old was answered
 * after it. A measurement for the report (how long Traefik took to apply a weight), not a check.
 */
export function switchLagMs(history: readonly WeightChange[], requests: readonly RequestRecord[], newVersion: string, isNew: (backend: string) => boolean): number | undefined {
  const full = history.find((h) => h.weights.length > 0 && h.weights.every((w) => isNew(w.name) || w.weight === 0) && h.weights.some((w) => isNew(w.name) && w.weight > 0));
  if (!full) return undefined;
  let last = -Infinity;
  for (const r of requests) if (r.version !== undefined && r.version !== newVersion) last = Math.max(last, sentTime(r));
  return last === -Infinity ? 0 : last - full.at;
}

/** One GET of a cluster's Serve, reduced to what the capacity checks need. */
export interface ServeSample {
  readonly at: number;
  readonly cluster: string;
  /** Top-level `target_capacity` (null = full). */
  readonly targetCapacity: number | null;
  /** `num_replicas` of the deployment as configured (before capacity). */
  readonly numReplicas: number | undefined;
  /** `target_num_replicas` Serve computed. */
  readonly targetReplicas: number;
  /** Replicas in state RUNNING. */
  readonly running: number;
  /** Application status and deployment status. */
  readonly appStatus: string;
  readonly deploymentStatus: string;
}

/**
 * Settled samples (app RUNNING, deployment HEALTHY) whose RUNNING replicas differ from
 * `adj(num_replicas, target_capacity)`, Serve's own rounding. Empty when the replicas followed.
 */
export function replicaMismatches(samples: readonly ServeSample[]): ServeSample[] {
  return samples.filter((s) => {
    if (s.appStatus !== 'RUNNING' || s.deploymentStatus !== 'HEALTHY' || s.numReplicas === undefined) return false;
    return s.running !== capacityAdjustedReplicas(s.numReplicas, s.targetCapacity);
  });
}
