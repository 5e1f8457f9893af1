/**
 * Metric-gated rollouts, one implementation for every rollout that moves a new version in steps
 * (a RayService's traffic weights, a RoleBasedGroup's coordinated rounds). One pass:
 *
 * 1. a person's retry or skip of a failed run is applied (only to the run it names);
 * 2. runs start when a new share of the new version takes effect: the step gate of that share
 *    (and a hold's length when it reaches one), and the background run at the first step;
 * 3. the executors' measurements are counted (each exactly once, by its sequence number);
 * 4. due measurements become `measureAnalysis` actions, and the next due time a wake-up;
 * 5. a finished run leaves a verdict; a failed one (unless a dry run) is returned for the
 *    rollout to act on, and the step gate stays closed until its run passed.
 *
 * The first step is never gated (the new version has no share to measure yet). `runAnalysis`,
 * `stepGateClosed` and `endAnalysis` are the RayService engine's use of it; `rbg-analysis.ts` is a
 * RoleBasedGroup's.
 */
import type { AnalysisFailureAction, ResolvedAnalysis, ResolvedAnalysisMetric } from '../spec/analysis';
import { renderAnalysisQuery } from '../spec/analysis-templates';
import { perClusterServeService } from '../spec/object-names';
import { NO_MEASUREMENTS, comparesWithActive, countMeasurement, judgeMeasurement, metricPhase, runPhase } from './analysis-judgement';
import { MAX_ANALYSIS_VERDICTS, isFailedRun, type AnalysisRunKind, type AnalysisRunStatus, type AnalysisStatus, type AnalysisVerdict, type MetricRunStatus } from './analysis-status';
import type { MeasureAnalysisAction } from './actions';
import type { EngineRun } from './engine-run';
import type { AnalysisMeasurement, AnalysisOverride } from './observation';
import type { RolloutEvent } from './rbg-coordination-types';

/** What one analysis pass sees, whichever rollout it gates. */
export interface AnalysisPassInput {
  readonly analysis: ResolvedAnalysis;
  /** The analysis state of the previous pass. */
  readonly state?: AnalysisStatus;
  /** The new version the runs measure, their identity (a RayService's pending cluster, a RoleBasedGroup rollout's revision). */
  readonly version: string;
  /** The new version's share now, percent (a RayService's route weight, a RoleBasedGroup's share of the replicas). */
  readonly percent: number;
  /** When that share took effect (epoch ms); undefined until it has. */
  readonly since?: number;
  /** A person's retry or skip of a failed run. */
  readonly override?: AnalysisOverride;
  /** The measurements taken since the previous pass. */
  readonly measurements?: readonly AnalysisMeasurement[];
  /** The PromQL of `metric` for `run`'s new version and, when the condition compares them and the old one can be named, for the old one. */
  readonly queries: (metric: ResolvedAnalysisMetric, run: AnalysisRunStatus) => { readonly query: string; readonly activeQuery?: string };
  /** Epoch ms. */
  readonly now: number;
}

/** What one analysis pass decides. */
export interface AnalysisPass {
  readonly state: AnalysisStatus;
  /** Measurements due now. */
  readonly actions: MeasureAnalysisAction[];
  /** One per verdict reached. */
  readonly events: RolloutEvent[];
  /** The next due measurement or hold end (epoch ms). */
  readonly wakeAt?: number;
  /** A measurement was counted: progress, so a long gate or hold never trips a progress deadline while it measures. */
  readonly measured: boolean;
  /** What a failed run demands (never in a dry run). */
  readonly failure?: AnalysisFailureAction;
}

/** Runs one analysis pass (see the module comment). */
export function analysisPass(input: AnalysisPassInput): AnalysisPass {
  const a = input.analysis;
  const p: Pass = { input, st: { step: input.state?.step, background: input.state?.background, verdicts: [...(input.state?.verdicts ?? [])] }, actions: [], events: [], wakes: [], measured: false };
  applyOverride(p);
  startRuns(p);
  p.st.step = p.st.step && advanceRun(p, p.st.step);
  p.st.background = p.st.background && advanceRun(p, p.st.background);
  const { step, background, verdicts } = p.st;
  const state: AnalysisStatus = { ...(step ? { step } : {}), ...(background ? { background } : {}), verdicts };
  const failed = !a.dryRun && (isFailedRun(step) || isFailedRun(background));
  return {
    state,
    actions: p.actions,
    events: p.events,
    ...(p.wakes.length > 0 ? { wakeAt: Math.min(...p.wakes) } : {}),
    measured: p.measured,
    ...(failed ? { failure: a.onFailure } : {}),
  };
}

/**
 * True when the next forward step must wait for the step gate: the new version has a share and the
 * run of the share in effect since `since` has not passed (a dry run's only has to finish).
 */
export function gateClosed(a: ResolvedAnalysis, run: AnalysisRunStatus | undefined, version: string | undefined, percent: number, since: number): boolean {
  if (!a.beforeEachStep || percent === 0) return false;
  if (run === undefined || !measuresCurrent(run, version, percent, since)) return true;
  if (run.skipped) return false;
  return a.dryRun ? run.phase === 'Running' : run.phase !== 'Successful';
}

/** The analysis state once the rollout ended: its runs cleared, its verdicts kept. */
export function endedAnalysis(state: AnalysisStatus): AnalysisStatus {
  return { verdicts: state.verdicts };
}

/** What a failed analysis makes the upgrade do. */
export type AnalysisFailureOutcome = 'pause' | 'AnalysisFailed' | 'AnalysisAborted';

/** Runs the analysis of a RayService's pass (see the module comment); returns what a failed run demands, if one did. */
export function runAnalysis(r: EngineRun): AnalysisFailureOutcome | undefined {
  const a = r.opts.analysis;
  const s = r.s;
  if (a === undefined || s.pendingClusterName === undefined) return undefined;
  const where = { namespace: r.obs.namespace ?? 'default', service: r.obs.name };
  const active = s.activeClusterName;
  const pass = analysisPass({
    analysis: a,
    state: s.analysis,
    version: s.pendingClusterName,
    percent: s.pendingWeight,
    ...(s.trafficConfirmed && s.lastTrafficMigratedTime !== undefined ? { since: s.lastTrafficMigratedTime } : {}),
    ...(r.obs.controls?.analysisOverride !== undefined ? { override: r.obs.controls.analysisOverride } : {}),
    ...(r.obs.measurements !== undefined ? { measurements: r.obs.measurements } : {}),
    queries: (metric, run) => ({
      query: analysisQuery(a, metric, { ...where, cluster: run.cluster }),
      ...(comparesWithActive(metric.successCondition, run.pendingWeight) && active !== undefined ? { activeQuery: analysisQuery(a, metric, { ...where, cluster: active }) } : {}),
    }),
    now: r.now,
  });
  s.analysis = pass.state;
  r.actions.push(...pass.actions);
  r.events.push(...pass.events);
  if (pass.wakeAt !== undefined) r.wake(pass.wakeAt);
  if (pass.measured) s.lastProgressTime = r.now;
  if (pass.failure === undefined) return undefined;
  return pass.failure === 'pause' ? 'pause' : pass.failure === 'abort' ? 'AnalysisAborted' : 'AnalysisFailed';
}

/**
 * True when a RayService's next forward traffic step (or the promotion) must wait for the step
 * gate: the new cluster carries traffic and the run at these weights has not passed.
 */
export function stepGateClosed(r: EngineRun): boolean {
  const a = r.opts.analysis;
  return a !== undefined && gateClosed(a, r.s.analysis?.step, r.s.pendingClusterName, r.s.pendingWeight, r.s.lastTrafficMigratedTime ?? 0);
}

/** The PromQL of `metric` for `cluster` of the service `namespace/service` (its route backend, window and cluster label follow). */
export function analysisQuery(a: ResolvedAnalysis, metric: ResolvedAnalysisMetric, where: { namespace: string; service: string; cluster: string }): string {
  return renderAnalysisQuery(metric, { ...where, backendService: perClusterServeService(where.cluster), windowSeconds: metric.windowSeconds, clusterLabel: a.clusterLabel });
}

/** Clears the runs of an upgrade that ended, keeping the verdicts. */
export function endAnalysis(r: EngineRun): void {
  if (r.s.analysis !== undefined) r.s.analysis = endedAnalysis(r.s.analysis);
}

type Draft = { step?: AnalysisRunStatus; background?: AnalysisRunStatus; verdicts: AnalysisVerdict[] };
type Pass = { readonly input: AnalysisPassInput; readonly st: Draft; readonly actions: MeasureAnalysisAction[]; readonly events: RolloutEvent[]; readonly wakes: number[]; measured: boolean };

function measuresCurrent(run: AnalysisRunStatus, version: string | undefined, percent: number, since: number): boolean {
  return run.cluster === version && run.pendingWeight === percent && run.startedAt >= since;
}

/** Retry starts the named failed run again from now; skip marks it passed by a person. */
function applyOverride(p: Pass): void {
  const { override: o, analysis: a, now } = p.input;
  if (o === undefined) return;
  for (const kind of ['step', 'background'] as const) {
    const run = p.st[kind];
    if (run === undefined || run.id !== o.runId || !isFailedRun(run)) continue;
    if (o.action === 'skip') {
      p.st[kind] = { ...run, skipped: true };
      record(p, { id: run.id, kind, pendingWeight: run.pendingWeight, phase: 'Skipped', at: now, dryRun: a.dryRun, message: 'skipped by a person' });
    } else {
      p.st[kind] = newRun(a, kind, run.cluster, run.pendingWeight, now, run.holdUntil);
    }
  }
}

function startRuns(p: Pass): void {
  const { analysis: a, version, percent, since } = p.input;
  const st = p.st;
  if (percent === 0 || since === undefined) return;
  if (a.background && st.background?.cluster !== version) st.background = newRun(a, 'background', version, percent, since);
  if (a.beforeEachStep && (st.step === undefined || !measuresCurrent(st.step, version, percent, since))) {
    const previous = st.step?.cluster === version ? st.step.pendingWeight : 0;
    const holds = a.holds.filter((h) => h.weightPercent > previous && h.weightPercent <= percent);
    const holdUntil = holds.length === 0 ? undefined : since + Math.max(...holds.map((h) => h.seconds)) * 1000;
    st.step = newRun(a, 'step', version, percent, since, holdUntil);
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
function advanceRun(p: Pass, run: AnalysisRunStatus): AnalysisRunStatus {
  const { analysis: a, now } = p.input;
  if (run.phase !== 'Running') return run;
  const unbounded = run.kind === 'background';
  const metrics = run.metrics.map((m, i) => advanceMetric(p, run, a.metrics[i], m, unbounded));
  const phase = runPhase(metrics.map((m) => m.phase), now, run.holdUntil);
  const next = { ...run, metrics, phase };
  if (phase !== 'Running') record(p, verdictOf(next, now, a.dryRun));
  return next;
}

function advanceMetric(p: Pass, run: AnalysisRunStatus, spec: ResolvedAnalysisMetric, m: MetricRunStatus, unbounded: boolean): MetricRunStatus {
  const now = p.input.now;
  let cur = m;
  const taken = (p.input.measurements ?? []).filter((x) => x.runId === run.id && x.metric === m.name).sort((x, y) => x.seq - y.seq);
  for (const x of taken) {
    if (x.seq !== cur.taken) continue;
    p.measured = true;
    const j = judgeMeasurement(spec.successCondition, x, run.pendingWeight);
    const counts = countMeasurement(cur, j.result);
    const last = { at: x.at, result: j.result, ...(finite(x.value) ? { value: x.value } : {}), ...(finite(x.activeValue) ? { activeValue: x.activeValue } : {}), message: j.message };
    cur = { ...cur, ...counts, phase: metricPhase(spec, counts, unbounded), last };
  }
  const due = run.startedAt + (cur.taken + 1) * spec.intervalSeconds * 1000;
  const measuresOn = cur.phase === 'Running' || (cur.phase === 'Successful' && run.holdUntil !== undefined && due <= run.holdUntil);
  if (measuresOn) {
    if (now >= due) p.actions.push(measureAction(p, run, spec, cur.taken));
    else p.wakes.push(due);
  } else if (run.holdUntil !== undefined && now < run.holdUntil) {
    p.wakes.push(run.holdUntil);
  }
  return cur;
}

/** Only finite numbers are kept as values: the status is JSON, which has no NaN or Infinity (the message names them). */
function finite(v: number | undefined): boolean {
  return v !== undefined && Number.isFinite(v);
}

function measureAction(p: Pass, run: AnalysisRunStatus, spec: ResolvedAnalysisMetric, seq: number): MeasureAnalysisAction {
  const a = p.input.analysis;
  return { type: 'measureAnalysis', runId: run.id, metric: spec.name, seq, prometheusUrl: a.prometheusUrl, timeoutSeconds: a.queryTimeoutSeconds, ...p.input.queries(spec, run) };
}

function verdictOf(run: AnalysisRunStatus, now: number, dryRun: boolean): AnalysisVerdict {
  const deciding = run.metrics.filter((m) => m.phase === run.phase);
  const message = run.phase === 'Successful'
    ? `${run.metrics.length} metric(s) passed at weight ${run.pendingWeight}`
    : deciding.map((m) => `${m.name} ${m.phase.toLowerCase()} (${m.failures} failed, ${m.inconclusives} inconclusive of ${m.taken}; last: ${m.last?.message ?? 'none'})`).join('; ');
  return { id: run.id, kind: run.kind, pendingWeight: run.pendingWeight, phase: run.phase, at: now, dryRun, message };
}

/** The reason of a verdict's Event. */
const verdictReason = (phase: AnalysisVerdict['phase']): string => `Analysis${phase}`;

/** The reasons of a verdict's Event, one per verdict phase. */
const VERDICT_EVENT_REASONS: ReadonlySet<string> = new Set((['Successful', 'Failed', 'Inconclusive', 'Skipped'] satisfies AnalysisVerdict['phase'][]).map(verdictReason));

/** True for the Event of an analysis verdict (`AnalysisSuccessful`, `AnalysisFailed`, `AnalysisInconclusive`, `AnalysisSkipped`). */
export function isVerdictEvent(e: Pick<RolloutEvent, 'reason'>): boolean {
  return VERDICT_EVENT_REASONS.has(e.reason);
}

/** Keeps a verdict (the newest MAX_ANALYSIS_VERDICTS) and announces it as an Event. */
function record(p: Pass, v: AnalysisVerdict): void {
  const st = p.st;
  const where = v.kind === 'step' ? `step gate at ${v.pendingWeight}%` : `background analysis (at ${v.pendingWeight}%)`;
  p.events.push({
    type: v.phase === 'Successful' || v.phase === 'Skipped' ? 'Normal' : 'Warning',
    reason: verdictReason(v.phase),
    message: `${where} ${v.phase.toLowerCase()}${v.dryRun ? ' (dry run: not acted on)' : ''}: ${v.message}`,
  });
  st.verdicts.push(v);
  if (st.verdicts.length > MAX_ANALYSIS_VERDICTS) st.verdicts.splice(0, st.verdicts.length - MAX_ANALYSIS_VERDICTS);
}
