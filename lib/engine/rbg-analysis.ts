/**
 * Metric-gated coordinated rollouts of a RoleBasedGroup (pure): the shared analysis
 * (`analysis-gate.ts`) around one coordination's step. The new revision's share is the replicas the
 * written partitions put on it, over the coordinated roles (floored to a whole percent); it takes
 * effect when every role has that many replicas updated and every replica ready.
 *
 * - The first round is never gated (the new revision has no share yet; nor has a group seen fully
 *   on its template before any round was written). Every later round, and the completion, waits
 *   until the share in effect passed its step gate: the roles stay at their written partitions (`analysisHold`, reason `WaitingForAnalysis`). A counted measurement is
 *   progress for the progress deadline.
 * - The background run measures from the first round until the rollout ends; holds keep a share
 *   longer, as for a RayService.
 * - A failed run (inconclusive counts as failed): `rollback` returns every role to the revision
 *   before the rollout in tandem (`rbg-rollback.ts`: phase `RollingBack`, then `RolledBack`), `abort` stops every role where it stands (phase `Failed`), `pause` holds
 *   every role paused where it stands until a person retries or skips the run (the group's
 *   `rayshift.dev/analysis-override` annotation); a dry run only records verdicts.
 * - Queries see `{{service}}` = the group's name and `{{cluster}}` = the new revision: the
 *   coordinated roles' workload update revisions joined by `|`, or the coordination's revision
 *   while a workload does not report one.
 */
import type { ResolvedAnalysis } from '../spec/analysis';
import { renderAnalysisQuery } from '../spec/analysis-templates';
import { analysisPass, endedAnalysis, gateClosed } from './analysis-gate';
import type { AnalysisMeasurement, AnalysisOverride } from './observation';
import { coordinationStep, holdWrites, ruleRevision, startRollback } from './rbg-coordination';
import type { CoordinationStep, CoordinationStepInput, RolloutEvent } from './rbg-coordination-types';
import type { CoordinationAnalysisStatus, CoordinationStatus, RoleRolloutStatus } from './rbg-coordination-status';

/** What a group's analysis sees besides a coordination's step input. */
export interface GroupAnalysisInput {
  readonly analysis: ResolvedAnalysis;
  /** The group's namespace (`{{namespace}}`). */
  readonly namespace: string;
  /** The group's name (`{{service}}`). */
  readonly group: string;
  /** A person's retry or skip of a failed run. */
  readonly override?: AnalysisOverride;
  /** The measurements taken since the previous pass. */
  readonly measurements?: readonly AnalysisMeasurement[];
}

/** One coordination's step under the group's analysis (see the file comment). */
export function analysedCoordinationStep(given: CoordinationStepInput, g: GroupAnalysisInput): CoordinationStep {
  const input = g.analysis.onFailure === 'rollback' && !g.analysis.dryRun ? { ...given, rollbackPossible: true } : given;
  const { rule, roles, previous: prior, now } = input;
  const revision = ruleRevision(rule, roles);
  const newRollout = prior === undefined || prior.revision !== revision;
  const before = prior?.analysis;
  if (!newRollout && prior && prior.phase !== 'Progressing') return withAnalysis(coordinationStep(input), before && ended(before));
  // Where the roles stand at their written partitions (staleness of the workloads handled by the step).
  const pre = coordinationStep({ ...input, analysisHold: { message: '', measured: false } }).status;
  const total = sum(pre.roles, (r) => r.desired);
  const newReplicas = sum(pre.roles, (r) => r.desired - r.partition);
  // Before this revision's first round nothing was rolled (a group seen for the first time may be fully on its template): no share to measure.
  const rolled = !newRollout && prior !== undefined && prior.rounds > 0;
  const percent = total === 0 || !rolled ? 0 : Math.floor((100 * newReplicas) / total);
  const inEffect = pre.reason !== 'WaitingForController' && pre.roles.every((r) => r.updated >= r.desired - r.partition && r.ready >= r.desired);
  const kept = !newRollout && prior?.analysis?.newReplicas === newReplicas ? prior.analysis.effectiveAt : undefined;
  const effectiveAt = kept ?? (inEffect ? now : undefined);
  const cluster = newRevisionOf(pre);
  const pass = analysisPass({
    analysis: g.analysis,
    state: newRollout ? { verdicts: before?.verdicts ?? [] } : before,
    version: revision,
    percent,
    ...(effectiveAt !== undefined ? { since: effectiveAt } : {}),
    ...(g.override !== undefined ? { override: g.override } : {}),
    ...(g.measurements !== undefined ? { measurements: g.measurements } : {}),
    queries: (metric) => ({ query: renderAnalysisQuery(metric, { namespace: g.namespace, service: g.group, cluster, backendService: cluster, windowSeconds: metric.windowSeconds, clusterLabel: g.analysis.clusterLabel }) }),
    now,
  });
  const events: RolloutEvent[] = pass.events.map((e) => ({ ...e, message: `${rule.name}: ${e.message}` }));
  const state: CoordinationAnalysisStatus = { ...pass.state, newReplicas, ...(effectiveAt !== undefined ? { effectiveAt } : {}) };
  if (pass.failure !== undefined) return failed(input, pre, pass.failure, state, events);
  const closed = gateClosed(g.analysis, pass.state.step, revision, percent, effectiveAt ?? Infinity);
  const message =
    effectiveAt === undefined
      ? `waiting for the new revision's ${percent}% (${newReplicas} of ${total} replicas) to be updated and ready before its step gate`
      : `step gate at ${percent}% (${newReplicas} of ${total} replicas): ${pass.state.step?.phase === 'Running' ? 'measuring' : (pass.state.step?.phase ?? 'not started').toLowerCase()}`;
  const step = coordinationStep(closed ? { ...input, analysisHold: { message, measured: pass.measured } } : input);
  const over = step.status.phase !== 'Progressing';
  const wakes = [step.wakeAt, over ? undefined : pass.wakeAt].filter((t): t is number => t !== undefined);
  return {
    ...withAnalysis(step, over ? ended(state) : state),
    events: [...step.events, ...events],
    ...(wakes.length > 0 ? { wakeAt: Math.min(...wakes) } : {}),
    ...(!over && pass.actions.length > 0 ? { measure: pass.actions } : {}),
  };
}

/** The step of a failed analysis: every role returned to the old revision, stopped, or paused where it stands. */
function failed(input: CoordinationStepInput, pre: CoordinationStatus, action: ResolvedAnalysis['onFailure'], state: CoordinationAnalysisStatus, events: RolloutEvent[]): CoordinationStep {
  const { rule, roles } = input;
  const run = [state.step, state.background].find((r) => r !== undefined && r.phase !== 'Running' && r.phase !== 'Successful');
  const why = `the analysis of run ${run?.id ?? 'unknown'} ${run?.phase.toLowerCase() ?? 'failed'}`;
  const { deadlineAt: _none, blockingRole: _who, ...base } = pre;
  const role = (r: RoleRolloutStatus, phase: RoleRolloutStatus['phase'], partition: number, reason: string): RoleRolloutStatus => ({ ...r, phase, partition, reason });
  if (action === 'rollback') {
    const back = startRollback(input, { ...base, reason: 'AnalysisFailed', message: why, analysis: ended(state) });
    const started = `${rule.name}: ${why}; returning ${pre.roles.map((r) => r.name).join(', ')} to the revision before the rollout`;
    return { ...back, events: [...events, { type: 'Warning', reason: 'RollbackStarted', message: started }, ...back.events] };
  }
  if (action === 'abort') {
    const status: CoordinationStatus = { ...base, phase: 'Failed', reason: 'AnalysisFailed', message: `${why}; stopped every role where it stands`, roles: pre.roles.map((r) => role(r, 'Stopped', r.partition, 'stopped (AnalysisFailed)')), analysis: ended(state) };
    return { status, writes: holdWrites(rule, roles), events: [...events, { type: 'Warning', reason: 'RolloutAborted', message: `${rule.name}: ${why}; stopped every role where it stands` }] };
  }
  const retry = run ? `; annotate rayshift.dev/analysis-override=retry:${run.id} to measure again, or skip:${run.id} to go on` : '';
  const status: CoordinationStatus = { ...base, phase: 'Progressing', reason: 'AnalysisFailed', message: `${why}; paused${retry}`, analysis: state };
  return { status, writes: holdWrites(rule, roles), events };
}

/** `{{cluster}}` of a RoleBasedGroup: its roles' workload update revisions, or the coordination's revision while one is unknown. */
function newRevisionOf(status: CoordinationStatus): string {
  const revisions = status.roles.map((r) => r.workloadRevision);
  if (revisions.length === 0 || revisions.some((r) => r === undefined)) return status.revision;
  return [...new Set(revisions as string[])].sort().join('|');
}

function withAnalysis(step: CoordinationStep, analysis: CoordinationAnalysisStatus | undefined): CoordinationStep {
  return analysis === undefined ? step : { ...step, status: { ...step.status, analysis } };
}

/** The analysis of a rollout that ended: its runs cleared, its verdicts kept. */
function ended(s: CoordinationAnalysisStatus): CoordinationAnalysisStatus {
  return { ...endedAnalysis(s), newReplicas: s.newReplicas };
}

function sum<T>(xs: readonly T[], f: (x: T) => number): number {
  return xs.reduce((acc, x) => acc + f(x), 0);
}
