/**
 * The RoleBasedGroup model (roles, coordination rules, executors) and its validators. The checks
 * live by concept: roles in `rbg-roles.ts`, coordination rules in `rbg-rules.ts`, what differs
 * between RBG releases (v0.8's webhook rules, workload kinds, restartPolicyConfig) in
 * `rbg-releases.ts`, whose public names this module re-exports.
 */
import { IntOrPercent } from './percent';
import { dns1123LabelProblem } from './names';
import { RBG_CAPACITY_POLICIES, checkSurgeUnschedulableSeconds, type RbgCapacityPolicy } from './capacity-policy';
import { ProblemList, ValidationResult, checkOneOf, show } from './problem';
import { PodTemplateJson } from './raycluster';
import { JsonObject, asArray, asObject, isInteger, isObject } from './read';
import { RBG_V1ALPHA1, RBG_V1ALPHA2, RbgRelease, RbgWorkloadKind, RestartPolicyConfig, checkRelease } from './rbg-releases';
import { checkRoles } from './rbg-roles';
import { checkRules } from './rbg-rules';
import { RouterOptions, checkRouter } from './rbg-router';

export {
  RBG_RELEASES,
  RBG_V1ALPHA1,
  RBG_V1ALPHA2,
  RBG_WORKLOAD_API_VERSIONS,
  RESTART_POLICY_TYPES,
  ROLE_BASED_GROUP_VERSIONS,
  WORKLOAD_TYPE_ANNOTATION,
  roleWorkloadType,
  scalingAdapterName,
  validateRoleBasedGroupUpdate,
} from './rbg-releases';
export type { RbgRelease, RbgWorkloadKind, RestartPolicyConfig, RoleBasedGroupVersion } from './rbg-releases';
export { BATCH_MODES } from './rbg-rules';
export { RBG_CAPACITY_POLICIES, type RbgCapacityPolicy } from './capacity-policy';

/** A role's own rolling-update settings (`rolloutStrategy.rollingUpdate`). */
export interface RoleRollingUpdate {
  /** Replicas that may be down during the update. @default 1 */
  readonly maxUnavailable?: IntOrPercent;
  /** Extra replicas during the update. @default 0 */
  readonly maxSurge?: IntOrPercent;
  /** Replicas kept on the old revision. @default 0 */
  readonly partition?: IntOrPercent;
  /** Holds the update. @default false */
  readonly paused?: boolean;
}

/** One role of a RoleBasedGroup (e.g. `prefill`, `decode`, `router`). */
export interface RoleSpec {
  /** Role name, a DNS label unique in the group. */
  readonly name: string;
  /** Instances of the role. @default 1 */
  readonly replicas?: number;
  /** Pod template of each instance. */
  readonly template: PodTemplateJson;
  /** Roles that must be ready first. */
  readonly dependencies?: string[];
  /** Rolling-update settings; a role under a rolling-update coordination must leave them to the coordination. */
  readonly rollingUpdate?: RoleRollingUpdate;
  /** Pods per instance for leader/worker roles (multi-node inference). @default 1 (standalone) */
  readonly leaderWorkerSize?: number;
  /** Labels of the role's workload. */
  readonly labels?: Record<string, string>;
  /** Annotations of the role's workload. */
  readonly annotations?: Record<string, string>;
  /**
   * The role's workload kind; StatefulSet, Deployment and LeaderWorkerSet are deprecated in RBG v0.8.
   * @default RoleInstanceSet in v1alpha2 and, targeting RBG v0.8, in v1alpha1 too; before v0.8,
   * v1alpha1's StatefulSet (LeaderWorkerSet with leaderWorkerSize > 1)
   */
  readonly workload?: RbgWorkloadKind;
  /** Restart policy of a leader/worker role's instances; RBG v0.8 and v1alpha2 only. @default RBG's: recreate the instance, backoff 30 s to 600 s */
  readonly restartPolicyConfig?: RestartPolicyConfig;
}

/** Rolling-update coordination: roles move to the new revision at the same rate. */
export interface RollingUpdateCoordination {
  /** Largest allowed difference of updated fractions between roles, a percent (`"10%"`). */
  readonly maxSkew?: string;
  /** Replicas per role that may be down, count or percent. */
  readonly maxUnavailable?: IntOrPercent;
  /** Replicas per role kept on the old revision, count or percent. */
  readonly partition?: IntOrPercent;
}

/** Scaling coordination: roles scale out at the same rate. */
export interface ScalingCoordination {
  /** Largest allowed difference of scaled fractions, a percent. @default "100%" */
  readonly maxSkew?: string;
  /** What counts as progress: scheduled or ready instances. @default "OrderScheduled" */
  readonly progression?: 'OrderScheduled' | 'OrderReady';
}

/** AffinityScheduling coordination (KEP-30): pods of the roles land together in fixed ratios, batch by batch. */
export interface AffinitySchedulingCoordination {
  /** Topology domain each batch must share. @default "kubernetes.io/hostname" */
  readonly topologyKey?: string;
  /** Pods of each role per batch, e.g. `{prefill: 2, decode: 1}`; every role of the rule needs one. */
  readonly ratios: Readonly<Record<string, number>>;
  /** Release batches one after another or all at once. @default "Sequential" */
  readonly batchMode?: 'Sequential' | 'Parallel';
}

/** One coordination rule over two or more roles. */
export interface CoordinationRule {
  /** Rule name, unique in the group. */
  readonly name: string;
  /** The coordinated roles. */
  readonly roles: string[];
  /** Coordinated rolling update. */
  readonly rollingUpdate?: RollingUpdateCoordination;
  /** Coordinated scaling. */
  readonly scaling?: ScalingCoordination;
  /** Ratio co-location in batches. */
  readonly affinityScheduling?: AffinitySchedulingCoordination;
  /**
   * rayshift executors only (`operator`, `pulumi`): seconds without progress (no replica of any
   * coordinated role newly updated or ready, no partition lowered) after which the rollout stops
   * every coordinated role where it stands and reports the blocking role. @default 600
   */
  readonly progressDeadlineSeconds?: number;
  /**
   * rayshift executors only: when the deadline passes, return every coordinated role to the revision
   * it ran before the rollout, in tandem rollback rounds (docs/rbg-coordination.md, *Rollback*).
   * @default false
   */
  readonly rollbackOnDeadline?: boolean;
  /**
   * rayshift executors only: what the rollout does when the Pods of its first round do not fit the
   * cluster (the capacity preflight, before the round is released), and once Pods of the rule's
   * roles stay Unschedulable for `surgeUnschedulableSeconds` (the scheduler cannot place a new
   * replica). `wait` starts the rollout anyway and reports it (status `capacity`, one
   * `InsufficientCapacity` Event), and reports Unschedulable Pods (status `surgeUnschedulable`, one
   * Event) while it keeps waiting for capacity, as a node autoscaler may add it; `fail` does not
   * start a rollout whose first round does not fit (phase `Failed`, every role where it stands,
   * until the template changes again), and returns every coordinated role to the revision it ran
   * before the rollout once Pods stay Unschedulable, in tandem rollback rounds, instead of waiting
   * for the progress deadline. @default "wait"
   */
  readonly capacityPolicy?: RbgCapacityPolicy;
  /**
   * rayshift executors only: seconds a Pod of the rule's roles may stay Unschedulable during the
   * rollout before it is reported (and, under `capacityPolicy: fail`, rolled back), 1–2147483647.
   * @default 120
   */
  readonly surgeUnschedulableSeconds?: number;
  /**
   * rayshift executors only: version-matched routing of the rule's prefill and decode roles, one
   * router per release and a route between them (docs/rbg-coordination.md, *Version-matched
   * routing*). @default no router
   */
  readonly router?: RouterOptions;
}

/**
 * Who executes a RoleBasedGroup's coordinated rolling update: `rbg` (the upstream controller, through
 * a CoordinatedPolicy or v1alpha1's inline `spec.coordination`), `operator` (the rayshift operator)
 * or `pulumi` (the Pulumi dynamic provider, during `pulumi up`).
 */
export type RbgExecutor = 'operator' | 'pulumi' | 'rbg';

/** The executor when none is given: the upstream RBG controller. */
export const DEFAULT_RBG_EXECUTOR: RbgExecutor = 'rbg';

/** Every executor of a RoleBasedGroup rollout. */
export const RBG_EXECUTORS = ['operator', 'pulumi', 'rbg'] as const;

/**
 * Label on a RoleBasedGroup naming the rayshift executor of its coordinated rollout (`operator` or
 * `pulumi`); absent for `rbg`. A label, so the operator can watch only its groups and GitOps tools
 * can key ignore rules on it.
 */
export const EXECUTOR_LABEL = 'rayshift.dev/coordination-executor';
/**
 * Annotation on a RoleBasedGroup with the rules a rayshift executor enforces: JSON
 * `{"policies": [...]}`, a CoordinatedPolicy `spec` whose rules may also carry
 * `progressDeadlineSeconds`, `rollbackOnDeadline`, `capacityPolicy` and `surgeUnschedulableSeconds`. Kept out of `spec.coordination` and out of a
 * CoordinatedPolicy so the upstream controller never coordinates the same roles a second time.
 */
export const COORDINATION_ANNOTATION = 'rayshift.dev/coordination';

/** Options of `validateRoleBasedGroup`. */
export interface RoleBasedGroupCheckOptions {
  /** The RBG release the group is for: adds that release's rules (v0.8: its webhook's) and deprecations. @default none, the rules every release shares */
  readonly rbgVersion?: RbgRelease;
}

/**
 * Validates a RoleBasedGroup manifest (v1alpha1 with inline `spec.coordination`, or v1alpha2)
 * and returns every problem at once. Never throws.
 */
export function validateRoleBasedGroup(manifest: unknown, options: RoleBasedGroupCheckOptions = {}): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  checkName(problems, obj);
  if (options.rbgVersion !== undefined) checkRelease(problems, options.rbgVersion, obj.apiVersion);
  const spec = asObject(obj.spec);
  const roles = checkRoles(problems, spec.roles, { form: 'wire', apiVersion: typeof obj.apiVersion === 'string' ? obj.apiVersion : '', release: options.rbgVersion });
  if (spec.coordination !== undefined) {
    if (obj.apiVersion !== RBG_V1ALPHA1) {
      problems.error('spec.coordination', `inline coordination exists only in ${RBG_V1ALPHA1}; in ${show(obj.apiVersion)} use a CoordinatedPolicy named like the group`);
    } else {
      checkRules(problems, 'spec.coordination', flattenWireRules(spec.coordination), roles, true, 'strategy.');
    }
  }
  return problems.result();
}

/**
 * Validates a CoordinatedPolicy. With its RoleBasedGroup, it also checks the binding (upstream
 * applies a policy only to the group of the same name and namespace) and the rules against the roles.
 */
export function validateCoordinatedPolicy(manifest: unknown, group?: unknown): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  checkName(problems, obj);
  const spec = asObject(obj.spec);
  let roles: Map<string, JsonObject> | undefined;
  if (group !== undefined) {
    const g = asObject(group);
    const gName = asObject(g.metadata).name;
    const name = asObject(obj.metadata).name;
    if (gName !== name) {
      problems.error('metadata.name', `${show(name)} must equal the RoleBasedGroup's name ${show(gName)}: RBG applies a policy only to the group of the same name`);
    }
    roles = new Map(
      asArray(asObject(g.spec).roles)
        .map(asObject)
        .filter((r) => typeof r.name === 'string')
        .map((r) => [r.name as string, r]),
    );
  }
  const policies = spec.policies;
  if (!Array.isArray(policies) || policies.length === 0) {
    problems.error('spec.policies', `must list at least one rule; got ${show(policies)}`);
  }
  checkRules(problems, 'spec.policies', flattenWireRules(asArray(policies)), roles, false, 'strategy.');
  return problems.result();
}

/**
 * Validates the model form used by the constructs (`roles` with `rollingUpdate`, and
 * `coordination` rules) for one RBG release; paths read `spec.roles[0].rollingUpdate.partition`,
 * `spec.coordination[0]…`.
 */
export function validateRoleBasedGroupModel(
  roles: readonly RoleSpec[],
  coordination: readonly CoordinationRule[],
  v1alpha1: boolean,
  executor: RbgExecutor = DEFAULT_RBG_EXECUTOR,
  rbgVersion: RbgRelease = 'v0.7',
): ValidationResult {
  const problems = new ProblemList();
  const apiVersion = v1alpha1 ? RBG_V1ALPHA1 : RBG_V1ALPHA2;
  checkRelease(problems, rbgVersion, apiVersion);
  const byName = checkRoles(problems, roles, { form: 'model', apiVersion, release: rbgVersion });
  // Only upstream's inline v1alpha1 coordination is percent-only; rayshift's executors read counts too.
  checkRules(problems, 'spec.coordination', coordination, byName, v1alpha1 && executor === 'rbg');
  if (!RBG_EXECUTORS.includes(executor)) problems.error('executor', `${show(executor)} is not an executor; allowed: ${RBG_EXECUTORS.join(', ')}`);
  // Each role's update type, for the routers' check (v1alpha2 only: rayshift leaves v1alpha1's as given).
  const roleUpdateTypes = v1alpha1 ? undefined : Object.fromEntries([...byName].map(([name, role]) => [name, asObject(role.rollingUpdate).type]));
  // A list of mappings by the type; anything else a JavaScript caller passes is reported by checkRules.
  asArray(coordination).forEach((rule, i) => {
    checkExecutorSettings(problems, `spec.coordination[${i}]`, rule, executor);
    const r = asObject(rule);
    if (r.router !== undefined) checkRouter(problems, `spec.coordination[${i}].router`, r.router, { ruleRoles: asArray(r.roles), rollingUpdate: r.rollingUpdate !== undefined, executor, ...(roleUpdateTypes ? { roleUpdateTypes } : {}) });
  });
  return problems.result();
}

/**
 * Checks a rule's rayshift-executor settings (`progressDeadlineSeconds`, `rollbackOnDeadline`,
 * `capacityPolicy`, `surgeUnschedulableSeconds`): well formed, and set only when a rayshift
 * executor runs the rollout (upstream RBG has no deadline and does not watch the scheduler).
 */
export function checkExecutorSettings(problems: ProblemList, at: string, rule: unknown, executor: RbgExecutor): void {
  const r = asObject(rule);
  const deadline = r.progressDeadlineSeconds;
  if (deadline !== undefined && (!isInteger(deadline) || deadline < 1)) {
    problems.error(`${at}.progressDeadlineSeconds`, `must be an integer ≥ 1 (seconds); got ${show(deadline)}`);
  }
  if (r.rollbackOnDeadline !== undefined && typeof r.rollbackOnDeadline !== 'boolean') {
    problems.error(`${at}.rollbackOnDeadline`, `must be true or false; got ${show(r.rollbackOnDeadline)}`);
  }
  checkOneOf(problems, `${at}.capacityPolicy`, r.capacityPolicy, RBG_CAPACITY_POLICIES, 'a capacity policy of a RoleBasedGroup rule');
  checkSurgeUnschedulableSeconds(problems, `${at}.surgeUnschedulableSeconds`, r.surgeUnschedulableSeconds);
  if (executor !== 'rbg' && r.scaling !== undefined) {
    problems.error(`${at}.scaling`, `coordinated scaling is executed only by the upstream RBG controller; use executor "rbg" or drop it (executor is ${show(executor)})`);
  }
  if (executor === 'rbg') {
    for (const field of ['progressDeadlineSeconds', 'rollbackOnDeadline'] as const) {
      if (r[field] !== undefined) problems.error(`${at}.${field}`, `is enforced only by the rayshift executors (operator, pulumi); the upstream RBG controller has no progress deadline`);
    }
    for (const field of ['capacityPolicy', 'surgeUnschedulableSeconds'] as const) {
      if (r[field] !== undefined) problems.error(`${at}.${field}`, `is enforced only by the rayshift executors (operator, pulumi); the upstream RBG controller does not watch whether the scheduler places the rollout's Pods`);
    }
  }
}

/**
 * Wire rules (v1alpha1 `spec.coordination[]`, CoordinatedPolicy `spec.policies[]`) nest their
 * settings under `strategy`; flattens each rule to the model's shape. A non-list is returned as is.
 */
function flattenWireRules(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((p) => (isObject(p) ? { ...asObject(p.strategy), name: p.name, roles: p.roles } : p));
}

function checkName(problems: ProblemList, obj: JsonObject): void {
  const name = asObject(obj.metadata).name;
  const p = typeof name === 'string' ? dns1123LabelProblem(name) : `is required; got ${show(name)}`;
  if (p) problems.error('metadata.name', p);
}
