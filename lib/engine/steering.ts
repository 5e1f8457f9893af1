/**
 * Steering of operator-executed RayServices, in one place: which verb applies to a service's
 * observed state (and why not, naming the phase), and the merge patch each verb makes. The rules
 * follow what the engine honours (`controls` of the observation): pause holds any upgrade
 * (incremental or `NewCluster`) but never a rollback; promote only skips the intervals of an
 * incremental upgrade; abort rolls back an upgrade in flight; retry-analysis measures the failed
 * analysis run that holds an upgrade (`onFailure: pause`) again, skip-analysis counts it as passed,
 * and resume also releases such an upgrade by retrying the run. The API server (for the verb calls and
 * the upgrade status's `steering`, which the dashboard shows) and the CLI's kubeconfig path ask here.
 * Pure and free of Node types, so the dashboard bundles it for the verb list and the last record.
 */
import { asObject } from '../spec/read';
import { isFailedRun, type AnalysisRunStatus } from './analysis-status';
import type { AnalysisOverride } from './observation';
import { effectiveStrategy, type UpgradeStrategyType } from '../spec/upgrade-strategy';

/** Steering annotation: `"true"` finishes the upgrade without waiting for intervals; the operator removes it once no upgrade is left. */
export const PROMOTE_ANNOTATION = 'rayshift.dev/promote';
/** Steering annotation: `"true"` rolls the upgrade in flight back; the operator removes it once done. */
export const ABORT_ANNOTATION = 'rayshift.dev/abort';
/** Steering annotation: `"true"` holds the upgrade (like `spec.rayshift.paused`). */
export const PAUSE_ANNOTATION = 'rayshift.dev/paused';
/**
 * Steering annotation: `retry:<run id>` measures the failed analysis run again from now,
 * `skip:<run id>` counts it as passed. Naming the run keeps a late or repeated decision from
 * touching a later run; the operator leaves it in place (it has no effect on any other run).
 */
export const ANALYSIS_OVERRIDE_ANNOTATION = 'rayshift.dev/analysis-override';

/** The analysis override an annotation value asks for, when it is well-formed. */
export function analysisOverrideOf(value: string | undefined): AnalysisOverride | undefined {
  const m = /^(retry|skip):(.+)$/.exec(value ?? '');
  return m === null ? undefined : { action: m[1] as 'retry' | 'skip', runId: m[2] };
}

/** Annotation recording the last steering verb: `{verb, user, reason, time}` as JSON. */
export const LAST_STEERING_ANNOTATION = 'rayshift.dev/last-steering';

/** The steering verbs, in the order access lists and the dashboard show them; each is also its RBAC subresource (`rayservices/<verb>`). */
export const STEERING_VERBS = ['pause', 'resume', 'promote', 'abort', 'rollback', 'retry-analysis', 'skip-analysis'] as const;
/** A steering verb. */
export type SteeringVerb = (typeof STEERING_VERBS)[number];

/**
 * The steering annotations that took effect and that the operator clears: abort once the rollback
 * finished, promote once no upgrade is left — both once no pending cluster remains.
 */
export function spentSteeringAnnotations(annotations: Readonly<Record<string, string>>, engine: { readonly pendingClusterName?: string }): string[] {
  if (engine.pendingClusterName !== undefined) return [];
  return [ABORT_ANNOTATION, PROMOTE_ANNOTATION].filter((a) => annotations[a] === 'true');
}

/**
 * Whether a RayService is paused: `spec.rayshift.paused`, or the pause annotation `"true"`. The one
 * rule of the observer (the engine's `controls.paused`), the steering state and the API server.
 */
export function isPaused(spec: unknown, annotations: Readonly<Record<string, string>> | undefined): boolean {
  return asObject(asObject(spec).rayshift).paused === true || annotations?.[PAUSE_ANNOTATION] === 'true';
}

/** What the rules read of a RayService. */
export interface SteeringState {
  /** The phase as `rayshift status` shows it (`status.phase`), named when a verb is refused. */
  readonly phase: string;
  /** The strategy of the upgrade in flight, else the spec's (KubeRay's default `NewCluster`). */
  readonly strategy: UpgradeStrategyType;
  /** An upgrade (or its rollback) is in flight: an active and a pending cluster. */
  readonly upgrading: boolean;
  /** A rollback runs (the engine never pauses or promotes one). */
  readonly rollingBack: boolean;
  /** Held by the pause annotation or `spec.rayshift.paused`. */
  readonly paused: boolean;
  /** `spec.rayshift.paused` is true: resuming clears it too, or the service would stay held. */
  readonly pausedBySpec: boolean;
  /** The promote annotation is set. */
  readonly promoteRequested: boolean;
  /** The id of the failed analysis run that holds the upgrade (`onFailure: pause`): retry-analysis and resume retry it, skip-analysis skips it. */
  readonly failedAnalysisRun?: string;
}

/** Who steered, why and when: the JSON of {@link LAST_STEERING_ANNOTATION}. */
export interface SteeringRecord {
  readonly verb: string;
  readonly user: string;
  readonly reason: string;
  readonly time: string;
}

/** The parts of a `rayshift.dev` RayService object the rules read (as the Kubernetes API returns it). */
export interface SteeredObject {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> };
  readonly spec?: unknown;
  readonly status?: unknown;
}

/** The steering state of a `rayshift.dev` RayService, from its spec, annotations and the engine state the operator persisted. */
export function steeringStateOf(obj: SteeredObject): SteeringState {
  const status = asObject(obj.status);
  const engine = asObject(status.engineState);
  const spec = asObject(obj.spec);
  const annotations = obj.metadata?.annotations ?? {};
  const pausedBySpec = isPaused(spec, undefined);
  const named = (v: unknown) => typeof v === 'string' && v !== '';
  const failedRun = analysisHoldOf(engine);
  return {
    phase: typeof status.phase === 'string' && status.phase !== '' ? status.phase : 'Unknown',
    strategy: effectiveStrategy(engine.upgradeStrategy, asObject(spec.upgradeStrategy).type),
    upgrading: named(engine.activeClusterName) && named(engine.pendingClusterName),
    rollingBack: engine.rollback !== undefined || status.phase === 'RollingBack',
    paused: isPaused(spec, annotations),
    pausedBySpec,
    promoteRequested: annotations[PROMOTE_ANNOTATION] === 'true',
    ...(failedRun !== undefined ? { failedAnalysisRun: failedRun } : {}),
  };
}

/** The id of the failed (or inconclusive) analysis run, not skipped, that holds an upgrade paused (`onFailure: pause`), from the engine state the operator persisted. */
export function analysisHoldOf(engineState: unknown): string | undefined {
  const engine = asObject(engineState);
  if (engine.phase !== 'Paused' || engine.reason !== 'AnalysisFailed') return undefined;
  const analysis = asObject(engine.analysis);
  for (const run of [asObject(analysis.step), asObject(analysis.background)]) {
    if (isFailedRun(run as Partial<AnalysisRunStatus>) && typeof run.id === 'string') return run.id;
  }
  return undefined;
}

/** Why `verb` does not apply to `s` (naming the phase), or `undefined` when it does. */
export function steeringRefusal(verb: SteeringVerb, s: SteeringState): string | undefined {
  const why = refusal(verb, s);
  return why === undefined ? undefined : `${why} (phase ${s.phase})`;
}

function refusal(verb: SteeringVerb, s: SteeringState): string | undefined {
  switch (verb) {
    case 'pause':
      if (s.strategy === 'None') return 'the strategy None never upgrades: there is nothing to pause';
      if (s.paused) return 'the upgrade is already paused';
      // The engine holds a forward upgrade only; a pause set now would hold nothing until the rollback ends.
      if (s.rollingBack) return 'a rollback is never paused';
      return undefined;
    case 'resume':
      return s.paused || s.failedAnalysisRun !== undefined ? undefined : 'the upgrade is not paused';
    case 'promote':
      if (!s.upgrading) return 'nothing to promote: no upgrade is in flight';
      if (s.rollingBack) return 'cannot promote: a rollback is running';
      if (s.strategy !== 'NewClusterWithIncrementalUpgrade') return `a ${s.strategy} upgrade switches as soon as the new cluster serves: there is nothing to promote`;
      if (s.promoteRequested) return 'a promotion is already requested';
      return undefined;
    case 'abort':
    case 'rollback':
      if (!s.upgrading) return `nothing to ${verb}: no upgrade is in flight`;
      if (s.rollingBack) return `cannot ${verb}: a rollback is already running`;
      return undefined;
    case 'retry-analysis':
    case 'skip-analysis':
      if (s.failedAnalysisRun !== undefined) return undefined;
      return `no failed analysis run holds the upgrade: only a run that failed and paused it (onFailure: pause) can be ${verb === 'retry-analysis' ? 'retried' : 'skipped'}`;
  }
}

/** True when `verb` applies to `s`. */
export function steeringApplies(verb: SteeringVerb, s: SteeringState): boolean {
  return steeringRefusal(verb, s) === undefined;
}

/**
 * The JSON merge patch of `verb` on a service in state `s` (which the caller checked with
 * {@link steeringRefusal}): the steering annotation set or removed (the analysis override naming the
 * failed run for retry-analysis, skip-analysis and resume), `spec.rayshift.paused` cleared by resume,
 * and `record` as the last steering when given. Rollback's spec (the serving cluster's,
 * which only the API server recovers) is the caller's to add.
 */
export function steeringPatch(verb: SteeringVerb, s: SteeringState, record?: SteeringRecord): { metadata: { annotations: Record<string, string | null> }; spec?: { rayshift: { paused: false } } } {
  const annotations: Record<string, string | null> = {};
  if (verb === 'pause') annotations[PAUSE_ANNOTATION] = 'true';
  if (verb === 'resume') annotations[PAUSE_ANNOTATION] = null;
  // The override names the failed run; an upgrade held by it resumes by measuring it again.
  const override = verb === 'skip-analysis' ? 'skip' : verb === 'retry-analysis' || verb === 'resume' ? 'retry' : undefined;
  if (override !== undefined && s.failedAnalysisRun !== undefined) annotations[ANALYSIS_OVERRIDE_ANNOTATION] = `${override}:${s.failedAnalysisRun}`;
  if (verb === 'promote') annotations[PROMOTE_ANNOTATION] = 'true';
  if (verb === 'abort') annotations[ABORT_ANNOTATION] = 'true';
  if (record !== undefined) annotations[LAST_STEERING_ANNOTATION] = JSON.stringify(record);
  return { metadata: { annotations }, ...(verb === 'resume' && s.pausedBySpec ? { spec: { rayshift: { paused: false as const } } } : {}) };
}

/** The last steering record of an annotation map, when it has a readable one. */
export function lastSteeringOf(annotations: Readonly<Record<string, string>> | undefined): SteeringRecord | undefined {
  const raw = annotations?.[LAST_STEERING_ANNOTATION];
  if (!raw) return undefined;
  try {
    const r = asObject(JSON.parse(raw));
    return { verb: String(r.verb ?? ''), user: String(r.user ?? ''), reason: String(r.reason ?? ''), time: String(r.time ?? '') };
  } catch {
    return undefined;
  }
}
