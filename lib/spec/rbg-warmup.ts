/**
 * RoleBasedGroupWarmup (RBG v0.8.0-alpha.5, `workloads.x-k8s.io/v1alpha2`): the model of a warmup
 * (target nodes or a group's roles, image preload or a custom action, policies), its checks (the
 * CRD's minimums, int32 ranges and CEL rules, reported before anything is applied), and the
 * `warmup` option of a coordinated rollout, which warms the new images on the roles' nodes before
 * the surge. One home for the wire form, used by the construct and by rayshift's executors.
 */
import { createHash } from 'node:crypto';
import { dns1123LabelProblem, dns1123SubdomainProblem } from './names';
import { ProblemList, ValidationResult, show } from './problem';
import { INT32_MAX, JsonObject, asArray, asObject, isInteger, isObject } from './read';
import { RBG_V1ALPHA2, RbgRelease } from './rbg-releases';

/** Kind of the warmup object. */
export const RBG_WARMUP_KIND = 'RoleBasedGroupWarmup';
/** The RBG releases that ship the RoleBasedGroupWarmup CRD. */
export const WARMUP_RELEASES: readonly RbgRelease[] = ['v0.8'];

/** Pulls images onto a node ahead of time (`imagePreload`). */
export interface ImagePreload {
  /** Image references, at least one (e.g. `lmsysorg/sglang:v0.5.6`). */
  readonly images: string[];
  /** Names of Secrets in the namespace used to pull them. @default none */
  readonly pullSecrets?: string[];
}

/** User containers run on each node (`customizedAction`); the node is warm when all of them exit successfully. */
export interface CustomizedAction {
  /** Containers (Kubernetes `Container` objects), at least one. */
  readonly containers: JsonObject[];
  /** Volumes they mount. @default none */
  readonly volumes?: JsonObject[];
}

/** What a warmup does on a node; at least one of the two. */
export interface WarmupActions {
  /** Preload images. @default none */
  readonly imagePreload?: ImagePreload;
  /** Run custom containers. @default none */
  readonly customizedAction?: CustomizedAction;
}

/** How a warmup runs (`spec.policies`). */
export interface WarmupPolicies {
  /** Nodes warmed at once, ≥ 1. @default every node at once */
  readonly parallelism?: number;
  /** Retries per node before it counts as permanently failed, ≥ 0. @default retried indefinitely */
  readonly backoffLimitPerNode?: number;
  /** Permanently failed nodes tolerated before the warmup fails, ≥ 0; needs backoffLimitPerNode. @default any number (none fails the warmup) */
  readonly maxFailedNodes?: number;
  /** Seconds from the first warmup Pod to failure, ≥ 1. @default no timeout */
  readonly globalTimeoutSeconds?: number;
  /** Seconds after finishing before RBG deletes the warmup, ≥ 0. @default never deleted */
  readonly ttlSecondsAfterFinished?: number;
}

/** What a coordinated rollout does when its warmup fails (per its limits). */
export type WarmupFailureAction = 'Fail' | 'Proceed';
/** Every `onFailure` value. */
export const WARMUP_FAILURE_ACTIONS = ['Fail', 'Proceed'] as const;

/**
 * The `warmup` option of a coordinated rollout (RBG v0.8): before the first round of a new
 * revision, preload the new templates' images on the nodes the roles' Pods run on, and start the
 * rollout when the warmup completes. Gated by rayshift's executors (`operator`, `pulumi`) only:
 * RBG v0.8's own controller does not wait for a warmup (KEP-129 names that a non-goal).
 */
export interface RolloutWarmup {
  /** Roles whose nodes are warmed (each must be coordinated by a rolling-update rule). @default every role of the rolling-update rules */
  readonly roles?: string[];
  /** Secrets to pull the images with. @default none */
  readonly pullSecrets?: string[];
  /** Nodes warmed at once. @default every node at once */
  readonly parallelism?: number;
  /** Retries per node before it counts as failed. @default 2 */
  readonly backoffLimitPerNode?: number;
  /** Failed nodes tolerated before the warmup fails. @default 0 */
  readonly maxFailedNodes?: number;
  /** Seconds the warmup may take before it counts as failed. @default 900 */
  readonly globalTimeoutSeconds?: number;
  /**
   * When the warmup fails: `Fail` stops the rollout before any partition moves (every replica stays
   * on the old revision; a new template starts a new warmup), `Proceed` starts the rollout on cold
   * nodes. @default "Fail"
   */
  readonly onFailure?: WarmupFailureAction;
  /** Tolerations of the warmup Pods (e.g. GPU node taints). @default none */
  readonly tolerations?: JsonObject[];
}

/** The defaults of `RolloutWarmup`: bounded, so that a rollout never waits forever on a warmup. */
export const ROLLOUT_WARMUP_DEFAULTS = { backoffLimitPerNode: 2, maxFailedNodes: 0, globalTimeoutSeconds: 900, onFailure: 'Fail' as WarmupFailureAction };

/** A `RolloutWarmup` with its defaults applied and its roles resolved. */
export interface ResolvedRolloutWarmup {
  /** Roles whose nodes are warmed. */
  readonly roles: string[];
  /** Secrets to pull the images with. */
  readonly pullSecrets: string[];
  /** Nodes warmed at once; every node at once when absent. */
  readonly parallelism?: number;
  /** Retries per node before it counts as failed. */
  readonly backoffLimitPerNode: number;
  /** Failed nodes tolerated before the warmup fails. */
  readonly maxFailedNodes: number;
  /** Seconds the warmup may take before it counts as failed. */
  readonly globalTimeoutSeconds: number;
  /** When the warmup fails. */
  readonly onFailure: WarmupFailureAction;
  /** Tolerations of the warmup Pods. */
  readonly tolerations: JsonObject[];
}

/** Applies the defaults; `coordinated` are the roles of the rolling-update rules (the default roles). */
export function resolveRolloutWarmup(w: RolloutWarmup, coordinated: readonly string[]): ResolvedRolloutWarmup {
  return {
    roles: w.roles ?? [...coordinated],
    pullSecrets: w.pullSecrets ?? [],
    backoffLimitPerNode: w.backoffLimitPerNode ?? ROLLOUT_WARMUP_DEFAULTS.backoffLimitPerNode,
    maxFailedNodes: w.maxFailedNodes ?? ROLLOUT_WARMUP_DEFAULTS.maxFailedNodes,
    globalTimeoutSeconds: w.globalTimeoutSeconds ?? ROLLOUT_WARMUP_DEFAULTS.globalTimeoutSeconds,
    onFailure: w.onFailure ?? ROLLOUT_WARMUP_DEFAULTS.onFailure,
    tolerations: w.tolerations ?? [],
    ...(w.parallelism !== undefined ? { parallelism: w.parallelism } : {}),
  };
}

/**
 * The wire `WarmupActions` of the model's. Never throws: what a JavaScript caller passes
 * that is not a mapping or a list where the type has one is written as given, and
 * `checkWarmupActions` names it.
 */
export function wireWarmupActions(a: WarmupActions): JsonObject {
  const { imagePreload: preload, customizedAction: custom } = asObject(a) as WarmupActions;
  const copy = (list: unknown) => (Array.isArray(list) ? [...list] : list);
  const secrets = (names: unknown) => (Array.isArray(names) ? (names.length > 0 ? { pullSecrets: names.map((name) => ({ name })) } : {}) : names !== undefined ? { pullSecrets: names } : {});
  return {
    ...(preload ? { imagePreload: isObject(preload) ? { images: copy(preload.images), ...secrets(preload.pullSecrets) } : preload } : {}),
    ...(custom
      ? { customizedAction: isObject(custom) ? { containers: copy(custom.containers), ...(custom.volumes ? { volumes: copy(custom.volumes) } : {}) } : custom }
      : {}),
  };
}

/**
 * Images of a role's Pods, in order and once each: the containers and init containers of its
 * template — `template` (v1alpha1 and the model), `standalonePattern.template` or
 * `leaderWorkerPattern.template` (v1alpha2).
 */
export function roleImages(role: JsonObject): string[] {
  const templates = [role.template, asObject(role.standalonePattern).template, asObject(role.leaderWorkerPattern).template];
  const images: string[] = [];
  for (const t of templates) {
    const spec = asObject(asObject(t).spec);
    for (const c of [...asArray(spec.initContainers), ...asArray(spec.containers)]) {
      const image = asObject(c).image;
      if (typeof image === 'string' && image !== '' && !images.includes(image)) images.push(image);
    }
  }
  return images;
}

/**
 * The wire spec of the warmup a rollout runs: the group's `roles` (name → images of the new
 * template), each preloaded on the nodes its Pods run on, with the option's policies.
 */
export function rolloutWarmupSpec(group: string, images: ReadonlyMap<string, readonly string[]>, w: ResolvedRolloutWarmup): JsonObject {
  const roles = Object.fromEntries([...images].map(([role, list]) => [role, wireWarmupActions({ imagePreload: { images: [...list], pullSecrets: w.pullSecrets } })]));
  return {
    targetRoleBasedGroup: { name: group, roles },
    policies: {
      ...(w.parallelism !== undefined ? { parallelism: w.parallelism } : {}),
      backoffLimitPerNode: w.backoffLimitPerNode,
      maxFailedNodes: w.maxFailedNodes,
      globalTimeoutSeconds: w.globalTimeoutSeconds,
    },
    ...(w.tolerations.length > 0 ? { tolerations: [...w.tolerations] } : {}),
  };
}

/** A short stable hash of a JSON value (warmup names per revision). */
export function warmupHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 8);
}

/** Reports a release without the Warmup CRD at `at` (the option or the object's `rbgVersion`). */
export function checkWarmupRelease(problems: ProblemList, at: string, release: unknown): void {
  if (WARMUP_RELEASES.includes(release as RbgRelease)) return;
  problems.error(at, `rbgVersion ${show(release)} has no ${RBG_WARMUP_KIND} CRD (it first shipped in RBG v0.8.0-alpha.5); allowed: rbgVersion ${WARMUP_RELEASES.map((r) => `"${r}"`).join(', ')}`);
}

function checkInt(problems: ProblemList, at: string, v: unknown, min: number, max: number, what: string): boolean {
  if (v === undefined) return false;
  if (!isInteger(v) || v < min || v > max) {
    problems.error(at, `must be an integer from ${min} to ${max} (${what}); got ${show(v)}`);
    return false;
  }
  return true;
}

/** The CRD's rules on `spec.policies` (minimums, int32/int64, and its CEL rule: maxFailedNodes needs backoffLimitPerNode). */
export function checkWarmupPolicies(problems: ProblemList, at: string, value: unknown): void {
  if (value === undefined) return;
  if (!isObject(value)) {
    problems.error(at, `must be a mapping; got ${show(value)}`);
    return;
  }
  checkInt(problems, `${at}.parallelism`, value.parallelism, 1, INT32_MAX, 'nodes warmed at once');
  checkInt(problems, `${at}.backoffLimitPerNode`, value.backoffLimitPerNode, 0, INT32_MAX, 'retries per node');
  checkInt(problems, `${at}.maxFailedNodes`, value.maxFailedNodes, 0, INT32_MAX, 'failed nodes tolerated');
  checkInt(problems, `${at}.globalTimeoutSeconds`, value.globalTimeoutSeconds, 1, Number.MAX_SAFE_INTEGER, 'seconds');
  checkInt(problems, `${at}.ttlSecondsAfterFinished`, value.ttlSecondsAfterFinished, 0, INT32_MAX, 'seconds');
  if (value.maxFailedNodes !== undefined && value.backoffLimitPerNode === undefined) {
    problems.error(`${at}.maxFailedNodes`, 'needs backoffLimitPerNode (without it a node is retried forever and never counts as failed; the API server rejects it); set backoffLimitPerNode ≥ 0');
  }
}

/** The CRD's rules on wire `WarmupActions` at `at`: at least one action, images non-empty, containers named. */
export function checkWarmupActions(problems: ProblemList, at: string, value: unknown): void {
  if (!isObject(value)) {
    problems.error(at, `must be a mapping with imagePreload or customizedAction; got ${show(value)}`);
    return;
  }
  if (value.imagePreload === undefined && value.customizedAction === undefined) problems.error(at, 'sets no action; give imagePreload, customizedAction or both');
  if (value.imagePreload !== undefined) {
    const images = asObject(value.imagePreload).images;
    if (!Array.isArray(images) || images.length === 0) problems.error(`${at}.imagePreload.images`, `must list at least one image; got ${show(images)}`);
    asArray(images).forEach((img, i) => {
      if (typeof img !== 'string' || img === '' || /\s/.test(img)) problems.error(`${at}.imagePreload.images[${i}]`, `must be an image reference such as "registry.example.com/app:v1"; got ${show(img)}`);
    });
    const secrets = asObject(value.imagePreload).pullSecrets;
    if (secrets !== undefined && !Array.isArray(secrets)) problems.error(`${at}.imagePreload.pullSecrets`, `must be a list of Secret names; got ${show(secrets)}`);
    asArray(secrets).forEach((s, i) => {
      const name = asObject(s).name;
      if (typeof name !== 'string' || dns1123SubdomainProblem(name)) problems.error(`${at}.imagePreload.pullSecrets[${i}].name`, `must name a Secret; got ${show(name)}`);
    });
  }
  if (value.customizedAction !== undefined) {
    const containers = asObject(value.customizedAction).containers;
    if (!Array.isArray(containers) || containers.length === 0) problems.error(`${at}.customizedAction.containers`, `must list at least one container; got ${show(containers)}`);
    asArray(containers).forEach((c, i) => {
      const o = asObject(c);
      if (typeof o.name !== 'string' || dns1123LabelProblem(o.name)) problems.error(`${at}.customizedAction.containers[${i}].name`, `must be a DNS label; got ${show(o.name)}`);
      if (typeof o.image !== 'string' || o.image === '') problems.error(`${at}.customizedAction.containers[${i}].image`, `is required; got ${show(o.image)}`);
    });
  }
}

/** Options of `validateRoleBasedGroupWarmup`. */
export interface WarmupCheckOptions {
  /** The RBG release: anything but v0.8 has no Warmup CRD. @default not checked */
  readonly rbgVersion?: RbgRelease;
  /** The target group's manifest, to check the role names against. @default not checked */
  readonly group?: unknown;
}

/** Validates a RoleBasedGroupWarmup manifest (schema minimums and CEL rules) and returns every problem at once. Never throws. */
export function validateRoleBasedGroupWarmup(manifest: unknown, options: WarmupCheckOptions = {}): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  const name = asObject(obj.metadata).name;
  const p = typeof name === 'string' ? dns1123SubdomainProblem(name) : `is required; got ${show(name)}`;
  if (p) problems.error('metadata.name', p);
  if (obj.apiVersion !== RBG_V1ALPHA2) problems.error('apiVersion', `${show(obj.apiVersion)}: ${RBG_WARMUP_KIND} exists only in ${RBG_V1ALPHA2}`);
  if (options.rbgVersion !== undefined) checkWarmupRelease(problems, 'rbgVersion', options.rbgVersion);
  const spec = asObject(obj.spec);
  const nodes = spec.targetNodes;
  const group = spec.targetRoleBasedGroup;
  if ((nodes === undefined) === (group === undefined)) {
    problems.error('spec', `${nodes === undefined ? 'sets neither' : 'sets both'} targetNodes and targetRoleBasedGroup; give exactly one (RBG's CEL rule)`);
  }
  if (nodes !== undefined) {
    const n = asObject(nodes);
    if ((n.nodeNames === undefined) === (n.nodeSelector === undefined)) {
      problems.error('spec.targetNodes', `${n.nodeNames === undefined ? 'sets neither' : 'sets both'} nodeNames and nodeSelector; give exactly one (RBG's CEL rule)`);
    }
    asArray(n.nodeNames).forEach((node, i) => {
      if (typeof node !== 'string' || dns1123SubdomainProblem(node)) problems.error(`spec.targetNodes.nodeNames[${i}]`, `must be a node name; got ${show(node)}`);
    });
    if (n.nodeSelector !== undefined && !isObject(n.nodeSelector)) problems.error('spec.targetNodes.nodeSelector', `must map label keys to values; got ${show(n.nodeSelector)}`);
    checkWarmupActions(problems, 'spec.targetNodes', { imagePreload: n.imagePreload, customizedAction: n.customizedAction });
  }
  if (group !== undefined) checkTargetGroup(problems, asObject(group), options.group);
  checkWarmupPolicies(problems, 'spec.policies', spec.policies);
  return problems.result();
}

function checkTargetGroup(problems: ProblemList, g: JsonObject, groupManifest: unknown): void {
  const at = 'spec.targetRoleBasedGroup';
  const gp = typeof g.name === 'string' ? dns1123LabelProblem(g.name) : `is required; got ${show(g.name)}`;
  if (gp) problems.error(`${at}.name`, gp);
  if (!isObject(g.roles) || Object.keys(g.roles).length === 0) {
    problems.error(`${at}.roles`, `must map at least one role to its actions; got ${show(g.roles)}`);
    return;
  }
  const manifest = asObject(groupManifest);
  const known = groupManifest === undefined ? undefined : asArray(asObject(manifest.spec).roles).map((r) => String(asObject(r).name));
  if (groupManifest !== undefined && asObject(manifest.metadata).name !== g.name) {
    problems.error(`${at}.name`, `${show(g.name)} is not the group ${show(asObject(manifest.metadata).name)}`);
  }
  for (const [role, actions] of Object.entries(g.roles)) {
    if (known && !known.includes(role)) problems.error(`${at}.roles.${role}`, `${show(role)} is not a role of the group; roles: ${known.join(', ') || 'none'}`);
    checkWarmupActions(problems, `${at}.roles.${role}`, actions);
  }
}

/** What a rollout's warmup option is checked against. */
export interface RolloutWarmupContext {
  /** The group's RBG release. */
  readonly rbgVersion: RbgRelease;
  /** Roles of the group's rolling-update rules. */
  readonly coordinated: string[];
}

/** Checks the `warmup` option of a coordinated rollout at `at`. */
export function checkRolloutWarmup(problems: ProblemList, at: string, value: unknown, context: RolloutWarmupContext): void {
  checkWarmupRelease(problems, at, context.rbgVersion);
  if (!isObject(value)) {
    problems.error(at, `must be a mapping; got ${show(value)}`);
    return;
  }
  if (context.coordinated.length === 0) problems.error(at, 'warms the nodes before a coordinated rolling update, but no rule has rollingUpdate; add one or drop warmup');
  if (value.roles !== undefined) {
    if (!Array.isArray(value.roles) || value.roles.length === 0) problems.error(`${at}.roles`, `must list at least one role; got ${show(value.roles)}`);
    asArray(value.roles).forEach((r, i) => {
      if (typeof r !== 'string' || !context.coordinated.includes(r)) {
        problems.error(`${at}.roles[${i}]`, `${show(r)} is not a role of a rolling-update rule; allowed: ${context.coordinated.join(', ') || 'none'}`);
      }
    });
  }
  asArray(value.pullSecrets).forEach((s, i) => {
    if (typeof s !== 'string' || dns1123SubdomainProblem(s)) problems.error(`${at}.pullSecrets[${i}]`, `must name a Secret; got ${show(s)}`);
  });
  checkInt(problems, `${at}.parallelism`, value.parallelism, 1, INT32_MAX, 'nodes warmed at once');
  checkInt(problems, `${at}.backoffLimitPerNode`, value.backoffLimitPerNode, 0, INT32_MAX, 'retries per node');
  checkInt(problems, `${at}.maxFailedNodes`, value.maxFailedNodes, 0, INT32_MAX, 'failed nodes tolerated');
  checkInt(problems, `${at}.globalTimeoutSeconds`, value.globalTimeoutSeconds, 1, Number.MAX_SAFE_INTEGER, 'seconds');
  if (value.onFailure !== undefined && !WARMUP_FAILURE_ACTIONS.includes(value.onFailure as WarmupFailureAction)) {
    problems.error(`${at}.onFailure`, `${show(value.onFailure)} is not a failure action; allowed: ${WARMUP_FAILURE_ACTIONS.join(', ')}`);
  }
  if (value.tolerations !== undefined && !Array.isArray(value.tolerations)) problems.error(`${at}.tolerations`, `must be a list of tolerations; got ${show(value.tolerations)}`);
}
