/**
 * The coordination rules a rayshift executor enforces on a RoleBasedGroup, read from the group's
 * `rayshift.dev/coordination` annotation (CoordinatedPolicy `spec` form plus rayshift's deadline
 * settings) and resolved against the group's roles with the same adapter `rayshift plan` uses.
 */
import { rbgPlanInputs } from '../../engine/from-spec';
import type { RbgPlanRole } from '../../engine/plan-rbg';
import { formatProblem, ProblemList } from '../../spec/problem';
import { COORDINATION_ANNOTATION, checkExecutorSettings, validateCoordinatedPolicy } from '../../spec/rbg';
import { JsonObject, asArray, asObject, isObject } from '../../spec/read';
import { ResolvedRolloutWarmup, RolloutWarmup, checkRolloutWarmup, resolveRolloutWarmup } from '../../spec/rbg-warmup';

/** Seconds without progress before a coordination is stopped, when its rule does not say. */
export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

/** One rolling-update rule as the executor runs it. */
export interface ExecutorRule {
  /** Rule name. */
  readonly name: string;
  /** Largest allowed progress skew between the roles, percent (100 when the rule sets none). */
  readonly maxSkewPercent: number;
  /** The coordinated roles that exist in the group, with their resolved partition and maxUnavailable. */
  readonly roles: readonly RbgPlanRole[];
  /** Seconds without progress before the rollout is stopped. */
  readonly progressDeadlineSeconds: number;
  /** Return every role to the old revision when the deadline passes. */
  readonly rollbackOnDeadline: boolean;
  /**
   * AffinityScheduling release order: role names per wave; wave k+1 starts once every role of the
   * waves before it is updated and ready. Undefined: one wave of every role.
   */
  readonly waves?: readonly (readonly string[])[];
}

/** The rules of a group (and its rollout warmup, when the annotation has `warmup`), or why they cannot be read. */
export type CoordinationReading =
  | { readonly rules: readonly ExecutorRule[]; readonly warmup?: ResolvedRolloutWarmup; readonly problem?: undefined }
  | { readonly rules?: undefined; readonly warmup?: undefined; readonly problem: string };

/** Reads and checks the group's coordination annotation; an absent annotation means no rules. */
export function readCoordination(group: JsonObject): CoordinationReading {
  const text = asObject(asObject(group.metadata).annotations)[COORDINATION_ANNOTATION];
  if (text === undefined) return { rules: [] };
  let spec: unknown;
  try {
    spec = JSON.parse(String(text));
  } catch (err) {
    return { problem: `annotation ${COORDINATION_ANNOTATION} is not JSON: ${(err as Error).message}` };
  }
  if (!isObject(spec)) return { problem: `annotation ${COORDINATION_ANNOTATION} must be a JSON object with "policies"` };
  const problems = new ProblemList();
  problems.addAll(validateCoordinatedPolicy({ metadata: asObject(group.metadata), spec }));
  asArray(spec.policies).forEach((rule, i) => {
    checkExecutorSettings(problems, `spec.policies[${i}]`, rule, 'operator');
    checkWaves(problems, `spec.policies[${i}].waves`, asObject(rule));
  });
  const coordinated = [...new Set(asArray(spec.policies).filter((p) => asObject(asObject(p).strategy).rollingUpdate !== undefined).flatMap((p) => asArray(asObject(p).roles).map(String)))];
  // The executor cannot know the RBG release; whether the Warmup CRD is served decides at run time.
  if (spec.warmup !== undefined) checkRolloutWarmup(problems, 'warmup', spec.warmup, { rbgVersion: 'v0.8', coordinated });
  const errors = problems.result().errors;
  if (errors.length > 0) return { problem: `annotation ${COORDINATION_ANNOTATION}: ${errors.map(formatProblem).join('; ')}` };
  const settings = new Map(asArray(spec.policies).map((p) => [String(asObject(p).name), asObject(p)]));
  const rules = rbgPlanInputs(group, { spec }).map((input): ExecutorRule => {
    const rule = settings.get(input.rule) ?? {};
    return {
      name: input.rule,
      maxSkewPercent: input.maxSkewPercent,
      roles: input.roles,
      progressDeadlineSeconds: typeof rule.progressDeadlineSeconds === 'number' ? rule.progressDeadlineSeconds : DEFAULT_PROGRESS_DEADLINE_SECONDS,
      rollbackOnDeadline: rule.rollbackOnDeadline === true,
      ...(Array.isArray(rule.waves) ? { waves: (rule.waves as string[][]).map((w) => w.filter((n) => input.roles.some((r) => r.name === n))) } : {}),
    };
  });
  return { rules, ...(isObject(spec.warmup) ? { warmup: resolveRolloutWarmup(spec.warmup as RolloutWarmup, coordinated) } : {}) };
}

/** `waves`, when present: lists of role names of the rule, each role in one wave at most. */
function checkWaves(problems: ProblemList, at: string, rule: JsonObject): void {
  if (rule.waves === undefined) return;
  const seen = new Set<string>();
  const roles = asArray(rule.roles);
  if (!Array.isArray(rule.waves) || !rule.waves.every((w) => Array.isArray(w) && w.every((n) => typeof n === 'string'))) {
    problems.error(at, 'must be a list of lists of role names');
    return;
  }
  for (const name of (rule.waves as string[][]).flat()) {
    if (!roles.includes(name)) problems.error(at, `${JSON.stringify(name)} is not a role of the rule`);
    else if (seen.has(name)) problems.error(at, `${JSON.stringify(name)} is in more than one wave`);
    seen.add(name);
  }
}
