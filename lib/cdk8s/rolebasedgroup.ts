import { ApiObjectMetadata } from 'cdk8s';
import { Construct } from 'constructs';
import { dns1123LabelProblem } from '../spec/names';
import { RBG_V1ALPHA1_TYPE, RBG_V1ALPHA2_TYPE } from '../spec/object-names';
import { ProblemList, ValidationResult, checkOneOf, show } from '../spec/problem';
import {
  COORDINATION_ANNOTATION,
  CoordinationRule,
  DEFAULT_RBG_EXECUTOR,
  EXECUTOR_LABEL,
  ROLE_BASED_GROUP_VERSIONS,
  RbgExecutor,
  RbgRelease,
  RoleBasedGroupVersion,
  RoleSpec,
  validateRoleBasedGroupModel,
} from '../spec/rbg';
import { JsonObject, asArray, asObject, isObject } from '../spec/read';
import type { UpgradeAnalysis } from '../spec/analysis';
import { checkRolloutAnalysis } from '../spec/rbg-analysis';
import { ResolvedRolloutWarmup, RolloutWarmup, checkRolloutWarmup, resolveRolloutWarmup, roleImages, warmupHash } from '../spec/rbg-warmup';
import { CoordinatedPolicy, toWireStrategy } from './coordinated-policy';
import { RoleBasedGroupWarmup } from './rolebasedgroup-warmup';
import { RoleBasedGroupRouters, releaseOf, routedRules, withRouterMarks } from './rbg-router';
import { ResolvedRouterOptions, resolveRouter, routerNameProblem } from '../spec/rbg-router';
import { roleV1Alpha1, roleV1Alpha2 } from './rbg-wire-roles';
import { affinityBatches } from '../engine/affinity-batches';
import { BATCH_LABEL_PREFIX, ROLE_LABEL, RenderedGroup, renderAffinityBatches } from './affinity-batches';
import { givenProps } from './given-props';
import { ValidatedObject } from './validated-object';
import { canonicalJson } from '../spec/canonical-json';
import type { PinnedSchemaOptions } from '../spec/pinned-schemas';

/** The rules a rayshift executor enforces, as the `rayshift.dev/coordination` annotation carries them. */
export interface ExecutorCoordination {
  /** The rolling-update rules in CoordinatedPolicy `spec` form, with rayshift's deadline and scheduler-watch fields and batch `waves`. */
  readonly policies: Record<string, unknown>[];
  /** The warmup before a revision's first round, defaults applied. @default no warmup */
  readonly warmup?: ResolvedRolloutWarmup;
  /** The metric gate of every round after the first and of the completion, as given. @default no analysis */
  readonly analysis?: UpgradeAnalysis;
}

/** Props of a `RoleBasedGroup`. */
export interface RoleBasedGroupProps {
  /** Object metadata. @default a generated name */
  readonly metadata?: ApiObjectMetadata;
  /** API version to synthesize: `v1alpha1` or `v1alpha2` (checked at synthesis). @default "v1alpha2" */
  readonly version?: RoleBasedGroupVersion;
  /**
   * The RBG release the group is for. `v0.8` (checked against v0.8.0-alpha.5) adds its webhook's
   * rules, allows `restartPolicyConfig`, makes RoleInstanceSet the default workload in v1alpha1 too
   * and warns about what it deprecates (v1alpha1; StatefulSet, Deployment and LeaderWorkerSet workloads).
   * @default "v0.7"
   */
  readonly rbgVersion?: RbgRelease;
  /** The roles, e.g. router, prefill and decode. */
  readonly roles: RoleSpec[];
  /** Coordination rules (rolling update, scaling, AffinityScheduling). @default none */
  readonly coordination?: CoordinationRule[];
  /**
   * Who executes the coordinated rolling update. `rbg`: the upstream controller, through a
   * CoordinatedPolicy (v1alpha2) or inline `spec.coordination` (v1alpha1). `operator` / `pulumi`:
   * rayshift moves each coordinated role's partition round by round; the group then carries the
   * label `rayshift.dev/coordination-executor` and its rules in the annotation
   * `rayshift.dev/coordination`, and no upstream coordination is synthesized. @default "rbg"
   */
  readonly executor?: RbgExecutor;
  /**
   * RBG v0.8: warm the new images on the roles' nodes before each coordinated rollout. With
   * executor `operator` or `pulumi`, the executor creates a RoleBasedGroupWarmup for each new
   * revision and moves no partition until it completes (or fails: see `onFailure`). With executor
   * `rbg` a RoleBasedGroupWarmup child is synthesized (named after the images), but RBG v0.8 does
   * not wait for it: the warmup runs alongside the rollout (a warning says so). @default no warmup
   */
  readonly warmup?: RolloutWarmup;
  /**
   * Executors `operator` and `pulumi`: gate every coordinated round after the first, and the
   * completion, on Prometheus metrics of the new revision at its share of the replicas
   * (docs/analysis.md, "RoleBasedGroups"); a failed analysis rolls back (every partition to
   * replicas), aborts (every role stopped where it stands) or pauses. Queries only (no templates);
   * `{{service}}` is the group's name, `{{cluster}}` the new revision. @default no analysis
   */
  readonly analysis?: UpgradeAnalysis;
}

/**
 * A RoleBasedGroup of disaggregated inference roles with coordinated rollouts.
 *
 * With executor `rbg` (the default), in v1alpha2 the rolling-update and scaling rules go to a
 * `CoordinatedPolicy` child that is always named after the group (upstream binds by name only); in
 * v1alpha1 they are inline. With executor `operator` or `pulumi` they go to the group's
 * `rayshift.dev/coordination` annotation instead (see `executorCoordination`).
 * AffinityScheduling rules are rendered into per-batch roles with pod affinity (see
 * `renderAffinityBatches`), because no RBG release implements them.
 */
export class RoleBasedGroup extends ValidatedObject {
  /** The API version synthesized. */
  public readonly version: RoleBasedGroupVersion;
  readonly #roles: RoleSpec[];
  readonly #coordination: CoordinationRule[];
  /** The CoordinatedPolicy child (v1alpha2 with rolling-update or scaling rules, executor `rbg`). */
  public readonly policy?: CoordinatedPolicy;
  /** Who executes the coordinated rolling update. */
  public readonly executor: RbgExecutor;
  /** The RBG release the group is for. */
  public readonly rbgVersion: RbgRelease;
  /** The rollout's warmup option, as given. */
  public readonly warmup?: RolloutWarmup;
  /** The RoleBasedGroupWarmup child (executor `rbg` with `warmup`). */
  public readonly warmupObject?: RoleBasedGroupWarmup;
  /** The rollout's analysis option, as given. */
  public readonly analysis?: UpgradeAnalysis;
  /** The version-matched routers of each rule with a `router`, keyed by rule name. */
  public readonly routers: Readonly<Record<string, RoleBasedGroupRouters>>;

  constructor(scope: Construct, id: string, props: RoleBasedGroupProps) {
    props = givenProps(props);
    const version = props.version ?? 'v1alpha2';
    const coordination = props.coordination ?? [];
    const executor = props.executor ?? DEFAULT_RBG_EXECUTOR;
    const rbgVersion = props.rbgVersion ?? 'v0.7';
    const gvk = version === 'v1alpha1' ? RBG_V1ALPHA1_TYPE : RBG_V1ALPHA2_TYPE;
    super(scope, id, {
      ...gvk,
      metadata: props.metadata,
    });
    this.version = version;
    this.#roles = props.roles;
    this.#coordination = coordination;
    this.executor = executor;
    this.rbgVersion = rbgVersion;
    this.warmup = props.warmup;
    this.analysis = props.analysis;
    if (isObject(props.warmup) && executor === 'rbg') {
      const w = this.resolvedWarmup()!;
      const roles = Object.fromEntries(this.warmedRoles(w).map((r) => [r.name, { imagePreload: { images: roleImages(r as unknown as JsonObject), ...(asArray(w.pullSecrets).length > 0 ? { pullSecrets: w.pullSecrets } : {}) } }]));
      const policies = { ...(w.parallelism !== undefined ? { parallelism: w.parallelism } : {}), backoffLimitPerNode: w.backoffLimitPerNode, maxFailedNodes: w.maxFailedNodes, globalTimeoutSeconds: w.globalTimeoutSeconds };
      // Named after what it preloads: a new image is a new one-shot warmup, the old one is pruned.
      this.warmupObject = new RoleBasedGroupWarmup(this, 'Warmup', {
        metadata: { name: `${this.name}-warmup-${warmupHash([roles, policies])}` },
        group: { group: this, roles },
        policies,
        ...(asArray(w.tolerations).length > 0 ? { tolerations: w.tolerations } : {}),
      });
    }
    if (executor !== 'rbg') {
      this.apiObject.metadata.addLabel(EXECUTOR_LABEL, executor);
      // Sorted keys: the same rules give the same text whatever order their props were written in.
      this.apiObject.metadata.addAnnotation(COORDINATION_ANNOTATION, canonicalJson(this.executorCoordination()));
    } else if (version === 'v1alpha2' && renderable(props.roles, coordination).rules.some((r) => r.rollingUpdate !== undefined || r.scaling !== undefined)) {
      this.policy = new CoordinatedPolicy(this, 'CoordinatedPolicy', { group: this });
    }
    const routers: Record<string, RoleBasedGroupRouters> = {};
    for (const rule of routedRules(renderable(props.roles, coordination).rules, executor)) {
      routers[rule.name] = new RoleBasedGroupRouters(this, `Router-${rule.name}`, {
        group: this.name,
        namespace: props.metadata?.namespace,
        rule: rule.name,
        router: rule.router,
        revision: releaseOf(props.roles, resolveRouter(rule.router)),
        v1alpha1: version === 'v1alpha1',
      });
    }
    this.routers = routers;
  }

  /**
   * The release of rule `rule`'s prefill and decode templates (`rayshift.dev/router-revision` on
   * their pods), or undefined when the rule has no router. Give it as the router's
   * `previousRevision` when the templates change, for the old release's router to stay.
   */
  public routerRevision(rule: string): string | undefined {
    const r = renderable(this.#roles, this.#coordination).rules.find((c) => c.name === rule);
    if (!r || !isObject(r.router)) return undefined;
    return releaseOf(this.#roles, resolveRouter(r.router));
  }

  /** The roles as given, before AffinityScheduling batches are rendered (a copy). */
  public get roles(): RoleSpec[] {
    return [...asArray(this.#roles)] as RoleSpec[];
  }

  /** The coordination rules as given (a copy). */
  public get coordination(): CoordinationRule[] {
    return [...asArray(this.#coordination)] as CoordinationRule[];
  }

  /**
   * The rules a rayshift executor enforces (the `rayshift.dev/coordination` annotation): the
   * rendered rolling-update rules in CoordinatedPolicy `spec` form, each with its
   * `progressDeadlineSeconds`, `rollbackOnDeadline`, `capacityPolicy` and
   * `surgeUnschedulableSeconds` when set, and — when it rolls
   * AffinityScheduling batch roles — `waves`: the role names released together, in order; and
   * the rollout's warmup and analysis.
   */
  public executorCoordination(): ExecutorCoordination {
    const { roles, rules } = this.rendered();
    const waveOf = this.batchWaves(roles);
    const policies = rules
      .filter((r) => r.rollingUpdate !== undefined)
      .map((r) => {
        const given = renderable(this.#roles, this.#coordination).rules.find((c) => c.name === r.name);
        const batched = r.roles.some((n) => waveOf.has(n));
        const waves: string[][] = [];
        for (const n of r.roles) (waves[waveOf.get(n) ?? 0] ??= []).push(n);
        return {
          name: r.name,
          roles: r.roles,
          strategy: toWireStrategy(r),
          ...(given?.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: given.progressDeadlineSeconds } : {}),
          ...(given?.rollbackOnDeadline !== undefined ? { rollbackOnDeadline: given.rollbackOnDeadline } : {}),
          ...(given?.capacityPolicy !== undefined ? { capacityPolicy: given.capacityPolicy } : {}),
          ...(given?.surgeUnschedulableSeconds !== undefined ? { surgeUnschedulableSeconds: given.surgeUnschedulableSeconds } : {}),
          ...(batched ? { waves: waves.filter((w) => w !== undefined) } : {}),
          ...(given?.router !== undefined ? { router: given.router } : {}),
        };
      });
    const w = this.resolvedWarmup();
    return { policies, ...(w ? { warmup: { ...w, roles: this.warmedRoles(w).map((r) => r.name) } } : {}), ...(this.analysis ? { analysis: this.analysis } : {}) };
  }

  /** The warmup option with its defaults (roles: every role of the rolling-update rules, as given). */
  private resolvedWarmup(): ResolvedRolloutWarmup | undefined {
    // Anything but a mapping is reported by validation (`warmup: must be a mapping`) and warms nothing.
    return isObject(this.warmup) ? resolveRolloutWarmup(this.warmup, coordinatedRoles(this.#coordination)) : undefined;
  }

  /** The rendered roles a warmup covers: each named role, or the AffinityScheduling batch roles rendered from it. */
  private warmedRoles(w: ResolvedRolloutWarmup): RoleSpec[] {
    const names = asArray(w.roles);
    return this.rendered().roles.filter((r) => names.includes(r.name) || names.includes(templateLabels(r)[ROLE_LABEL] ?? ''));
  }

  /**
   * The release wave of every rendered AffinityScheduling batch role, from the engine's batch plan:
   * batch k's roles (`affinity.rayshift.dev/<rule>: b<k>`) go in the plan's wave of batch k; the
   * unbatched rest after every batch in Sequential mode, with the batches in Parallel mode.
   */
  private batchWaves(rendered: readonly RoleSpec[]): Map<string, number> {
    const waves = new Map<string, number>();
    const given = renderable(this.#roles, this.#coordination);
    for (const rule of given.rules) {
      const affinity = rule.affinityScheduling;
      if (!affinity) continue;
      const mode = affinity.batchMode ?? 'Sequential';
      const members = rule.roles.map((n) => given.roles.find((r) => r.name === n)).filter((r): r is RoleSpec => r !== undefined);
      const ratios = members.map((r) => ({ name: r.name, replicas: r.replicas ?? 1, ratio: affinity.ratios[r.name] ?? 1 }));
      // Bad ratios or replicas are reported by validation at synthesis; they have no waves.
      if (ratios.some((r) => !Number.isInteger(r.ratio) || r.ratio <= 0 || !Number.isInteger(r.replicas) || r.replicas < 0)) continue;
      const plan = affinityBatches(ratios, mode);
      for (const role of rendered) {
        const labels = templateLabels(role);
        if (!rule.roles.includes(labels[ROLE_LABEL] ?? '')) continue;
        const batch = labels[`${BATCH_LABEL_PREFIX}${rule.name}`];
        waves.set(role.name, batch !== undefined ? plan.batches[Number(batch.slice(1))].wave : mode === 'Sequential' ? plan.waves : 0);
      }
    }
    return waves;
  }

  /** Roles and rules as synthesized, with AffinityScheduling rendered into batch roles. */
  public rendered(): RenderedGroup {
    const { roles, rules } = renderable(this.#roles, this.#coordination);
    const routed = this.routedRouters().map((router) => ({ router, revision: releaseOf(this.#roles, router) }));
    return renderAffinityBatches(this.name, withRouterMarks(roles, routed), rules);
  }

  /** The routers (defaults applied) of the rules that render one. */
  private routedRouters(): ResolvedRouterOptions[] {
    return routedRules(renderable(this.#roles, this.#coordination).rules, this.executor).map((r) => resolveRouter(r.router));
  }

  /** @jsii ignore */
  protected schemaOptions(): PinnedSchemaOptions {
    return { rbgVersion: this.rbgVersion };
  }

  protected validateManifest(manifest: unknown): ValidationResult {
    const problems = new ProblemList();
    // An unknown version synthesizes v1alpha2's kind; this says so before anything is applied.
    checkOneOf(problems, 'version', this.version, ROLE_BASED_GROUP_VERSIONS, 'a RoleBasedGroup version');
    problems.addAll(validateGroup(manifest, this.#roles, this.#coordination, this.version === 'v1alpha1', this.executor, this.rbgVersion, this.warmup, this.analysis));
    return problems.result();
  }

  protected renderSpec(): any {
    const { roles, rules } = this.rendered();
    // A routed rule's router discovers its release's Pods by label, and sglang-router (0.3.2) drops a
    // Pod only when it is deleted: a Pod updated in place to the next release (RBG v1alpha2's default)
    // would stay in the old release's router, which would then pair it with old Pods. So those roles'
    // Pods are replaced (RecreatePod, in a Stateless RoleInstanceSet for RBG v0.7.0): the old router
    // drops each at its deletion, the new one finds its successor (cluster-rbg-router-discovery).
    // A rollback returns such instances by revision, not ordinal (lib/engine/rbg-unordered-return.ts).
    // v1alpha1 roles are left as they are: on StatefulSets (RBG v0.6/v0.7's default) Pods are
    // replaced anyway; v1alpha1 on RoleInstanceSets (v0.8) is not covered here.
    const recreated = new Set(this.routedRouters().flatMap((r) => [r.prefill, r.decode]));
    const wireRoles = roles.map((r) => (this.version === 'v1alpha1' ? roleV1Alpha1(r, this.rbgVersion) : roleV1Alpha2(r, recreated.has(r.name))));
    if (this.version === 'v1alpha1' && this.executor === 'rbg' && rules.length > 0) {
      return { roles: wireRoles, coordination: rules.map((r) => ({ name: r.name, roles: r.roles, strategy: toWireStrategy(r) })) };
    }
    return { roles: wireRoles };
  }
}

/** The model's checks of roles and rules, plus the group name (a DNS label, as RBG's webhook requires). */
function validateGroup(
  manifest: unknown,
  roles: readonly RoleSpec[],
  rules: readonly CoordinationRule[],
  v1alpha1: boolean,
  executor: RbgExecutor,
  rbgVersion: RbgRelease,
  warmup: RolloutWarmup | undefined,
  analysis: UpgradeAnalysis | undefined,
): ValidationResult {
  const problems = new ProblemList();
  const name = asObject(asObject(manifest).metadata).name;
  const p = typeof name === 'string' ? dns1123LabelProblem(name) : `is required; got ${show(name)}`;
  if (p) problems.error('metadata.name', p);
  problems.addAll(validateRoleBasedGroupModel(roles, rules, v1alpha1, executor, rbgVersion));
  if (warmup !== undefined) {
    checkRolloutWarmup(problems, 'warmup', warmup, { rbgVersion, coordinated: coordinatedRoles(rules) });
    if (executor === 'rbg') {
      problems.warning('warmup', 'RBG v0.8 does not wait for a RoleBasedGroupWarmup before rolling (KEP-129 leaves it out): the warmup runs alongside the rollout; use executor "operator" or "pulumi" to start the rollout once the nodes are warm');
    }
  }
  if (analysis !== undefined) checkRolloutAnalysis(problems, 'analysis', analysis, { executor });
  asArray(rules).forEach((rule, i) => {
    const r = asObject(rule);
    const p = typeof name === 'string' && typeof r.name === 'string' && r.router !== undefined ? routerNameProblem(name, r.name) : undefined;
    if (p) problems.error(`spec.coordination[${i}].router`, p);
  });
  return problems.result();
}

/** Roles of the rolling-update rules, once each (of the rules rendering reads). */
function coordinatedRoles(rules: readonly CoordinationRule[]): string[] {
  return [...new Set(renderable([], rules).rules.filter((r) => r.rollingUpdate !== undefined).flatMap((r) => r.roles))];
}

/**
 * The roles and rules as rendering reads them: the props' lists, less what a JavaScript caller
 * can pass that no manifest could carry (a role or rule that is not a mapping, a rule whose
 * `roles` is not a list, an `affinityScheduling` without a mapping of `ratios`). Rendering never
 * throws on those; the model's validator reports each at its path (`spec.roles[1]`,
 * `spec.coordination[0].roles`, …), so synthesis fails listing them with every other problem.
 */
function renderable(roles: unknown, rules: unknown): { roles: RoleSpec[]; rules: CoordinationRule[] } {
  return {
    roles: asArray(roles).filter(isObject) as unknown as RoleSpec[],
    rules: asArray(rules)
      .filter((r): r is JsonObject => isObject(r) && Array.isArray(r.roles))
      .map((r) => {
        const affinity = r.affinityScheduling;
        return (affinity === undefined || (isObject(affinity) && isObject(affinity.ratios)) ? r : { ...r, affinityScheduling: undefined }) as unknown as CoordinationRule;
      }),
  };
}

/** The labels of a role's pod template (none when the template is missing or malformed). */
function templateLabels(role: RoleSpec): Record<string, string> {
  return asObject(asObject(asObject(role.template).metadata).labels) as Record<string, string>;
}
