/**
 * The semantics of analysis, on plain values: what one measurement means against a success
 * condition, and where a metric and a run stand after the measurements so far. Argo Rollouts'
 * rules (`failureLimit`, `inconclusiveLimit`, `consecutiveSuccessLimit`, `count`), with one
 * deliberate difference: a measurement without a number (no data, NaN, an unreachable or failing
 * Prometheus) is inconclusive, never an error that is retried as if nothing happened.
 */
import type { AnalysisSuccessCondition, ResolvedAnalysisMetric } from '../spec/analysis';

/** The meaning of one measurement. */
export type MeasurementResult = 'Successful' | 'Failed' | 'Inconclusive';

/** Where a metric or a run stands. */
export type AnalysisPhase = 'Running' | 'Successful' | 'Failed' | 'Inconclusive';

/** A measurement's meaning and why. */
export interface Judgement {
  readonly result: MeasurementResult;
  /** Names the value and the bound that decided, or why there is no value. */
  readonly message: string;
}

/** What an executor measured: the new cluster's value, the old cluster's when the condition compares them, or the error. */
export interface MeasuredValues {
  readonly value?: number;
  readonly activeValue?: number;
  readonly error?: string;
}

/**
 * True when a measurement of the condition at `percent` (the new cluster's share of the traffic)
 * compares the new cluster with the old one, so the old one is measured too: the condition has a
 * `maxAboveActive…` bound and the old cluster still carries traffic. At 100 % it carries none, so it
 * has no value to compare with (a rate over no requests is 0/0); the comparison held at every
 * weight before, and the absolute bounds alone judge the last gate.
 */
export function comparesWithActive(c: AnalysisSuccessCondition, percent: number): boolean {
  return hasActiveBound(c) && percent < 100;
}

/** True when the condition has a `maxAboveActive…` bound. */
function hasActiveBound(c: AnalysisSuccessCondition): boolean {
  return c.maxAboveActive !== undefined || c.maxAboveActivePercent !== undefined;
}

/** Judges one measurement against `c`, taken at `percent` (see `comparesWithActive`). */
export function judgeMeasurement(c: AnalysisSuccessCondition, m: MeasuredValues, percent: number): Judgement {
  if (m.error !== undefined) return { result: 'Inconclusive', message: m.error };
  const v = m.value;
  if (v === undefined || !Number.isFinite(v)) return { result: 'Inconclusive', message: `no value (${v === undefined ? 'empty result' : String(v)})` };
  const compare = comparesWithActive(c, percent);
  const a = m.activeValue;
  if (compare && (a === undefined || !Number.isFinite(a))) {
    return { result: 'Inconclusive', message: `no value for the old cluster (${a === undefined ? 'empty result' : String(a)})` };
  }
  if (c.maximum !== undefined && v > c.maximum) return failed(`${fmt(v)} > maximum ${fmt(c.maximum)}`);
  if (c.minimum !== undefined && v < c.minimum) return failed(`${fmt(v)} < minimum ${fmt(c.minimum)}`);
  if (compare) {
    const active = a as number;
    if (c.maxAboveActive !== undefined && v - active > c.maxAboveActive) {
      return failed(`${fmt(v)} is ${fmt(v - active)} above the old cluster's ${fmt(active)}; allowed ${fmt(c.maxAboveActive)}`);
    }
    if (c.maxAboveActivePercent !== undefined && v > active * (1 + c.maxAboveActivePercent / 100)) {
      return failed(`${fmt(v)} is over ${c.maxAboveActivePercent}% above the old cluster's ${fmt(active)}`);
    }
    return { result: 'Successful', message: `${fmt(v)} (old cluster ${fmt(active)})` };
  }
  if (hasActiveBound(c)) {
    return { result: 'Successful', message: `${fmt(v)} (not compared: the old cluster carries no traffic at ${percent}%)` };
  }
  return { result: 'Successful', message: fmt(v) };
}

function failed(message: string): Judgement {
  return { result: 'Failed', message };
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
}

/** A metric's counts within one run. */
export interface MetricCounts {
  readonly taken: number;
  readonly successes: number;
  readonly failures: number;
  readonly inconclusives: number;
  readonly consecutiveSuccesses: number;
}

/** Counts before any measurement. */
export const NO_MEASUREMENTS: MetricCounts = { taken: 0, successes: 0, failures: 0, inconclusives: 0, consecutiveSuccesses: 0 };

/** The counts after one more measurement. */
export function countMeasurement(c: MetricCounts, result: MeasurementResult): MetricCounts {
  return {
    taken: c.taken + 1,
    successes: c.successes + (result === 'Successful' ? 1 : 0),
    failures: c.failures + (result === 'Failed' ? 1 : 0),
    inconclusives: c.inconclusives + (result === 'Inconclusive' ? 1 : 0),
    consecutiveSuccesses: result === 'Successful' ? c.consecutiveSuccesses + 1 : 0,
  };
}

/**
 * Where a metric stands. A limit exceeded decides at once; otherwise a step gate's metric
 * succeeds after `consecutiveSuccessLimit` successes in a row when that is set (inconclusive when
 * `count` runs out first), else after `count` measurements. `unbounded` (background analysis)
 * never succeeds: it runs until the upgrade ends or a limit is exceeded.
 */
export function metricPhase(m: Pick<ResolvedAnalysisMetric, 'count' | 'failureLimit' | 'inconclusiveLimit' | 'consecutiveSuccessLimit'>, c: MetricCounts, unbounded: boolean): AnalysisPhase {
  if (c.failures > m.failureLimit) return 'Failed';
  if (c.inconclusives > m.inconclusiveLimit) return 'Inconclusive';
  if (unbounded) return 'Running';
  if (m.consecutiveSuccessLimit > 0) {
    if (c.consecutiveSuccesses >= m.consecutiveSuccessLimit) return 'Successful';
    return c.taken >= m.count ? 'Inconclusive' : 'Running';
  }
  return c.taken >= m.count ? 'Successful' : 'Running';
}

/** A run's phase from its metrics': any failed fails it, then any inconclusive; all successful pass it (once `holdUntil` has passed). */
export function runPhase(metrics: readonly AnalysisPhase[], now: number, holdUntil?: number): AnalysisPhase {
  if (metrics.includes('Failed')) return 'Failed';
  if (metrics.includes('Inconclusive')) return 'Inconclusive';
  if (metrics.every((p) => p === 'Successful') && (holdUntil === undefined || now >= holdUntil)) return 'Successful';
  return 'Running';
}
