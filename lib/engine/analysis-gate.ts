/**
 * Analysis inside the RayService engine, for one pass of a forward incremental upgrade:
 *
 * 1. a person's retry or skip of a failed run is applied (only to the run it names);
 * 2. runs start when new weights take effect on the new cluster: the step gate of those weights
 *    (and a hold's length when they reach one), and the background run at the first traffic step;
 * 3. the executors' measurements are counted (each exactly once, by its sequence number);
 * 4. due measurements become `measureAnalysis` actions, and the next due time a wake-up;
 * 5. a finished run leaves a verdict; a failed one (unless a dry run) is returned for the
 *    upgrade to act on, and the step gate stays closed until its run passed.
 *
 * The first traffic step is never gated (the new cluster has no traffic to measure yet).
 */
import type { ResolvedAnalysis, ResolvedAnalysisMetric } from '../spec/analysis';
import { renderAnalysisQuery } from '../spec/analysis-templates';
import { perClusterServeService } from '../spec/object-names';
import { NO_MEASUREMENTS, comparesWithActive, countMeasurement, judgeMeasurement, metricPhase, runPhase } from './analysis-judgement';
import { MAX_ANALYSIS_VERDICTS, isFailedRun, type AnalysisRunKind, type AnalysisRunStatus, type AnalysisVerdict, type MetricRunStatus } from './analysis-status';
import type { MeasureAnalysisAction } from './actions';
import type { EngineRun } from './engine-run';

/** What a failed analysis makes the upgrade do. */
export type AnalysisFailureOutcome = 'pause' | 'AnalysisFailed' | 'AnalysisAborted';

/** Runs the analysis for this pass (see the module comment); returns what a failed run demands, if one did. */
export function runAnalysis(r: EngineRun): AnalysisFailureOutcome | undefined {
  const a = r.opts.analysis;
  if (a === undefined || r.s.pendingClusterName === undefined) return undefined;
  const st: Draft = { step: r.s.analysis?.step, background: r.s.analysis?.background, verdicts: [...(r.s.analysis?.verdicts ?? [])] };
  applyOverride(r, a, st);
  startRuns(r, a, st);
  st.step = st.step && advanceRun(r, a, st, st.step);
  st.background = st.background && advanceRun(r, a, st, st.background);
  r.s.analysis = { ...(st.step ? { step: st.step } : {}), ...(st.background ? { background: st.background } : {}), verdicts: st.verdicts };
  if (a.dryRun) return undefined;
  if (!isFailedRun(st.step) && !isFailedRun(st.background)) return undefined;
  return a.onFailure === 'pause' ? 'pause' : a.onFailure === 'abort' ? 'AnalysisAborted' : 'AnalysisFailed';
}

/**
 * True when the next forward traffic step (or the promotion) must wait for the step gate: the new
 * cluster carries traffic and the run at these weights has not passed (a dry run's only has to finish).
 */
export function stepGateClosed(r: EngineRun): boolean {
  const a = r.opts.analysis;
  if (a === undefined || !a.beforeEachStep || r.s.pendingWeight === 0) return false;
  const run = r.s.analysis?.step;
  if (run === undefined || !measuresCurrentWeights(r, run)) return true;
  if (run.skipped) return false;
  return a.dryRun ? run.phase === 'Running' : run.phase !== 'Successful';
}

/** The PromQL of `metric` for `cluster` of the service `namespace/service` (its route backend, window and cluster label follow). */
export function analysisQuery(a: ResolvedAnalysis, metric: ResolvedAnalysisMetric, where: { namespace: string; service: string; cluster: string }): string {
  return renderAnalysisQuery(metric, { ...where, backendService: perClusterServeService(where.cluster), windowSeconds: metric.windowSeconds, clusterLabel: a.clusterLabel });
}

/** Clears the runs of an upgrade that ended, keeping the verdicts. */
export function endAnalysis(r: EngineRun): void {
  if (r.s.analysis !== undefined) r.s.analysis = { verdicts: r.s.analysis.verdicts };
}

type Draft = { step?: AnalysisRunStatus; background?: AnalysisRunStatus; verdicts: AnalysisVerdict[] };

function measuresCurrentWeights(r: EngineRun, run: AnalysisRunStatus): boolean {
  const s = r.s;
  return run.cluster === s.pendingClusterName && run.pendingWeight === s.pendingWeight && run.startedAt >= (s.lastTrafficMigratedTime ?? 0);
}

/** Retry starts the named failed run again from now; skip marks it passed by a person. */
function applyOverride(r: EngineRun, a: ResolvedAnalysis, st: Draft): void {
  const o = r.obs.controls?.analysisOverride;
  if (o === undefined) return;
  for (const kind of ['step', 'background'] as const) {
    const run = st[kind];
    if (run === undefined || run.id !== o.runId || !isFailedRun(run)) continue;
    if (o.action === 'skip') {
      st[kind] = { ...run, skipped: true };
      record(r, st, { id: run.id, kind, pendingWeight: run.pendingWeight, phase: 'Skipped', at: r.now, dryRun: a.dryRun, message: 'skipped by a person' });
    } else {
      st[kind] = newRun(a, kind, run.cluster, run.pendingWeight, r.now, run.holdUntil);
    }
  }
}

function startRuns(r: EngineRun, a: ResolvedAnalysis, st: Draft): void {
  const s = r.s;
  const since = s.lastTrafficMigratedTime;
  const cluster = s.pendingClusterName!;
  if (!s.trafficConfirmed || s.pendingWeight === 0 || since === undefined) return;
  if (a.background && st.background?.cluster !== cluster) st.background = newRun(a, 'background', cluster, s.pendingWeight, since);
  if (a.beforeEachStep && (st.step === undefined || !measuresCurrentWeights(r, st.step))) {
    const previous = st.step?.cluster === cluster ? st.step.pendingWeight : 0;
    const holds = a.holds.filter((h) => h.weightPercent > previous && h.weightPercent <= s.pendingWeight);
    const holdUntil = holds.length === 0 ? undefined : since + Math.max(...holds.map((h) => h.seconds)) * 1000;
    st.step = newRun(a, 'step', cluster, s.pendingWeight, since, holdUntil);
  }
}

function newRun(a: ResolvedAnalysis, kind: AnalysisRunKind, cluster: string, pendingWeight: number, startedAt: number, holdUntil?: number): AnalysisRunStatus {
  return {
    id: `${kind}/${cluster}/${pendingWeight}/${startedAt}`,
    kind,
    cluster,
    pendingWeight,
    startedAt,
    ...(holdUntil !== undefined ? { holdUntil } : {}),
    phase: 'Running',
    metrics: a.metrics.map((m) => ({ name: m.name, ...NO_MEASUREMENTS, phase: 'Running' as const })),
  };
}

/** Counts the run's new measurements, asks for the due ones, and records its verdict when it finishes. */
function advanceRun(r: EngineRun, a: ResolvedAnalysis, st: Draft, run: AnalysisRunStatus): AnalysisRunStatus {
  if (run.phase !== 'Running') return run;
  const unbounded = run.kind === 'background';
  const metrics = run.metrics.map((m, i) => advanceMetric(r, a, run, a.metrics[i], m, unbounded));
  const phase = runPhase(metrics.map((m) => m.phase), r.now, run.holdUntil);
  const next = { ...run, metrics, phase };
  if (phase !== 'Running') record(r, st, verdictOf(next, r.now, a.dryRun));
  return next;
}

function advanceMetric(r: EngineRun, a: ResolvedAnalysis, run: AnalysisRunStatus, spec: ResolvedAnalysisMetric, m: MetricRunStatus, unbounded: boolean): MetricRunStatus {
  let cur = m;
  const taken = (r.obs.measurements ?? []).filter((x) => x.runId === run.id && x.metric === m.name).sort((x, y) => x.seq - y.seq);
  for (const x of taken) {
    if (x.seq !== cur.taken) continue;
    // A counted measurement is progress: a long gate or hold never trips the progress deadline while it measures.
    r.s.lastProgressTime = r.now;
    const j = judgeMeasurement(spec.successCondition, x);
    const counts = countMeasurement(cur, j.result);
    const last = { at: x.at, result: j.result, ...(finite(x.value) ? { value: x.value } : {}), ...(finite(x.activeValue) ? { activeValue: x.activeValue } : {}), message: j.message };
    cur = { ...cur, ...counts, phase: metricPhase(spec, counts, unbounded), last };
  }
  const due = run.startedAt + (cur.taken + 1) * spec.intervalSeconds * 1000;
  const measuresOn = cur.phase === 'Running' || (cur.phase === 'Successful' && run.holdUntil !== undefined && due <= run.holdUntil);
  if (measuresOn) {
    if (r.now >= due) r.actions.push(measureAction(r, a, run, spec, cur.taken));
    else r.wake(due);
  } else if (run.holdUntil !== undefined && r.now < run.holdUntil) {
    r.wake(run.holdUntil);
  }
  return cur;
}

/** Only finite numbers are kept as values: the status is JSON, which has no NaN or Infinity (the message names them). */
function finite(v: number | undefined): boolean {
  return v !== undefined && Number.isFinite(v);
}

function measureAction(r: EngineRun, a: ResolvedAnalysis, run: AnalysisRunStatus, spec: ResolvedAnalysisMetric, seq: number): MeasureAnalysisAction {
  const where = { namespace: r.obs.namespace ?? 'default', service: r.obs.name };
  const active = r.s.activeClusterName;
  return {
    type: 'measureAnalysis',
    runId: run.id,
    metric: spec.name,
    seq,
    prometheusUrl: a.prometheusUrl,
    timeoutSeconds: a.queryTimeoutSeconds,
    query: analysisQuery(a, spec, { ...where, cluster: run.cluster }),
    ...(comparesWithActive(spec.successCondition) && active !== undefined ? { activeQuery: analysisQuery(a, spec, { ...where, cluster: active }) } : {}),
  };
}

function verdictOf(run: AnalysisRunStatus, now: number, dryRun: boolean): AnalysisVerdict {
  const deciding = run.metrics.filter((m) => m.phase === run.phase);
  const message = run.phase === 'Successful'
    ? `${run.metrics.length} metric(s) passed at weight ${run.pendingWeight}`
    : deciding.map((m) => `${m.name} ${m.phase.toLowerCase()} (${m.failures} failed, ${m.inconclusives} inconclusive of ${m.taken}; last: ${m.last?.message ?? 'none'})`).join('; ');
  return { id: run.id, kind: run.kind, pendingWeight: run.pendingWeight, phase: run.phase, at: now, dryRun, message };
}

/** Keeps a verdict (the newest MAX_ANALYSIS_VERDICTS) and announces it as an Event. */
function record(r: EngineRun, st: Draft, v: AnalysisVerdict): void {
  const where = v.kind === 'step' ? `step gate at ${v.pendingWeight}%` : `background analysis (at ${v.pendingWeight}%)`;
  r.events.push({
    type: v.phase === 'Successful' || v.phase === 'Skipped' ? 'Normal' : 'Warning',
    reason: `Analysis${v.phase}`,
    message: `${where} ${v.phase.toLowerCase()}${v.dryRun ? ' (dry run: not acted on)' : ''}: ${v.message}`,
  });
  st.verdicts.push(v);
  if (st.verdicts.length > MAX_ANALYSIS_VERDICTS) st.verdicts.splice(0, st.verdicts.length - MAX_ANALYSIS_VERDICTS);
}
