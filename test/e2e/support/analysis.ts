/**
 * Pure readings of an end-to-end upgrade run (no I/O): the per-second share of the new version,
 * the observed share in each route-weight window once the step has settled, and the Serve replica
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

/** The share of `version` among successful answers per second (seconds with fewer than `minAnswers` are left out). */
export function perSecondShare(seconds: readonly LoadSecond[], version: string, minAnswers = 1): { second: number; share: number; answers: number }[] {
  return seconds
    .filter((s) => s.ok >= minAnswers)
    .map((s) => ({ second: s.second, share: (s.versions[version] ?? 0) / s.ok, answers: s.ok }));
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

/** The observed share of the new version in one route-weight window. */
export interface WindowShare {
  /** The window's route weight of the new version's backends, percent. */
  readonly expectedPercent: number;
  /** Observed percent of successful answers from the new version, sent in the settled window. */
  readonly observedPercent: number;
  /** Successful answers in the settled window. */
  readonly answers: number;
  /** Window bounds (epoch ms), after settling. */
  readonly from: number;
  readonly to: number;
}

/**
 * For each weight change, the requests sent from `at + settleMs` until the next change (or
 * `endAt`), compared with the weight of the backends `isNew` picks. Windows with fewer than
 * `minAnswers` answers are left out (too short to measure at this rate).
 */
export function windowShares(
  history: readonly WeightChange[],
  requests: readonly RequestRecord[],
  newVersion: string,
  isNew: (backend: string) => boolean,
  options: { settleMs: number; endAt: number; minAnswers?: number },
): WindowShare[] {
  const out: WindowShare[] = [];
  for (let i = 0; i < history.length; i++) {
    const from = history[i].at + options.settleMs;
    const to = i + 1 < history.length ? history[i + 1].at : options.endAt;
    if (to <= from) continue;
    const total = history[i].weights.reduce((a, w) => a + w.weight, 0);
    const expected = total === 0 ? 0 : (100 * history[i].weights.filter((w) => isNew(w.name)).reduce((a, w) => a + w.weight, 0)) / total;
    let answers = 0;
    let fromNew = 0;
    for (const r of requests) {
      if (r.at < from || r.at >= to || r.version === undefined) continue;
      answers++;
      if (r.version === newVersion) fromNew++;
    }
    if (answers < (options.minAnswers ?? 20)) continue;
    out.push({ expectedPercent: expected, observedPercent: (100 * fromNew) / answers, answers, from, to });
  }
  return out;
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
