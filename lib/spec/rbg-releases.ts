/**
 * What differs between the RBG releases rayshift targets: API versions, role workload kinds, v0.8's
 * `restartPolicyConfig`, and the rules of v0.8's validating webhook (`ValidateRollingUpdate` and
 * `ValidateScalingAdapterReplicas` in `api/workloads/v1alpha2/rolebasedgroup_validation.go` at
 * v0.8.0-alpha.5), reported by rayshift before anything is applied.
 */
import { intOrPercentProblem, parsePercent } from './percent';
import { ProblemList, ValidationResult, show } from './problem';
import { INT32_MAX, JsonObject, asArray, asObject, isInteger, isObject } from './read';

/** API version of the current RoleBasedGroup (RBG ≥ v0.7.0) and of CoordinatedPolicy. */
export const RBG_V1ALPHA2 = 'workloads.x-k8s.io/v1alpha2';
/** API version of the deprecated RoleBasedGroup with inline `spec.coordination` (RBG v0.6.0; deprecated in v0.8). */
export const RBG_V1ALPHA1 = 'workloads.x-k8s.io/v1alpha1';

/** RoleBasedGroup API versions, as the construct's `version` names them: v1alpha2 (RBG ≥ v0.7.0, coordination in a CoordinatedPolicy) or v1alpha1 (inline coordination). */
export type RoleBasedGroupVersion = 'v1alpha1' | 'v1alpha2';
/** Every RoleBasedGroup API version. */
export const ROLE_BASED_GROUP_VERSIONS: readonly RoleBasedGroupVersion[] = ['v1alpha1', 'v1alpha2'];

/** RBG release a group is written for; `v0.8` is checked against v0.8.0-alpha.5. */
export type RbgRelease = 'v0.6' | 'v0.7' | 'v0.8';
/** Every RBG release rayshift checks against, oldest first. */
export const RBG_RELEASES = ['v0.6', 'v0.7', 'v0.8'] as const;

/** Workload kind of a role. RBG v0.8 deprecates every kind but RoleInstanceSet. */
export type RbgWorkloadKind = 'RoleInstanceSet' | 'StatefulSet' | 'Deployment' | 'LeaderWorkerSet';
/** The API version of each workload kind. */
export const RBG_WORKLOAD_API_VERSIONS: Readonly<Record<RbgWorkloadKind, string>> = {
  RoleInstanceSet: RBG_V1ALPHA2,
  StatefulSet: 'apps/v1',
  Deployment: 'apps/v1',
  LeaderWorkerSet: 'leaderworkerset.x-k8s.io/v1',
};
/** The v1alpha2 role annotation naming the workload, `<apiVersion>/<kind>` (absent: RoleInstanceSet). */
export const WORKLOAD_TYPE_ANNOTATION = 'rbg.workloads.x-k8s.io/role-workload-type';

/** Restart policy of a leader/worker role's instances (RBG ≥ v0.8: `leaderWorkerPattern.restartPolicyConfig`). */
export interface RestartPolicyConfig {
  /** What a pod failure does to its role instance. @default "RecreateRoleInstanceOnPodRestart" */
  readonly type?: 'None' | 'RecreateRoleInstanceOnPodRestart';
  /** Delay before the second recreation, seconds; it doubles with every further one. @default 30 */
  readonly baseDelaySeconds?: number;
  /** Longest delay between recreations, seconds; at least baseDelaySeconds. @default 600 */
  readonly maxDelaySeconds?: number;
}

/** The `restartPolicyConfig.type` values. */
export const RESTART_POLICY_TYPES = ['None', 'RecreateRoleInstanceOnPodRestart'] as const;

/** A role's `replicas` as RBG reads it: a non-negative integer, else the CRDs' default, 1. */
export function roleReplicas(role: JsonObject): number {
  return isInteger(role.replicas) && role.replicas >= 0 ? role.replicas : 1;
}

/**
 * A wire role's workload: `role.workload` in v1alpha1 (default StatefulSet, the schema's default),
 * the role-workload-type annotation in v1alpha2 (default RoleInstanceSet; a value without `/` counts
 * as unset, as upstream's `GetWorkloadSpec` reads it).
 */
export function roleWorkloadType(groupApiVersion: unknown, role: JsonObject): { apiVersion: string; kind: string } {
  if (typeof groupApiVersion === 'string' && groupApiVersion.endsWith('/v1alpha1')) {
    const w = asObject(role.workload);
    return { apiVersion: typeof w.apiVersion === 'string' ? w.apiVersion : 'apps/v1', kind: typeof w.kind === 'string' ? w.kind : 'StatefulSet' };
  }
  const declared = asObject(role.annotations)[WORKLOAD_TYPE_ANNOTATION];
  const text = typeof declared === 'string' && declared.lastIndexOf('/') > 0 ? declared : `${RBG_V1ALPHA2}/RoleInstanceSet`;
  const cut = text.lastIndexOf('/');
  return { apiVersion: text.slice(0, cut), kind: text.slice(cut + 1) };
}

/**
 * Whether RBG carries a role's `rollingUpdate.paused` into its workload of `kind`: only into a
 * RoleInstanceSet (v0.7.0 and v0.8.0-alpha.5); their StatefulSet reconcilers (v0.6.0's, the
 * workload of every v1alpha1 role, included) write only a partition, so such a role is held by its
 * partition alone.
 */
export function workloadHonoursPaused(kind: string): boolean {
  return kind === 'RoleInstanceSet';
}

/** Checks the release and the API version against it: v1alpha2 needs v0.7 or later; v1alpha1 is deprecated in v0.8. */
export function checkRelease(problems: ProblemList, release: unknown, apiVersion: unknown): void {
  if (!RBG_RELEASES.includes(release as RbgRelease)) {
    problems.error('rbgVersion', `${show(release)} is not an RBG release rayshift checks against; allowed: ${RBG_RELEASES.join(', ')}`);
    return;
  }
  if (apiVersion === RBG_V1ALPHA2 && release === 'v0.6') {
    problems.error('apiVersion', `${RBG_V1ALPHA2} does not exist in RBG v0.6 (it came with v0.7.0); use v1alpha1 or target v0.7 or later`);
  }
  if (apiVersion === RBG_V1ALPHA1 && release === 'v0.8') {
    problems.warning('apiVersion', `${RBG_V1ALPHA1} is deprecated in RBG v0.8 (the API server answers every request with a deprecation warning); use ${RBG_V1ALPHA2}`);
  }
}

/** Warns about a deprecated workload kind (`kind` as written, `at` its path) when the group targets RBG v0.8. */
export function checkWorkloadKind(problems: ProblemList, at: string, kind: string, release: RbgRelease | undefined): void {
  if (release !== 'v0.8' || kind === 'RoleInstanceSet' || !(kind in RBG_WORKLOAD_API_VERSIONS)) return;
  problems.warning(
    at,
    `${kind} is deprecated in RBG v0.8, superseded by RoleInstanceSet; a cluster installed with deprecatedWorkloadTypes.enabled=false rejects the group`,
  );
}

/**
 * Checks a `restartPolicyConfig`: RBG v0.8 or later, v1alpha2, a leader/worker role (v0.8 has it on
 * `leaderWorkerPattern` only); type from the enum, delays integers from 0 to 2³¹−1 and, with the
 * defaults (30, 600) filled in as the API server does before its CEL rule, max ≥ base.
 */
export function checkRestartPolicyConfig(problems: ProblemList, at: string, value: unknown, where: { release?: RbgRelease; v1alpha1: boolean; leaderWorker: boolean }): void {
  if (where.release !== 'v0.8') {
    problems.error(at, `exists from RBG v0.8 on; target it (rbgVersion "v0.8") or leave restartPolicyConfig unset (target: ${where.release ?? 'v0.7'})`);
    return;
  }
  if (where.v1alpha1) problems.error(at, `exists only in ${RBG_V1ALPHA2} (v1alpha1 has the deprecated restartPolicy string)`);
  if (!where.leaderWorker) problems.error(at, 'RBG v0.8 has restartPolicyConfig only on leader/worker roles (leaderWorkerPattern); set leaderWorkerSize above 1');
  if (!isObject(value)) {
    problems.error(at, `must be a mapping; got ${show(value)}`);
    return;
  }
  if (value.type !== undefined && !RESTART_POLICY_TYPES.includes(value.type as (typeof RESTART_POLICY_TYPES)[number])) {
    problems.error(`${at}.type`, `${show(value.type)} is not a restart policy; allowed: ${RESTART_POLICY_TYPES.join(', ')}`);
  }
  const delays: Record<string, number> = { baseDelaySeconds: 30, maxDelaySeconds: 600 };
  for (const field of ['baseDelaySeconds', 'maxDelaySeconds'] as const) {
    const v = value[field];
    if (v === undefined) continue;
    if (!isInteger(v) || v < 0 || v > INT32_MAX) problems.error(`${at}.${field}`, `must be an integer from 0 to ${INT32_MAX} (seconds); got ${show(v)}`);
    else delays[field] = v;
  }
  if (delays.maxDelaySeconds < delays.baseDelaySeconds) {
    const which = (f: string) => `${f} ${delays[f]}${value[f] === undefined ? ' (default)' : ''}`;
    problems.error(`${at}.maxDelaySeconds`, `${which('maxDelaySeconds')} is below ${which('baseDelaySeconds')}; allowed: ${delays.baseDelaySeconds} or more`);
  }
}

/** Kubernetes' `GetScaledValueFromIntOrPercent`: a count as is, a whole percent of `replicas` rounded up or down. */
function scaled(value: unknown, replicas: number, roundUp: boolean): number {
  const p = parsePercent(value);
  if (p === undefined) return Number(value);
  const exact = (p * replicas) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/**
 * RBG v0.8's webhook rules on a role's rolling update (`ru`, the role's `rollingUpdate`, at `at`),
 * applied as upstream does only when it is set and `replicas` > 0: maxSurge (rounded up, default 0)
 * and maxUnavailable (rounded down, default 1) must not both resolve to 0, and the partition
 * (rounded up, without the one-replica allowance RBG's workloads make) must be below replicas.
 * Malformed values are left to the shape checks.
 */
export function checkWebhookRollingUpdate(problems: ProblemList, at: string, ru: JsonObject, replicas: number): void {
  if (!isInteger(replicas) || replicas <= 0) return;
  const wellFormed = (v: unknown) => v === undefined || !intOrPercentProblem(v, true);
  if (wellFormed(ru.maxSurge) && wellFormed(ru.maxUnavailable)) {
    const surge = ru.maxSurge === undefined ? 0 : scaled(ru.maxSurge, replicas, true);
    const unavailable = ru.maxUnavailable === undefined ? 1 : scaled(ru.maxUnavailable, replicas, false);
    if (surge === 0 && unavailable === 0) {
      const describe = (field: string, v: unknown, n: number, rounding: string) => (v === undefined ? `${field} (default) is ${n}` : `${field} ${show(v)} resolves to ${n} of ${replicas} replicas${typeof v === 'string' ? ` (${rounding})` : ''}`);
      problems.error(
        `${at}.maxUnavailable`,
        `${describe('maxUnavailable', ru.maxUnavailable, 0, 'rounded down')} and ${describe('maxSurge', ru.maxSurge, 0, 'rounded up')}: RBG v0.8's webhook rejects both 0; allowed: maxUnavailable ≥ 1 (a percent ≥ "${Math.ceil(100 / replicas)}%") or maxSurge ≥ 1 (a percent ≥ "1%")`,
      );
    }
  }
  if (ru.partition !== undefined && wellFormed(ru.partition)) {
    const partition = scaled(ru.partition, replicas, true);
    if (partition >= replicas) {
      const resolved = typeof ru.partition === 'string' ? ` resolves to ${partition} of ${replicas} replicas (rounded up) and` : '';
      problems.error(
        `${at}.partition`,
        `${show(ru.partition)}${resolved} is not below replicas: RBG v0.8's webhook rejects it; allowed: ${replicas === 1 ? '0 or "0%"' : `0–${replicas - 1} or "0%"–"${Math.floor((100 * (replicas - 1)) / replicas)}%"`}`,
      );
    }
  }
}

/** The ScalingAdapter RBG names for a role: `<group>-<role>`. */
export function scalingAdapterName(group: string, role: string): string {
  return `${group}-${role}`;
}

/**
 * RBG v0.8's webhook rule on an update: a role with `scalingAdapter.enable` may not change
 * `replicas` to a value other than its ScalingAdapter's `spec.replicas` (the autoscaler owns it).
 * `adapterReplicas` gives that value per role (undefined: no adapter or no replicas, nothing to
 * check). Needs the live adapter, so only something holding the old group, the new group and the
 * cluster can apply it; rayshift's own writers never change replicas (see docs/rbg-coordination.md).
 */
export function validateRoleBasedGroupUpdate(oldManifest: unknown, newManifest: unknown, adapterReplicas: (role: string) => number | undefined): ValidationResult {
  const problems = new ProblemList();
  const oldRoles = new Map(asArray(asObject(asObject(oldManifest).spec).roles).map((r) => [asObject(r).name, asObject(r)]));
  const text = (v: unknown) => (typeof v === 'string' ? v : show(v));
  const group = text(asObject(asObject(newManifest).metadata).name);
  asArray(asObject(asObject(newManifest).spec).roles).forEach((value, i) => {
    const role = asObject(value);
    if (asObject(role.scalingAdapter).enable !== true) return;
    const before = oldRoles.get(role.name);
    // The schema defaults replicas to 1 on both objects before the webhook compares them.
    const [was, now] = [before?.replicas ?? 1, role.replicas ?? 1];
    if (!before || was === now) return;
    const owned = adapterReplicas(text(role.name));
    if (owned === undefined || owned === now) return;
    problems.error(
      `spec.roles[${i}].replicas`,
      `${show(now)} differs from ${show(was)} while scalingAdapter.enable is true and ScalingAdapter ${show(scalingAdapterName(group, text(role.name)))} has spec.replicas ${owned}: RBG v0.8's webhook rejects it; allowed: ${owned}, or leave replicas to the adapter`,
    );
  });
  return problems.result();
}
