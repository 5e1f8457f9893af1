/**
 * The coordination rules (and the rollout's warmup and analysis) a rayshift executor enforces on a RoleBasedGroup, read from the group's
 * `rayshift.dev/coordination` annotation, checked by lib/spec (`validateCoordinationAnnotation`)
 * and resolved against the group's roles with the same adapter `rayshift plan` uses, the spec's
 * defaults (`RBG_EXECUTOR_DEFAULTS`) filling what a rule does not set.
 */
import { ResolvedAnalysis, UpgradeAnalysis, resolveUpgradeAnalysis } from '../spec/analysis';
import { formatProblem } from '../spec/problem';
import { COORDINATION_ANNOTATION, RBG_CAPACITY_POLICIES, type RbgCapacityPolicy } from '../spec/rbg';
import { RBG_EXECUTOR_DEFAULTS, rollingUpdateRoles, validateCoordinationAnnotation } from '../spec/rbg-executor';
import { RouterOptions, resolveRouter } from '../spec/rbg-router';
import { ResolvedRolloutWarmup, RolloutWarmup, resolveRolloutWarmup } from '../spec/rbg-warmup';
import { JsonObject, asArray, asObject, isObject } from '../spec/read';
import { rbgPlanInputs } from './from-spec';
import type { ExecutorRule } from './rbg-coordination-types';

/** The rules of a group (and its rollout warmup and analysis, when the annotation has them), or why they cannot be read. */
export type CoordinationReading =
  | { readonly rules: readonly ExecutorRule[]; readonly warmup?: ResolvedRolloutWarmup; readonly analysis?: ResolvedAnalysis; readonly problem?: undefined }
  | { readonly rules?: undefined; readonly warmup?: undefined; readonly analysis?: undefined; readonly problem: string };

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
  const errors = validateCoordinationAnnotation(asObject(group.metadata), spec).errors;
  if (errors.length > 0) return { problem: `annotation ${COORDINATION_ANNOTATION}: ${errors.map(formatProblem).join('; ')}` };
  const settings = new Map(asArray(spec.policies).map((p) => [String(asObject(p).name), asObject(p)]));
  const rules = rbgPlanInputs(group, { spec }).map((input): ExecutorRule => {
    const rule = settings.get(input.rule) ?? {};
    return {
      name: input.rule,
      maxSkewPercent: input.maxSkewPercent,
      roles: input.roles,
      progressDeadlineSeconds: typeof rule.progressDeadlineSeconds === 'number' ? rule.progressDeadlineSeconds : RBG_EXECUTOR_DEFAULTS.progressDeadlineSeconds,
      rollbackOnDeadline: typeof rule.rollbackOnDeadline === 'boolean' ? rule.rollbackOnDeadline : RBG_EXECUTOR_DEFAULTS.rollbackOnDeadline,
      // Checked above: one of RBG_CAPACITY_POLICIES when set.
      capacityPolicy: (RBG_CAPACITY_POLICIES as readonly unknown[]).includes(rule.capacityPolicy) ? (rule.capacityPolicy as RbgCapacityPolicy) : RBG_EXECUTOR_DEFAULTS.capacityPolicy,
      surgeUnschedulableSeconds: typeof rule.surgeUnschedulableSeconds === 'number' ? rule.surgeUnschedulableSeconds : RBG_EXECUTOR_DEFAULTS.surgeUnschedulableSeconds,
      ...(Array.isArray(rule.waves) ? { waves: (rule.waves as string[][]).map((w) => w.filter((n) => input.roles.some((r) => r.name === n))) } : {}),
      ...(isObject(rule.router) ? { router: resolveRouter(rule.router as unknown as RouterOptions) } : {}),
    };
  });
  return {
    rules,
    ...(isObject(spec.warmup) ? { warmup: resolveRolloutWarmup(spec.warmup as RolloutWarmup, rollingUpdateRoles(spec)) } : {}),
    ...(isObject(spec.analysis) ? { analysis: resolveUpgradeAnalysis(spec.analysis as unknown as UpgradeAnalysis) } : {}),
  };
}
