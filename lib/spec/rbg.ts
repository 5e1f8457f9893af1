import { dns1123LabelProblem, dns1123SubdomainProblem } from './names';
import { IntOrPercent, intOrPercentProblem, parsePercent, resolvePartition } from './percent';
import { ProblemList, ValidationResult, show } from './problem';
import { PodTemplateJson } from './raycluster';
import { JsonObject, asArray, asObject, isInteger, isObject } from './read';

/** API version of the current RoleBasedGroup (RBG ≥ v0.7.0) and of CoordinatedPolicy. */
export const RBG_V1ALPHA2 = 'workloads.x-k8s.io/v1alpha2';
/** API version of the deprecated RoleBasedGroup with inline `spec.coordination` (RBG v0.6.0). */
export const RBG_V1ALPHA1 = 'workloads.x-k8s.io/v1alpha1';

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
  readonly dependencies?: readonly string[];
  /** Rolling-update settings; a role under a rolling-update coordination must leave them to the coordination. */
  readonly rollingUpdate?: RoleRollingUpdate;
  /** Pods per instance for leader/worker roles (multi-node inference). @default 1 (standalone) */
  readonly leaderWorkerSize?: number;
  /** Labels of the role's workload. */
  readonly labels?: Record<string, string>;
  /** Annotations of the role's workload. */
  readonly annotations?: Record<string, string>;
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
  readonly roles: readonly string[];
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
  /** rayshift executors only: when the deadline passes, return every coordinated role to the old revision. @default false */
  readonly rollbackOnDeadline?: boolean;
}

/**
 * Who executes a RoleBasedGroup's coordinated rolling update: `rbg` (the upstream controller, through
 * a CoordinatedPolicy or v1alpha1's inline `spec.coordination`), `operator` (the rayshift operator)
 * or `pulumi` (the Pulumi dynamic provider, during `pulumi up`).
 */
export type RbgExecutor = 'operator' | 'pulumi' | 'rbg';

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
 * `progressDeadlineSeconds` and `rollbackOnDeadline`. Kept out of `spec.coordination` and out of a
 * CoordinatedPolicy so the upstream controller never coordinates the same roles a second time.
 */
export const COORDINATION_ANNOTATION = 'rayshift.dev/coordination';

/** Batch modes of AffinityScheduling. */
export const BATCH_MODES = ['Sequential', 'Parallel'] as const;

/**
 * Validates a RoleBasedGroup manifest (v1alpha1 with inline `spec.coordination`, or v1alpha2)
 * and returns every problem at once. Never throws.
 */
export function validateRoleBasedGroup(manifest: unknown): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  checkName(problems, obj);
  const spec = asObject(obj.spec);
  const roles = checkRoles(problems, spec.roles);
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
 * `coordination` rules); paths read `spec.roles[0].rollingUpdate.partition`, `spec.coordination[0]…`.
 */
export function validateRoleBasedGroupModel(
  roles: readonly RoleSpec[],
  coordination: readonly CoordinationRule[],
  v1alpha1: boolean,
  executor: RbgExecutor = 'rbg',
): ValidationResult {
  const problems = new ProblemList();
  const byName = checkRoles(problems, roles);
  // Only upstream's inline v1alpha1 coordination is percent-only; rayshift's executors read counts too.
  checkRules(problems, 'spec.coordination', coordination, byName, v1alpha1 && executor === 'rbg');
  if (!RBG_EXECUTORS.includes(executor)) problems.error('executor', `${show(executor)} is not an executor; allowed: ${RBG_EXECUTORS.join(', ')}`);
  coordination.forEach((rule, i) => checkExecutorSettings(problems, `spec.coordination[${i}]`, rule, executor));
  return problems.result();
}

/**
 * Checks a rule's rayshift-executor settings (`progressDeadlineSeconds`, `rollbackOnDeadline`):
 * well formed, and set only when a rayshift executor runs the rollout (upstream RBG has no deadline).
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
  if (executor !== 'rbg' && r.scaling !== undefined) {
    problems.error(`${at}.scaling`, `coordinated scaling is executed only by the upstream RBG controller; use executor "rbg" or drop it (executor is ${show(executor)})`);
  }
  if (executor === 'rbg') {
    for (const field of ['progressDeadlineSeconds', 'rollbackOnDeadline'] as const) {
      if (r[field] !== undefined) problems.error(`${at}.${field}`, `is enforced only by the rayshift executors (operator, pulumi); the upstream RBG controller has no progress deadline`);
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

function checkRoles(problems: ProblemList, rolesValue: unknown): Map<string, JsonObject> {
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
    if (!isInteger(replicas) || replicas < 0) problems.error(`${here}.replicas`, `must be an integer ≥ 0; got ${show(replicas)}`);
    const ru = roleRollingUpdate(r);
    const ruAt = `${here}.${r.rolloutStrategy !== undefined ? 'rolloutStrategy.rollingUpdate' : 'rollingUpdate'}`;
    for (const field of ['maxUnavailable', 'maxSurge', 'partition'] as const) {
      if (ru[field] === undefined) continue;
      const fp = intOrPercentProblem(ru[field], true);
      if (fp) problems.error(`${ruAt}.${field}`, fp);
    }
    if (isInteger(replicas) && replicas > 0) {
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
  });
  return roles;
}

/** The role's rolling-update settings, from the model (`rollingUpdate`) or the wire (`rolloutStrategy.rollingUpdate`). */
function roleRollingUpdate(role: JsonObject): JsonObject {
  return asObject(role.rollingUpdate ?? asObject(role.rolloutStrategy).rollingUpdate);
}

/** Says what a partition does to a role of `replicas`: exceeds it, or keeps `kept` replicas on the old revision. */
function partitionEffect(partition: unknown, kept: number, replicas: number): string {
  return typeof partition === 'number' && partition > replicas
    ? `exceeds the ${replicas} replicas`
    : `keeps ${kept} of ${replicas} replicas on the old revision`;
}

function isZero(v: unknown): boolean {
  return v === 0 || parsePercent(v) === 0;
}

function checkRules(
  problems: ProblemList,
  at: string,
  rulesValue: unknown,
  roles: Map<string, JsonObject> | undefined,
  percentOnly: boolean,
  strategyPrefix = '',
): void {
  if (rulesValue !== undefined && !Array.isArray(rulesValue)) {
    problems.error(at, `must be a list of coordination rules; got ${show(rulesValue)}`);
    return;
  }
  const ruleNames = new Map<string, number>();
  const owner = new Map<string, string>();
  asArray(rulesValue).forEach((r, i) => {
    const here = `${at}[${i}]`;
    if (!isObject(r)) {
      problems.error(here, `must be a rule with name and roles; got ${show(r)}`);
      return;
    }
    const name = r.name;
    if (typeof name !== 'string' || name.length === 0) problems.error(`${here}.name`, `is required; got ${show(name)}`);
    else if (ruleNames.has(name)) problems.error(`${here}.name`, `${show(name)} is already used by ${at}[${ruleNames.get(name)}]`);
    else ruleNames.set(name, i);
    const ruleRoles = r.roles;
    if (!Array.isArray(ruleRoles) || ruleRoles.length === 0) {
      problems.error(`${here}.roles`, `must list the coordinated roles; got ${show(ruleRoles)}`);
    } else if (ruleRoles.length < 2) {
      problems.warning(`${here}.roles`, `names only ${show(ruleRoles[0])}: a rule over one role coordinates nothing and upstream ignores it`);
    }
    asArray(ruleRoles).forEach((roleName, j) => {
      const rAt = `${here}.roles[${j}]`;
      if (typeof roleName !== 'string') {
        problems.error(rAt, `must be a role name; got ${show(roleName)}`);
        return;
      }
      if (roles && !roles.has(roleName)) {
        problems.error(rAt, `${show(roleName)} is not a role of this group; roles: ${[...roles.keys()].join(', ') || 'none'}`);
      }
      const ruleKey = typeof name === 'string' ? name : show(name);
      const prev = owner.get(roleName);
      if (prev !== undefined && prev !== ruleKey) {
        problems.error(rAt, `${show(roleName)} is already coordinated by rule ${show(prev)}; a role may be in one rule only`);
      } else {
        owner.set(roleName, ruleKey);
      }
    });
    const knownRoles = asArray(ruleRoles).filter((n): n is string => typeof n === 'string' && (!roles || roles.has(n)));
    if (r.rollingUpdate === undefined && r.scaling === undefined && r.affinityScheduling === undefined) {
      problems.error(here, 'sets no strategy; give rollingUpdate, scaling or affinityScheduling');
    }
    if (r.rollingUpdate !== undefined) checkRollingUpdate(problems, `${here}.${strategyPrefix}rollingUpdate`, r.rollingUpdate, knownRoles, roles, percentOnly);
    if (r.scaling !== undefined) checkScaling(problems, `${here}.${strategyPrefix}scaling`, r.scaling);
    if (r.affinityScheduling !== undefined) {
      checkAffinity(problems, `${here}.${strategyPrefix}affinityScheduling`, r.affinityScheduling, asArray(ruleRoles), roles);
    }
  });
}

function checkRollingUpdate(
  problems: ProblemList,
  at: string,
  ruValue: unknown,
  ruleRoles: string[],
  roles: Map<string, JsonObject> | undefined,
  percentOnly: boolean,
): void {
  if (!isObject(ruValue)) {
    problems.error(at, `must be a mapping; got ${show(ruValue)}`);
    return;
  }
  const ru = ruValue;
  if (ru.maxSkew !== undefined) {
    if (typeof ru.maxSkew === 'number') {
      problems.error(
        `${at}.maxSkew`,
        `must be a percent string such as "10%"; got the integer ${ru.maxSkew} (upstream RBG fails to parse it and silently treats it as 0%)`,
      );
    } else {
      const p = intOrPercentProblem(ru.maxSkew, false);
      if (p) problems.error(`${at}.maxSkew`, p);
    }
  }
  for (const field of ['maxUnavailable', 'partition'] as const) {
    if (ru[field] === undefined) continue;
    const p = intOrPercentProblem(ru[field], !percentOnly);
    if (p) problems.error(`${at}.${field}`, percentOnly && typeof ru[field] === 'number' ? `${p} (${RBG_V1ALPHA1} accepts percents only)` : p);
  }
  if (!roles) return;
  for (const roleName of ruleRoles) {
    const role = roles.get(roleName);
    if (!role) continue;
    const own = roleRollingUpdate(role);
    const set = (['partition', 'maxUnavailable', 'maxSurge'] as const).filter((f) => own[f] !== undefined);
    if (set.length > 0) {
      problems.error(
        `${at}`,
        `role ${show(roleName)} also sets its own rolling-update ${set.join(', ')}; a coordinated role must leave them to the coordination (KEP-30)`,
      );
    }
    const replicas = role.replicas ?? 1;
    if (ru.partition !== undefined && isInteger(replicas) && replicas > 0 && !intOrPercentProblem(ru.partition, !percentOnly)) {
      const kept = resolvePartition(ru.partition as IntOrPercent, replicas);
      if (kept >= replicas) {
        problems.error(`${at}.partition`, `${show(ru.partition)} ${partitionEffect(ru.partition, kept, replicas)} of role ${show(roleName)}; must be below replicas (${replicas})`);
      }
    }
  }
}

function checkScaling(problems: ProblemList, at: string, value: unknown): void {
  const s = asObject(value);
  if (s.maxSkew !== undefined) {
    const p = intOrPercentProblem(s.maxSkew, false);
    if (p) problems.error(`${at}.maxSkew`, typeof s.maxSkew === 'number' ? `${p} (upstream RBG errors on every reconcile with an integer)` : p);
  }
  if (s.progression !== undefined && s.progression !== 'OrderScheduled' && s.progression !== 'OrderReady') {
    problems.error(`${at}.progression`, `${show(s.progression)} is not a progression; allowed: OrderScheduled, OrderReady`);
  }
}

function checkAffinity(problems: ProblemList, at: string, value: unknown, ruleRoles: unknown[], roles: Map<string, JsonObject> | undefined): void {
  if (!isObject(value)) {
    problems.error(at, `must be a mapping with ratios; got ${show(value)}`);
    return;
  }
  if (value.topologyKey !== undefined) {
    const key = value.topologyKey;
    const name = typeof key === 'string' ? key.split('/').pop() ?? '' : '';
    const prefix = typeof key === 'string' && key.includes('/') ? key.slice(0, key.lastIndexOf('/')) : undefined;
    if (typeof key !== 'string' || !/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(name) || name.length > 63 || (prefix !== undefined && dns1123SubdomainProblem(prefix))) {
      problems.error(`${at}.topologyKey`, `must be a label key such as "kubernetes.io/hostname"; got ${show(key)}`);
    }
  }
  if (value.batchMode !== undefined && !BATCH_MODES.includes(value.batchMode as (typeof BATCH_MODES)[number])) {
    problems.error(`${at}.batchMode`, `${show(value.batchMode)} is not a batch mode; allowed: ${BATCH_MODES.join(', ')}`);
  }
  const ratios = value.ratios;
  if (!isObject(ratios)) {
    problems.error(`${at}.ratios`, `must map every role of the rule to its pods per batch; got ${show(ratios)}`);
    return;
  }
  const batches = new Map<string, number>();
  for (const roleName of ruleRoles) {
    if (typeof roleName !== 'string') continue;
    const ratio = ratios[roleName];
    const rAt = `${at}.ratios.${roleName}`;
    if (!isInteger(ratio) || ratio < 1) {
      problems.error(rAt, `must be a positive integer (pods of ${show(roleName)} per batch); got ${show(ratio)}`);
      continue;
    }
    const role = roles?.get(roleName);
    if (!role) continue;
    const replicas = role.replicas ?? 1;
    if (isInteger(replicas) && replicas % ratio !== 0) {
      problems.error(rAt, `${ratio} does not divide role ${show(roleName)}'s ${replicas} replicas; every batch needs exactly ${ratio} pods`);
    } else if (isInteger(replicas)) {
      batches.set(roleName, replicas / ratio);
    }
  }
  for (const key of Object.keys(ratios)) {
    if (!ruleRoles.includes(key)) problems.error(`${at}.ratios.${key}`, `${show(key)} is not one of the rule's roles (${ruleRoles.map((r) => (typeof r === 'string' ? r : show(r))).join(', ')})`);
  }
  const counts = new Set(batches.values());
  if (counts.size > 1) {
    const detail = [...batches].map(([r, n]) => `${r}: ${n}`).join(', ');
    problems.warning(`${at}.ratios`, `roles make different numbers of batches (${detail}); only the smallest number is co-located, the rest is scheduled freely`);
  }
}
