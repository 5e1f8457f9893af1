/**
 * Metric-gated upgrades: the `analysis` of a RayService upgrade (`spec.rayshift.analysis`). Named
 * metrics, each a Prometheus query (or a template of one) with a success condition, measured while
 * the new cluster carries traffic; what the engine does with their verdicts is `lib/engine/analysis*`.
 *
 * Semantics follow Argo Rollouts' AnalysisTemplate where it has them (`count`, `failureLimit`,
 * `consecutiveSuccessLimit`, `inconclusiveLimit`, dry run) and go further where an upgrade of a
 * GPU service needs it: a condition may compare the new cluster with the old one, and a
 * Prometheus that does not answer makes a measurement inconclusive, never successful.
 */
import { ProblemList, ValidationResult, show } from './problem';
import { ANALYSIS_TEMPLATE_NAMES, type AnalysisTemplateName } from './analysis-templates';
import { INT32_MAX, asArray, isInteger, isObject } from './read';

/** What a failed analysis does to the upgrade. */
export type AnalysisFailureAction =
  /** Step the traffic back as a rollback does, one interval per step. */
  | 'rollback'
  /** All the traffic the old cluster can take back at once, then the rest of the rollback without intervals. */
  | 'abort'
  /** Hold the weights where they are until a person retries or skips the analysis, or aborts. */
  | 'pause';

/** Every failure action. */
export const ANALYSIS_FAILURE_ACTIONS: readonly AnalysisFailureAction[] = ['rollback', 'abort', 'pause'];

/**
 * When a measurement succeeds. Every bound given must hold; at least one is required. The
 * `…Active` bounds compare the new cluster's value with the old (active) cluster's, measured by the
 * same query at the same time, while the old cluster carries traffic: at 100 % it carries none and
 * is not compared, and the other bounds alone judge that gate.
 */
export interface AnalysisSuccessCondition {
  /** The new cluster's value must be at most this. */
  readonly maximum?: number;
  /** The new cluster's value must be at least this. */
  readonly minimum?: number;
  /** The new cluster's value may exceed the old cluster's by at most this much (in the query's unit), ≥ 0. */
  readonly maxAboveActive?: number;
  /** The new cluster's value may exceed the old cluster's by at most this percentage of it, ≥ 0. */
  readonly maxAboveActivePercent?: number;
}

/** One named metric of an analysis. */
export interface AnalysisMetric {
  /** Name shown in status, Events and `plan` (a DNS label). */
  readonly name: string;
  /**
   * A PromQL query returning one number (a scalar, or a vector of one sample). Placeholders:
   * `{{namespace}}`, `{{service}}` (the RayService), `{{cluster}}` (the RayCluster measured),
   * `{{window}}` (the window as a range, e.g. `30s`). Exactly one of `query` and `template`.
   */
  readonly query?: string;
  /** A built-in query (see `ANALYSIS_TEMPLATES`). Exactly one of `query` and `template`. */
  readonly template?: AnalysisTemplateName;
  /** Quantile of the latency templates, in (0, 1). @default 0.99 */
  readonly quantile?: number;
  /** When a measurement succeeds. */
  readonly successCondition: AnalysisSuccessCondition;
  /** Seconds between measurements (the first is one interval after the weights took effect), ≥ 1. @default 30 */
  readonly intervalSeconds?: number;
  /** Range of the query's `{{window}}` in seconds, ≥ 1. @default intervalSeconds */
  readonly windowSeconds?: number;
  /** Measurements per gate, ≥ 1 (background analysis measures until the upgrade ends). @default 1 */
  readonly count?: number;
  /** Failed measurements allowed; one more fails the metric, ≥ 0. @default 0 */
  readonly failureLimit?: number;
  /** Inconclusive measurements allowed; one more makes the metric inconclusive, ≥ 0. @default 0 */
  readonly inconclusiveLimit?: number;
  /** Successes in a row that pass the metric before `count` is reached; 0 turns it off, ≥ 0. @default 0 */
  readonly consecutiveSuccessLimit?: number;
}

/** A longer stay at a weight, measured throughout by the step gate. */
export interface AnalysisHold {
  /** The first traffic step whose new-cluster weight reaches this percentage holds, 1–100. */
  readonly weightPercent: number;
  /** Seconds the weights stay there at least, counted from when they took effect, ≥ 1. */
  readonly seconds: number;
}

/** The analysis of an upgrade (`spec.rayshift.analysis`). */
export interface UpgradeAnalysis {
  /** The Prometheus the executors query (`http://` or `https://`); no other address is ever called. */
  readonly prometheusUrl: string;
  /** The metrics; every one must pass. At least one, names unique. */
  readonly metrics: AnalysisMetric[];
  /** Gate every traffic step after the first (and the promotion) on a run of every metric at the current weights. @default true */
  readonly beforeEachStep?: boolean;
  /** Also measure every metric from the first traffic step until promotion; a failure at any time counts. @default false */
  readonly background?: boolean;
  /** Weights to stay at longer, measured throughout. @default none */
  readonly holds?: AnalysisHold[];
  /** What a failed (or inconclusive beyond its limit) metric does. @default "rollback" */
  readonly onFailure?: AnalysisFailureAction;
  /** Record every verdict without acting on any. @default false */
  readonly dryRun?: boolean;
  /** Seconds a query may take before its measurement counts as inconclusive, 1–300. @default 10 */
  readonly queryTimeoutSeconds?: number;
  /** The Prometheus label that carries a metric's RayCluster name, for the Ray Serve templates. @default "ray_io_cluster" */
  readonly clusterLabel?: string;
}

/** The defaults of an analysis, in one place. */
export const ANALYSIS_DEFAULTS = {
  intervalSeconds: 30,
  count: 1,
  failureLimit: 0,
  inconclusiveLimit: 0,
  consecutiveSuccessLimit: 0,
  quantile: 0.99,
  beforeEachStep: true,
  background: false,
  onFailure: 'rollback' as AnalysisFailureAction,
  dryRun: false,
  queryTimeoutSeconds: 10,
  clusterLabel: 'ray_io_cluster',
} as const;

/** Most metrics one analysis may have (each is a query per measurement, and a line of status). */
export const MAX_ANALYSIS_METRICS = 20;

const METRIC_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const PLACEHOLDER = /\{\{\s*([a-zA-Z]+)\s*\}\}/g;
/** The placeholders a query may use. */
export const QUERY_PLACEHOLDERS: readonly string[] = ['namespace', 'service', 'cluster', 'window'];

/** How `validateUpgradeAnalysis` reads the queries of who runs the analysis. */
export interface AnalysisValidationOptions {
  /**
   * A query may name the new version itself instead of `{{cluster}}` (a RoleBasedGroup's spec
   * changes with each release, and so may its queries): no warning for a query without it.
   * @default false
   */
  readonly versionInQuery?: boolean;
}

/** Validates an analysis (`at` is its path) and returns every problem at once. Never throws. */
export function validateUpgradeAnalysis(value: unknown, at = 'spec.rayshift.analysis', options: AnalysisValidationOptions = {}): ValidationResult {
  const problems = new ProblemList();
  if (!isObject(value)) {
    problems.error(at, `must be a mapping with prometheusUrl and metrics; got ${show(value)}`);
    return problems.result();
  }
  checkPrometheusUrl(problems, value.prometheusUrl, `${at}.prometheusUrl`);
  const metrics = value.metrics;
  if (!Array.isArray(metrics) || metrics.length === 0 || metrics.length > MAX_ANALYSIS_METRICS) {
    problems.error(`${at}.metrics`, `must list 1 to ${MAX_ANALYSIS_METRICS} metrics; got ${show(metrics)}`);
  } else {
    const seen = new Set<string>();
    metrics.forEach((m, i) => {
      checkMetric(problems, m, `${at}.metrics[${i}]`, options);
      const name = isObject(m) ? m.name : undefined;
      if (typeof name === 'string' && seen.has(name)) problems.error(`${at}.metrics[${i}].name`, `${show(name)} is used by an earlier metric; names must be unique`);
      if (typeof name === 'string') seen.add(name);
    });
  }
  checkBoolean(problems, value.beforeEachStep, `${at}.beforeEachStep`);
  checkBoolean(problems, value.background, `${at}.background`);
  checkBoolean(problems, value.dryRun, `${at}.dryRun`);
  if (value.beforeEachStep === false && value.background !== true) {
    problems.error(`${at}.beforeEachStep`, 'is false and background is not true: the analysis would never measure; set one of them');
  }
  if (value.onFailure !== undefined && !ANALYSIS_FAILURE_ACTIONS.includes(value.onFailure as AnalysisFailureAction)) {
    problems.error(`${at}.onFailure`, `${show(value.onFailure)} is not a failure action; allowed: ${ANALYSIS_FAILURE_ACTIONS.join(', ')}`);
  }
  checkInteger(problems, value.queryTimeoutSeconds, `${at}.queryTimeoutSeconds`, 1, 300);
  if (value.clusterLabel !== undefined && (typeof value.clusterLabel !== 'string' || !LABEL_NAME.test(value.clusterLabel))) {
    problems.error(`${at}.clusterLabel`, `must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*); got ${show(value.clusterLabel)}`);
  }
  if (value.holds !== undefined) {
    if (!Array.isArray(value.holds)) problems.error(`${at}.holds`, `must be a list of {weightPercent, seconds}; got ${show(value.holds)}`);
    asArray(value.holds).forEach((h, i) => {
      const hold = isObject(h) ? h : {};
      if (!isObject(h)) problems.error(`${at}.holds[${i}]`, `must be a mapping {weightPercent, seconds}; got ${show(h)}`);
      checkInteger(problems, hold.weightPercent, `${at}.holds[${i}].weightPercent`, 1, 100, true);
      checkInteger(problems, hold.seconds, `${at}.holds[${i}].seconds`, 1, INT32_MAX, true);
    });
  }
  return problems.result();
}

function checkPrometheusUrl(problems: ProblemList, url: unknown, at: string): void {
  if (typeof url !== 'string' || url === '') {
    problems.error(at, `is required: the Prometheus to query (http:// or https://); got ${show(url)}`);
    return;
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    problems.error(at, `must be an http:// or https:// URL; got ${show(url)}`);
  } else if (parsed.username !== '' || parsed.password !== '') {
    problems.error(at, `must not carry credentials (they would show in status and logs); got a URL with a user name or password`);
  } else if (parsed.search !== '' || parsed.hash !== '') {
    problems.error(at, `must not have a query string or fragment; got ${show(url)}`);
  }
}

function checkMetric(problems: ProblemList, m: unknown, at: string, options: AnalysisValidationOptions): void {
  if (!isObject(m)) {
    problems.error(at, `must be a mapping with name, query or template, and successCondition; got ${show(m)}`);
    return;
  }
  if (typeof m.name !== 'string' || m.name.length > 63 || !METRIC_NAME.test(m.name)) {
    problems.error(`${at}.name`, `must be a DNS label (lower-case letters, digits and '-', at most 63); got ${show(m.name)}`);
  }
  if ((m.query === undefined) === (m.template === undefined)) {
    problems.error(at, `needs exactly one of query and template; got ${m.query === undefined ? 'neither' : 'both'}`);
  }
  if (m.query !== undefined) checkQuery(problems, m.query, `${at}.query`, options);
  if (m.template !== undefined && !ANALYSIS_TEMPLATE_NAMES.includes(m.template as AnalysisTemplateName)) {
    problems.error(`${at}.template`, `${show(m.template)} is not a template; allowed: ${ANALYSIS_TEMPLATE_NAMES.join(', ')}`);
  }
  if (m.quantile !== undefined && (typeof m.quantile !== 'number' || !(m.quantile > 0 && m.quantile < 1))) {
    problems.error(`${at}.quantile`, `must be a number between 0 and 1 (exclusive); got ${show(m.quantile)}`);
  }
  checkCondition(problems, m.successCondition, `${at}.successCondition`);
  checkInteger(problems, m.intervalSeconds, `${at}.intervalSeconds`, 1, INT32_MAX);
  checkInteger(problems, m.windowSeconds, `${at}.windowSeconds`, 1, INT32_MAX);
  checkInteger(problems, m.count, `${at}.count`, 1, 1000);
  checkInteger(problems, m.failureLimit, `${at}.failureLimit`, 0, 1000);
  checkInteger(problems, m.inconclusiveLimit, `${at}.inconclusiveLimit`, 0, 1000);
  checkInteger(problems, m.consecutiveSuccessLimit, `${at}.consecutiveSuccessLimit`, 0, 1000);
  const count = isInteger(m.count) ? m.count : ANALYSIS_DEFAULTS.count;
  if (isInteger(m.failureLimit) && m.failureLimit >= count) {
    problems.warning(`${at}.failureLimit`, `${m.failureLimit} is not below count ${count}: a step gate of this metric can never fail (only background analysis can)`);
  }
  if (isInteger(m.consecutiveSuccessLimit) && m.consecutiveSuccessLimit > count) {
    problems.error(`${at}.consecutiveSuccessLimit`, `${m.consecutiveSuccessLimit} exceeds count ${count}: a gate could never reach it; must be ≤ count`);
  }
}

function checkQuery(problems: ProblemList, q: unknown, at: string, options: AnalysisValidationOptions): void {
  if (typeof q !== 'string' || q.trim() === '') {
    problems.error(at, `must be a non-empty PromQL query; got ${show(q)}`);
    return;
  }
  for (const [, name] of q.matchAll(PLACEHOLDER)) {
    if (!QUERY_PLACEHOLDERS.includes(name)) {
      problems.error(at, `uses the unknown placeholder {{${name}}}; allowed: ${QUERY_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}`);
    }
  }
  if (options.versionInQuery !== true && !/\{\{\s*cluster\s*\}\}/.test(q)) {
    problems.warning(at, 'does not use {{cluster}}: it measures the same series for the new and the old cluster, so it cannot tell the new version from the old');
  }
}

function checkCondition(problems: ProblemList, c: unknown, at: string): void {
  if (!isObject(c)) {
    problems.error(at, `is required: a mapping with maximum, minimum, maxAboveActive or maxAboveActivePercent; got ${show(c)}`);
    return;
  }
  const bounds = ['maximum', 'minimum', 'maxAboveActive', 'maxAboveActivePercent'] as const;
  if (bounds.every((b) => c[b] === undefined)) {
    problems.error(at, `needs at least one of ${bounds.join(', ')}; got ${show(c)}`);
  }
  for (const b of bounds) {
    const v = c[b];
    if (v === undefined) continue;
    const nonNegative = b === 'maxAboveActive' || b === 'maxAboveActivePercent';
    if (typeof v !== 'number' || !Number.isFinite(v) || (nonNegative && v < 0)) {
      problems.error(`${at}.${b}`, `must be a finite number${nonNegative ? ' ≥ 0' : ''}; got ${show(v)}`);
    }
  }
  if (typeof c.maximum === 'number' && typeof c.minimum === 'number' && c.minimum > c.maximum) {
    problems.error(`${at}.minimum`, `${c.minimum} exceeds maximum ${c.maximum}: no value could succeed`);
  }
}

function checkInteger(problems: ProblemList, v: unknown, at: string, min: number, max: number, required = false): void {
  if (v === undefined && !required) return;
  if (!isInteger(v) || v < min || v > max) problems.error(at, `must be an integer from ${min} to ${max}; got ${show(v)}`);
}

function checkBoolean(problems: ProblemList, v: unknown, at: string): void {
  if (v !== undefined && typeof v !== 'boolean') problems.error(at, `must be true or false; got ${show(v)}`);
}

/** A metric with every default applied. */
export interface ResolvedAnalysisMetric {
  readonly name: string;
  readonly query?: string;
  readonly template?: AnalysisTemplateName;
  readonly quantile: number;
  readonly successCondition: AnalysisSuccessCondition;
  readonly intervalSeconds: number;
  readonly windowSeconds: number;
  readonly count: number;
  readonly failureLimit: number;
  readonly inconclusiveLimit: number;
  readonly consecutiveSuccessLimit: number;
}

/** An analysis with every default applied: what the engine runs with. */
export interface ResolvedAnalysis {
  readonly prometheusUrl: string;
  readonly metrics: ResolvedAnalysisMetric[];
  readonly beforeEachStep: boolean;
  readonly background: boolean;
  readonly holds: AnalysisHold[];
  readonly onFailure: AnalysisFailureAction;
  readonly dryRun: boolean;
  readonly queryTimeoutSeconds: number;
  readonly clusterLabel: string;
}

/** Applies the defaults to an analysis (call after `validateUpgradeAnalysis` passed). */
export function resolveUpgradeAnalysis(a: UpgradeAnalysis): ResolvedAnalysis {
  const d = ANALYSIS_DEFAULTS;
  return {
    prometheusUrl: a.prometheusUrl,
    metrics: a.metrics.map((m) => {
      const interval = m.intervalSeconds ?? d.intervalSeconds;
      return {
        name: m.name,
        ...(m.query !== undefined ? { query: m.query } : {}),
        ...(m.template !== undefined ? { template: m.template } : {}),
        quantile: m.quantile ?? d.quantile,
        successCondition: m.successCondition,
        intervalSeconds: interval,
        windowSeconds: m.windowSeconds ?? interval,
        count: m.count ?? d.count,
        failureLimit: m.failureLimit ?? d.failureLimit,
        inconclusiveLimit: m.inconclusiveLimit ?? d.inconclusiveLimit,
        consecutiveSuccessLimit: m.consecutiveSuccessLimit ?? d.consecutiveSuccessLimit,
      };
    }),
    beforeEachStep: a.beforeEachStep ?? d.beforeEachStep,
    background: a.background ?? d.background,
    holds: [...(a.holds ?? [])].sort((x, y) => x.weightPercent - y.weightPercent),
    onFailure: a.onFailure ?? d.onFailure,
    dryRun: a.dryRun ?? d.dryRun,
    queryTimeoutSeconds: a.queryTimeoutSeconds ?? d.queryTimeoutSeconds,
    clusterLabel: a.clusterLabel ?? d.clusterLabel,
  };
}
