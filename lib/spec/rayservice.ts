import { ResolvedAnalysis, UpgradeAnalysis, resolveUpgradeAnalysis, validateUpgradeAnalysis } from './analysis';
import { SURGE_WATCH_DEFAULTS, assertCapacityPolicy, checkCapacityPolicy, checkSurgeUnschedulableSeconds, type CapacityPolicy } from './capacity-policy';
import { INITIALIZING_TIMEOUT_ANNOTATION, initializingTimeoutProblem } from './initializing-timeout';
import { dns1035LabelProblem, dns1123SubdomainProblem } from './names';
import { ProblemList, ValidationResult, checkOneOf, show } from './problem';
import { RayClusterConfig, acceleratorProfile, minimumSafeMaxSurgePercent, validateRayClusterConfig } from './raycluster';
import { validateRayAuth } from './ray-auth';
import { INT32_MAX, asObject, isInteger, isObject } from './read';
import { validateServeConfig } from './serve-config';
import { DEFAULT_UPGRADE_STRATEGY, UPGRADE_STRATEGY_TYPES, type UpgradeStrategyType } from './upgrade-strategy';

export { UPGRADE_STRATEGY_TYPES, type UpgradeStrategyType } from './upgrade-strategy';
export { CAPACITY_POLICIES, shrinkFirstNote, type CapacityPolicy } from './capacity-policy';

/**
 * Who executes upgrades of a RayService: KubeRay itself (`ray.io/v1`), or the rayshift operator
 * (`rayshift.dev/v1alpha1`, the same spec plus `rayshift` extensions). It decides the apiVersion.
 */
export type RayServiceExecutor = 'kuberay' | 'operator';

/** Every executor of the `RayService` construct. */
export const RAY_SERVICE_EXECUTORS: readonly RayServiceExecutor[] = ['kuberay', 'operator'];

/** Options of the incremental upgrade (`spec.upgradeStrategy.clusterUpgradeOptions`). */
export interface ClusterUpgradeOptions {
  /** Serve `target_capacity` added to the new cluster (and removed from the old) per capacity step, 1–100. @default 100 */
  readonly maxSurgePercent?: number;
  /** Traffic moved to the new cluster per step, 1–`maxSurgePercent`. */
  readonly stepSizePercent: number;
  /** Seconds between traffic steps, ≥ 1. */
  readonly intervalSeconds: number;
  /**
   * GatewayClass of the Gateway that splits traffic (a DNS subdomain). Required (KubeRay's CRD
   * requires it) unless `rayshift.gatewayRef` names an existing Gateway to attach to (executor
   * `operator`, or `pulumi` in the Pulumi component): then no Gateway is created.
   * @default none (valid only with `rayshift.gatewayRef`)
   */
  readonly gatewayClassName?: string;
}

/** `spec.upgradeStrategy` of a RayService. */
export interface RayServiceUpgradeStrategy {
  /** The strategy. @default "NewCluster" (KubeRay's default when unset) */
  readonly type?: UpgradeStrategyType;
  /** Required for, and only used by, `NewClusterWithIncrementalUpgrade`. */
  readonly clusterUpgradeOptions?: ClusterUpgradeOptions;
}

/** An existing Gateway the operator attaches its route to instead of creating `<name>-gateway`. */
export interface GatewayReference {
  /** Gateway name. */
  readonly name: string;
  /** Gateway namespace. @default the RayService's namespace */
  readonly namespace?: string;
  /** Listener to attach to. @default every listener that admits the route */
  readonly sectionName?: string;
}

/** The kind of route the operator writes weights to. */
export type RouteKind = 'HTTP' | 'GRPC';

/** Every route kind. */
export const ROUTE_KINDS: readonly RouteKind[] = ['HTTP', 'GRPC'];

/** rayshift's extensions of the RayService spec (`spec.rayshift` of `rayshift.dev/v1alpha1`). */
export interface RayshiftExtensions {
  /** Attach to this Gateway instead of creating one. @default a Gateway `<name>-gateway` of class `gatewayClassName` */
  readonly gatewayRef?: GatewayReference;
  /** Roll back automatically when an upgrade makes no progress for this long, ≥ 1. @default 600 */
  readonly progressDeadlineSeconds?: number;
  /** Holds the upgrade at its current step. @default false */
  readonly paused?: boolean;
  /** Route kind: an HTTPRoute `<name>-httproute` or a GRPCRoute `<name>-grpcroute`. @default "HTTP" */
  readonly routeKind?: RouteKind;
  /** Measure the new cluster while it takes traffic, and hold, pause or roll back on what Prometheus shows (NewClusterWithIncrementalUpgrade only). @default no analysis */
  readonly analysis?: UpgradeAnalysis;
  /** What an upgrade whose new Pods do not fit the cluster does: `wait`, `fail` or `shrinkFirst` (see `CapacityPolicy`). @default "wait" */
  readonly capacityPolicy?: CapacityPolicy;
  /**
   * Report an upgrade whose new cluster has Pods the scheduler marked Unschedulable for this long
   * (status `surgeUnschedulable`, an Event, metric `rayshift_surge_unschedulable_seconds`);
   * under `capacityPolicy: fail` the upgrade is then rolled back, ≥ 1. @default 120
   */
  readonly surgeUnschedulableSeconds?: number;
}

/** The spec of a RayService, `ray.io/v1` fields plus `rayshift` extensions for the rayshift operator. */
export interface RayServiceSpec {
  /** The RayCluster every (new) cluster is created from; its hash decides when an upgrade is needed. */
  readonly rayClusterConfig: RayClusterConfig;
  /**
   * The Serve config as a YAML string (see `serializeServeConfig`). Optional, as in KubeRay: without
   * it the RayCluster runs no Serve applications, so it never counts as ready to serve and the
   * service never becomes Ready (validation warns).
   */
  readonly serveConfigV2?: string;
  /** How cluster-spec changes roll out. */
  readonly upgradeStrategy?: RayServiceUpgradeStrategy;
  /** Seconds an old cluster is kept after it stops serving, ≥ 0. @default 60 */
  readonly rayClusterDeletionDelaySeconds?: number;
  /** Keep the head pod out of the serve Service. @default false */
  readonly excludeHeadPodFromServeSvc?: boolean;
  /** rayshift extensions; only for the `rayshift.dev/v1alpha1` kind (executor `operator`). */
  readonly rayshift?: RayshiftExtensions;
}

/** Defaults applied where a field is unset. */
export const RAY_SERVICE_DEFAULTS = {
  /** KubeRay's default `upgradeStrategy.type`. */
  strategy: DEFAULT_UPGRADE_STRATEGY,
  maxSurgePercent: 100,
  intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 60,
  progressDeadlineSeconds: 600,
  routeKind: 'HTTP' as RouteKind,
  capacityPolicy: SURGE_WATCH_DEFAULTS.capacityPolicy as CapacityPolicy,
  surgeUnschedulableSeconds: SURGE_WATCH_DEFAULTS.surgeUnschedulableSeconds,
} as const;

/** Longest RayService name: KubeRay appends `-xxxxx` to name clusters, which must stay within 53 characters. */
export const MAX_RAY_SERVICE_NAME_LENGTH = 47;

/**
 * The warning for a RayService without `serveConfigV2`. KubeRay accepts one, but marks a cluster
 * ready to serve only when it runs at least one Serve application, all RUNNING, so it never
 * becomes Ready, never gets its serve Services and never finishes an upgrade.
 */
export const NO_SERVE_CONFIG =
  'is unset: the RayCluster runs no Serve applications, so (as in KubeRay) it never counts as ready to serve, the service never becomes Ready and no upgrade completes';


/** API version of KubeRay's RayService. */
export const RAY_IO_API_VERSION = 'ray.io/v1';
/** API version of rayshift's RayService (executed by the rayshift operator). */
export const RAYSHIFT_API_VERSION = 'rayshift.dev/v1alpha1';

/**
 * Validates a RayService manifest (`ray.io/v1` or `rayshift.dev/v1alpha1`) and returns every
 * problem at once. It checks what KubeRay's `ValidateRayServiceMetadata` (name, the
 * `ray.io/initializing-timeout` annotation), `ValidateRayServiceSpec` (including the token
 * authentication rules of `authOptions`) and `ValidateClusterUpgradeOptions` check, with the same
 * meaning, and more: zero surge or step
 * (which stall KubeRay forever), the Gateway class name's syntax, Serve config syntax, and a
 * surge too small for one accelerator pod. Never throws, whatever the input.
 *
 * `parsedServeConfig` is the already-parsed form of `spec.serveConfigV2`, when the caller has it
 * (a construct given typed applications), to spare parsing the YAML it just wrote.
 */
export function validateRayService(manifest: unknown, parsedServeConfig?: unknown): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  const name = asObject(obj.metadata).name;
  if (typeof name !== 'string') {
    problems.error('metadata.name', `is required; got ${show(name)}`);
  } else {
    const p = dns1035LabelProblem(name, MAX_RAY_SERVICE_NAME_LENGTH);
    if (p) problems.error('metadata.name', p);
  }
  const timeout = initializingTimeoutProblem(asObject(asObject(obj.metadata).annotations)[INITIALIZING_TIMEOUT_ANNOTATION]);
  if (timeout) problems.error(`metadata.annotations["${INITIALIZING_TIMEOUT_ANNOTATION}"]`, timeout);
  const spec = obj.spec;
  if (!isObject(spec)) {
    problems.error('spec', `is required; got ${show(spec)}`);
    return problems.result();
  }
  const rayshiftKind = obj.apiVersion === RAYSHIFT_API_VERSION;
  problems.addAll(validateRayClusterConfig(spec.rayClusterConfig), 'spec.rayClusterConfig');
  problems.addAll(validateRayAuth(spec.rayClusterConfig, true), 'spec.rayClusterConfig');

  const strategy = asObject(spec.upgradeStrategy);
  const type = strategy.type;
  if (spec.upgradeStrategy !== undefined && !isObject(spec.upgradeStrategy)) {
    problems.error('spec.upgradeStrategy', `must be a mapping with "type"; got ${show(spec.upgradeStrategy)}`);
  }
  checkOneOf(problems, 'spec.upgradeStrategy.type', type, UPGRADE_STRATEGY_TYPES, 'a strategy');
  const incremental = type === 'NewClusterWithIncrementalUpgrade';
  const gatewayRef = asObject(spec.rayshift).gatewayRef;
  if (incremental) {
    checkIncremental(problems, spec, strategy.clusterUpgradeOptions, rayshiftKind && gatewayRef !== undefined);
  } else if (strategy.clusterUpgradeOptions !== undefined) {
    problems.warning(
      'spec.upgradeStrategy.clusterUpgradeOptions',
      `is only used by NewClusterWithIncrementalUpgrade and is ignored with type ${show(type ?? DEFAULT_UPGRADE_STRATEGY)}`,
    );
  }

  const delay = spec.rayClusterDeletionDelaySeconds;
  if (delay !== undefined && (!isInteger(delay) || delay < 0 || delay > INT32_MAX)) {
    problems.error('spec.rayClusterDeletionDelaySeconds', `must be an integer from 0 to ${INT32_MAX} (int32); got ${show(delay)}`);
  }
  if (spec.serveConfigV2 === undefined) {
    problems.warning('spec.serveConfigV2', NO_SERVE_CONFIG);
  } else if (typeof spec.serveConfigV2 !== 'string') {
    problems.error('spec.serveConfigV2', `must be a YAML string; got ${show(spec.serveConfigV2)}`);
  } else {
    problems.addAll(validateServeConfig(parsedServeConfig ?? spec.serveConfigV2, incremental), 'spec.serveConfigV2');
  }
  if (spec.rayshift !== undefined) {
    if (!rayshiftKind) {
      problems.error(
        'spec.rayshift',
        `rayshift extensions need apiVersion ${RAYSHIFT_API_VERSION} (executor "operator"); got apiVersion ${show(obj.apiVersion)}`,
      );
    } else {
      checkExtensions(problems, spec.rayshift, incremental ? asObject(strategy.clusterUpgradeOptions) : undefined);
    }
  }
  return problems.result();
}

function checkIncremental(problems: ProblemList, spec: Record<string, unknown>, options: unknown, hasGatewayRef: boolean): void {
  const at = 'spec.upgradeStrategy.clusterUpgradeOptions';
  const cluster = asObject(spec.rayClusterConfig);
  if (cluster.enableInTreeAutoscaling !== true) {
    problems.error(
      'spec.rayClusterConfig.enableInTreeAutoscaling',
      `must be true: the Ray autoscaler is required for NewClusterWithIncrementalUpgrade; got ${show(cluster.enableInTreeAutoscaling)}`,
    );
  }
  if (!isObject(options)) {
    problems.error(at, `are required for NewClusterWithIncrementalUpgrade; got ${show(options)}`);
    return;
  }
  const surge = options.maxSurgePercent ?? RAY_SERVICE_DEFAULTS.maxSurgePercent;
  const surgeOk = isInteger(surge) && surge >= 1 && surge <= 100;
  if (!surgeOk) {
    problems.error(
      `${at}.maxSurgePercent`,
      `must be an integer from 1 to 100; got ${show(surge)}${surge === 0 ? ' (0 never adds capacity, so the upgrade would stall forever)' : ''}`,
    );
  }
  const step = options.stepSizePercent;
  const stepOk = isInteger(step) && step >= 1 && step <= 100;
  if (!stepOk) {
    problems.error(
      `${at}.stepSizePercent`,
      `must be an integer from 1 to 100; got ${show(step)}${step === 0 ? ' (0 never moves traffic, so the upgrade would stall forever)' : ''}`,
    );
  }
  if (surgeOk && stepOk) {
    if ((step as number) > (surge as number)) {
      problems.error(`${at}.stepSizePercent`, `${step} exceeds maxSurgePercent ${surge}; must be ≤ maxSurgePercent`);
    } else if ((surge as number) % (step as number) !== 0) {
      problems.warning(
        `${at}.stepSizePercent`,
        `${step} does not divide maxSurgePercent ${surge}: the traffic step that reaches each surge's capacity is cut to what is left (the first to ${(surge as number) % (step as number)}; \`rayshift plan\` shows every step)`,
      );
    }
  }
  const interval = options.intervalSeconds;
  if (!isInteger(interval) || interval < 1 || interval > INT32_MAX) {
    problems.error(`${at}.intervalSeconds`, `must be an integer from 1 to ${INT32_MAX} (int32); got ${show(interval)}`);
  }
  const className = options.gatewayClassName;
  if (className === undefined || className === '') {
    if (!hasGatewayRef) problems.error(`${at}.gatewayClassName`, `is required for NewClusterWithIncrementalUpgrade; got ${show(className)}`);
  } else if (typeof className !== 'string') {
    problems.error(`${at}.gatewayClassName`, `must be a string; got ${show(className)}`);
  } else {
    const p = dns1123SubdomainProblem(className);
    if (p) problems.error(`${at}.gatewayClassName`, p);
  }
  if (surgeOk) {
    const profile = acceleratorProfile(cluster);
    const minimum = minimumSafeMaxSurgePercent(profile);
    if (minimum !== undefined && (surge as number) < minimum) {
      problems.warning(
        `${at}.maxSurgePercent`,
        `${surge} is below ${minimum}, the smallest surge that holds one worker pod (${profile.acceleratorsPerPod} of ${profile.totalAccelerators} accelerators): the new cluster may not start a replica per step`,
      );
    }
  }
}

/** `options`: the clusterUpgradeOptions of an incremental upgrade; undefined for another strategy. */
function checkExtensions(problems: ProblemList, ext: unknown, options: Record<string, unknown> | undefined): void {
  const incremental = options !== undefined;
  const at = 'spec.rayshift';
  if (!isObject(ext)) {
    problems.error(at, `must be a mapping; got ${show(ext)}`);
    return;
  }
  if (ext.gatewayRef !== undefined) {
    const ref = asObject(ext.gatewayRef);
    if (typeof ref.name !== 'string' || dns1123SubdomainProblem(ref.name)) {
      problems.error(`${at}.gatewayRef.name`, `must name a Gateway (a DNS subdomain); got ${show(ref.name)}`);
    }
    if (ref.namespace !== undefined && (typeof ref.namespace !== 'string' || dns1123SubdomainProblem(ref.namespace))) {
      problems.error(`${at}.gatewayRef.namespace`, `must be a namespace name; got ${show(ref.namespace)}`);
    }
  }
  const deadline = ext.progressDeadlineSeconds;
  if (deadline !== undefined && (!isInteger(deadline) || deadline < 1 || deadline > INT32_MAX)) {
    problems.error(`${at}.progressDeadlineSeconds`, `must be an integer from 1 to ${INT32_MAX} (int32); got ${show(deadline)}`);
  }
  checkSurgeUnschedulableSeconds(problems, `${at}.surgeUnschedulableSeconds`, ext.surgeUnschedulableSeconds);
  if (ext.paused !== undefined && typeof ext.paused !== 'boolean') {
    problems.error(`${at}.paused`, `must be true or false; got ${show(ext.paused)}`);
  }
  checkOneOf(problems, `${at}.routeKind`, ext.routeKind, ROUTE_KINDS, 'a route kind');
  checkCapacityPolicy(problems, ext.capacityPolicy, options, RAY_SERVICE_DEFAULTS.maxSurgePercent);
  if (ext.analysis !== undefined) {
    if (!incremental) problems.error(`${at}.analysis`, 'gates traffic steps, so it needs upgradeStrategy.type NewClusterWithIncrementalUpgrade');
    problems.addAll(validateUpgradeAnalysis(ext.analysis, `${at}.analysis`));
  }
}

/** Upgrade options with every default applied: the options the engine runs with. */
export interface ResolvedUpgradeOptions {
  /** How a change of the cluster spec hash is rolled out. */
  readonly strategy: UpgradeStrategyType;
  /** Capacity step in percent. */
  readonly maxSurgePercent: number;
  /** Traffic step in percent. */
  readonly stepSizePercent: number;
  /** Seconds between traffic steps. */
  readonly intervalSeconds: number;
  /** Seconds before an old cluster is deleted. */
  readonly rayClusterDeletionDelaySeconds: number;
  /** Seconds without progress before an automatic rollback. */
  readonly progressDeadlineSeconds: number;
  /** The analysis that gates traffic steps, when the spec has one. */
  readonly analysis?: ResolvedAnalysis;
  /** What an upgrade whose new Pods do not fit does. @default "wait" */
  readonly capacityPolicy?: CapacityPolicy;
  /** Seconds the new cluster's Pods may stay Unschedulable before the surge is reported. @default 120 */
  readonly surgeUnschedulableSeconds?: number;
}

/**
 * Applies the defaults to a RayService spec's upgrade options (call after `validateRayService` passed).
 * `clusterUpgradeOptions` count only for NewClusterWithIncrementalUpgrade: with another strategy
 * validation only warns that they are ignored, so they are unchecked and must not reach the engine.
 */
export function resolveUpgradeOptions(spec: RayServiceSpec): ResolvedUpgradeOptions {
  const o = spec.upgradeStrategy?.type === 'NewClusterWithIncrementalUpgrade' ? spec.upgradeStrategy.clusterUpgradeOptions : undefined;
  const surge = o?.maxSurgePercent ?? RAY_SERVICE_DEFAULTS.maxSurgePercent;
  return {
    strategy: spec.upgradeStrategy?.type ?? RAY_SERVICE_DEFAULTS.strategy,
    maxSurgePercent: surge,
    stepSizePercent: o?.stepSizePercent ?? surge,
    intervalSeconds: o?.intervalSeconds ?? RAY_SERVICE_DEFAULTS.intervalSeconds,
    rayClusterDeletionDelaySeconds: spec.rayClusterDeletionDelaySeconds ?? RAY_SERVICE_DEFAULTS.rayClusterDeletionDelaySeconds,
    progressDeadlineSeconds: spec.rayshift?.progressDeadlineSeconds ?? RAY_SERVICE_DEFAULTS.progressDeadlineSeconds,
    capacityPolicy: spec.rayshift?.capacityPolicy ?? RAY_SERVICE_DEFAULTS.capacityPolicy,
    surgeUnschedulableSeconds: spec.rayshift?.surgeUnschedulableSeconds ?? RAY_SERVICE_DEFAULTS.surgeUnschedulableSeconds,
    ...(o !== undefined && spec.rayshift?.analysis !== undefined ? { analysis: resolveUpgradeAnalysis(spec.rayshift.analysis) } : {}),
  };
}

/**
 * Throws a `RangeError` naming the field, the value and the allowed range when a resolved option is
 * out of range: the guard of callers that build options by hand (the engine runs it on every pass;
 * `validateRayService` reports the same problems to users first).
 */
export function assertResolvedUpgradeOptions(o: ResolvedUpgradeOptions): void {
  if (!UPGRADE_STRATEGY_TYPES.includes(o.strategy)) {
    throw new RangeError(`strategy is ${String(o.strategy)}; allowed: ${UPGRADE_STRATEGY_TYPES.join(', ')}`);
  }
  assertPercent('maxSurgePercent', o.maxSurgePercent);
  assertCapacityPolicy(o);
  assertPercent('stepSizePercent', o.stepSizePercent);
  if (!(o.intervalSeconds > 0) || !Number.isFinite(o.intervalSeconds)) {
    throw new RangeError(`intervalSeconds is ${o.intervalSeconds}; allowed: a finite number > 0`);
  }
  assertNonNegative('rayClusterDeletionDelaySeconds', o.rayClusterDeletionDelaySeconds);
  assertNonNegative('progressDeadlineSeconds', o.progressDeadlineSeconds);
  if (o.surgeUnschedulableSeconds !== undefined && !(o.surgeUnschedulableSeconds > 0 && Number.isFinite(o.surgeUnschedulableSeconds))) {
    throw new RangeError(`surgeUnschedulableSeconds is ${o.surgeUnschedulableSeconds}; allowed: a finite number > 0`);
  }
}

function assertPercent(field: string, v: number): void {
  if (!Number.isInteger(v) || v < 1 || v > 100) throw new RangeError(`${field} is ${v}; allowed: an integer 1–100`);
}

function assertNonNegative(field: string, v: number): void {
  if (!(v >= 0) || !Number.isFinite(v)) throw new RangeError(`${field} is ${v}; allowed: a finite number ≥ 0`);
}
