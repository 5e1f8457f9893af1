/**
 * The options a rayshift executor (`operator`, `pulumi`) runs a RoleBasedGroup rollout with, as
 * the group's `rayshift.dev/coordination` annotation carries them: their defaults and the checks
 * of the whole annotation (a CoordinatedPolicy `spec` plus rayshift's deadline and scheduler-watch settings, release
 * waves, router, warmup and analysis). The engine resolves a checked annotation into rules (`readCoordination`).
 */
import { SURGE_WATCH_DEFAULTS } from './capacity-policy';
import { ProblemList, ValidationResult, show } from './problem';
import { JsonObject, asArray, asObject } from './read';
import { COORDINATION_ANNOTATION, checkExecutorSettings, validateCoordinatedPolicy } from './rbg';
import { checkRolloutAnalysis } from './rbg-analysis';
import { checkRouter } from './rbg-router';
import { checkRolloutWarmup } from './rbg-warmup';

/** Defaults of a rule's rayshift-executor settings, when the rule does not set them. */
export const RBG_EXECUTOR_DEFAULTS = {
  /** Seconds without progress before a coordination is stopped. */
  progressDeadlineSeconds: 600,
  /** Stop where the roles stand at the deadline rather than return them to the old revision. */
  rollbackOnDeadline: false,
  /** Start a rollout whose first round does not fit, and keep waiting for capacity when Pods of the rule's roles stay Unschedulable (the RayService's default). */
  capacityPolicy: SURGE_WATCH_DEFAULTS.capacityPolicy,
  /** Seconds a Pod may stay Unschedulable before it is reported (the RayService's default). */
  surgeUnschedulableSeconds: SURGE_WATCH_DEFAULTS.surgeUnschedulableSeconds,
} as const;

/** The roles named by the annotation's rolling-update rules, each once, in order of appearance. */
export function rollingUpdateRoles(spec: JsonObject): string[] {
  const rolling = asArray(spec.policies).filter((p) => asObject(asObject(p).strategy).rollingUpdate !== undefined);
  return [...new Set(rolling.flatMap((p) => asArray(asObject(p).roles).map(String)))];
}

/**
 * Checks a parsed coordination annotation (`spec`) of the group with `metadata`: the policy rules,
 * each rule's executor settings and waves, the warmup and the analysis. Returns every problem at once.
 */
export function validateCoordinationAnnotation(metadata: JsonObject, spec: JsonObject): ValidationResult {
  const problems = new ProblemList();
  problems.addAll(validateCoordinatedPolicy({ metadata, spec }));
  asArray(spec.policies).forEach((rule, i) => {
    checkExecutorSettings(problems, `spec.policies[${i}]`, rule, 'operator');
    checkWaves(problems, `spec.policies[${i}].waves`, asObject(rule));
    const r = asObject(rule);
    if (r.router !== undefined) {
      checkRouter(problems, `spec.policies[${i}].router`, r.router, { ruleRoles: asArray(r.roles), rollingUpdate: asObject(r.strategy).rollingUpdate !== undefined, executor: 'operator' });
    }
  });
  // The executor cannot know the RBG release; whether the Warmup CRD is served decides at run time.
  if (spec.warmup !== undefined) checkRolloutWarmup(problems, 'warmup', spec.warmup, { rbgVersion: 'v0.8', coordinated: rollingUpdateRoles(spec) });
  if (spec.analysis !== undefined) checkRolloutAnalysis(problems, 'analysis', spec.analysis, { executor: 'operator' });
  return problems.result();
}

/**
 * Errors for each role a rule of the group's coordination annotation (parsed: `spec`) names that
 * the group lacks: the executor leaves such a role out (as RBG leaves a policy's unknown role out
 * of its coordination), so the rule coordinates fewer roles than it names.
 */
export function annotationRoleProblems(group: JsonObject, spec: JsonObject): ValidationResult {
  const problems = new ProblemList();
  const roles = asArray(asObject(group.spec).roles).map((r) => asObject(r).name).filter((n): n is string => typeof n === 'string');
  asArray(spec.policies).forEach((rule, i) => {
    asArray(asObject(rule).roles).forEach((name, j) => {
      if (typeof name !== 'string' || roles.includes(name)) return;
      problems.error(
        `metadata.annotations["${COORDINATION_ANNOTATION}"].policies[${i}].roles[${j}]`,
        `${show(name)} is not a role of this group, so rule ${show(asObject(rule).name)} does not coordinate it; roles: ${roles.join(', ') || 'none'}`,
      );
    });
  });
  return problems.result();
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
