/**
 * Checks of a RoleBasedGroup's roles, in the model form the constructs use (`rollingUpdate`,
 * `workload`, `restartPolicyConfig` at the top of a role) and in the wire form (`rolloutStrategy`,
 * `workload` objects, role-workload-type annotations, patterns).
 */
import { dns1123LabelProblem } from './names';
import { IntOrPercent, intOrPercentProblem, parsePercent, resolvePartition } from './percent';
import { ProblemList, checkOneOf, show } from './problem';
import { INT32_MAX, JsonObject, asObject, isInteger, isObject } from './read';
import {
  RBG_V1ALPHA1,
  RBG_WORKLOAD_API_VERSIONS,
  RbgRelease,
  WORKLOAD_TYPE_ANNOTATION,
  checkRestartPolicyConfig,
  checkWebhookRollingUpdate,
  checkWorkloadKind,
  roleWorkloadType,
} from './rbg-releases';

/** What the roles are checked against: the form, the group's API version and the targeted RBG release (undefined: not known, release rules skipped). */
export interface RoleTarget {
  readonly form: 'model' | 'wire';
  readonly apiVersion: string;
  readonly release?: RbgRelease;
}

/** Checks every role and returns the well-named ones by name. */
export function checkRoles(problems: ProblemList, rolesValue: unknown, target: RoleTarget): Map<string, JsonObject> {
  const at = 'spec.roles';
  const roles = new Map<string, JsonObject>();
  if (!Array.isArray(rolesValue) || rolesValue.length === 0) {
    problems.error(at, `must list at least one role; got ${show(rolesValue)}`);
    return roles;
  }
  rolesValue.forEach((r, i) => {
    const here = `${at}[${i}]`;
    if (!isObject(r)) {
      problems.error(here, `must be a role with a name; got ${show(r)}`);
      return;
    }
    const name = r.name;
    const p = typeof name === 'string' ? dns1123LabelProblem(name) : `is required; got ${show(name)}`;
    if (p) problems.error(`${here}.name`, p);
    else if (roles.has(name as string)) problems.error(`${here}.name`, `${show(name)} is already used by another role; role names must be unique`);
    else roles.set(name as string, r);
    const replicas = r.replicas ?? 1;
    if (!isInteger(replicas) || replicas < 0 || replicas > INT32_MAX) problems.error(`${here}.replicas`, `must be an integer ≥ 0 and ≤ ${INT32_MAX} (int32); got ${show(replicas)}`);
    checkRoleRollingUpdate(problems, here, r, replicas, target.release);
    if (target.form === 'model') checkModelRole(problems, here, r, target);
    else checkWireRole(problems, here, r, target);
  });
  return roles;
}

function checkRoleRollingUpdate(problems: ProblemList, here: string, r: JsonObject, replicas: unknown, release: RbgRelease | undefined): void {
  const ru = roleRollingUpdate(r);
  const ruAt = `${here}.${r.rolloutStrategy !== undefined ? 'rolloutStrategy.rollingUpdate' : 'rollingUpdate'}`;
  for (const field of ['maxUnavailable', 'maxSurge', 'partition'] as const) {
    if (ru[field] === undefined) continue;
    const fp = intOrPercentProblem(ru[field], true);
    if (fp) problems.error(`${ruAt}.${field}`, fp);
  }
  if (!isInteger(replicas) || replicas <= 0) return;
  // v0.8's webhook resolves percents its own way and rejects more than the earlier rules do.
  if (release === 'v0.8') {
    if (isObject(r.rollingUpdate ?? asObject(r.rolloutStrategy).rollingUpdate)) checkWebhookRollingUpdate(problems, ruAt, ru, replicas);
    return;
  }
  if (ru.partition !== undefined && !intOrPercentProblem(ru.partition, true)) {
    const kept = resolvePartition(ru.partition as IntOrPercent, replicas);
    if (kept >= replicas) {
      problems.error(`${ruAt}.partition`, `${show(ru.partition)} ${partitionEffect(ru.partition, kept, replicas)}; must be below replicas (${replicas})`);
    }
  }
  if (isZero(ru.maxUnavailable ?? 1) && isZero(ru.maxSurge ?? 0)) {
    problems.error(`${ruAt}.maxUnavailable`, 'and maxSurge are both 0: the update could never replace a replica; set one of them above 0');
  }
}

/** The model's own role fields: `template` (its containers), `workload` and `restartPolicyConfig`. */
function checkModelRole(problems: ProblemList, here: string, r: JsonObject, target: RoleTarget): void {
  // The type requires a template with containers: without one no Pod of the role could be created.
  const containers = asObject(asObject(r.template).spec).containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    problems.error(`${here}.template.spec.containers`, `must list at least one container (Kubernetes refuses a Pod without one); got ${show(containers)}`);
  }
  if (r.workload !== undefined) {
    const kinds = Object.keys(RBG_WORKLOAD_API_VERSIONS);
    // A list, not `in`: `"toString" in {...}` is true.
    if (!kinds.includes(r.workload as string)) {
      checkOneOf(problems, `${here}.workload`, r.workload, kinds, 'a workload kind');
    } else {
      checkWorkloadKind(problems, `${here}.workload`, r.workload as string, target.release);
      const size = r.leaderWorkerSize ?? 1;
      if ((r.workload === 'StatefulSet' || r.workload === 'Deployment') && isInteger(size) && size > 1) {
        problems.error(`${here}.workload`, `${r.workload} has no leader/worker instances (leaderWorkerSize ${size}); allowed: RoleInstanceSet or LeaderWorkerSet`);
      }
    }
  }
  if (r.restartPolicyConfig !== undefined) {
    const size = r.leaderWorkerSize ?? 1;
    checkRestartPolicyConfig(problems, `${here}.restartPolicyConfig`, r.restartPolicyConfig, {
      release: target.release,
      v1alpha1: target.apiVersion === RBG_V1ALPHA1,
      leaderWorker: isInteger(size) && size > 1,
    });
  }
}

/** A wire role's workload (deprecated in v0.8) and `leaderWorkerPattern.restartPolicyConfig`, checked when the release is known. */
function checkWireRole(problems: ProblemList, here: string, r: JsonObject, target: RoleTarget): void {
  if (target.release === undefined) return;
  const v1alpha1 = target.apiVersion === RBG_V1ALPHA1;
  const kind = roleWorkloadType(target.apiVersion, r).kind;
  checkWorkloadKind(problems, v1alpha1 ? `${here}.workload` : `${here}.annotations["${WORKLOAD_TYPE_ANNOTATION}"]`, kind, target.release);
  const config = asObject(r.leaderWorkerPattern).restartPolicyConfig;
  if (config !== undefined) checkRestartPolicyConfig(problems, `${here}.leaderWorkerPattern.restartPolicyConfig`, config, { release: target.release, v1alpha1, leaderWorker: true });
}

/** The role's rolling-update settings, from the model (`rollingUpdate`) or the wire (`rolloutStrategy.rollingUpdate`). */
export function roleRollingUpdate(role: JsonObject): JsonObject {
  return asObject(role.rollingUpdate ?? asObject(role.rolloutStrategy).rollingUpdate);
}

/** Says what a partition does to a role of `replicas`: exceeds it, or keeps `kept` replicas on the old revision. */
export function partitionEffect(partition: unknown, kept: number, replicas: number): string {
  return typeof partition === 'number' && partition > replicas
    ? `exceeds the ${replicas} replicas`
    : `keeps ${kept} of ${replicas} replicas on the old revision`;
}

function isZero(v: unknown): boolean {
  return v === 0 || parsePercent(v) === 0;
}
