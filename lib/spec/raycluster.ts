import { dns1123LabelProblem } from './names';
import { ProblemList, ValidationResult, show } from './problem';
import type { RayAuthOptions } from './ray-auth';
import { INT32_MAX, JsonObject, asArray, asObject, isInteger, isObject } from './read';

/** Labels and annotations of a pod template. */
export interface PodTemplateMetadata {
  /** Labels of the pods. @default none */
  readonly labels?: Record<string, string>;
  /** Annotations of the pods. @default none */
  readonly annotations?: Record<string, string>;
}

/** A pod template in its JSON (wire) form, as in a RayCluster's head and worker groups. */
export interface PodTemplateJson {
  /** Labels and annotations of the pods. @default none */
  readonly metadata?: PodTemplateMetadata;
  /** The pod spec; `containers` is required by Kubernetes. */
  readonly spec: { readonly containers: readonly JsonObject[]; readonly [key: string]: unknown };
}

/** The head group of a RayCluster. */
export interface HeadGroupSpec {
  /** `ray start` parameters, all values strings. */
  readonly rayStartParams?: Record<string, string>;
  /** Service type of the head Service. @default "ClusterIP" */
  readonly serviceType?: string;
  /** The head pod template. */
  readonly template: PodTemplateJson;
  /**
   * Any other field of KubeRay's HeadGroupSpec. TypeScript only (jsii languages have no index signatures:
   * set such fields with a JSON patch on the construct's `apiObject`).
   * @jsii ignore
   */
  readonly [key: string]: unknown;
}

/** One worker group of a RayCluster. */
export interface WorkerGroupSpec {
  /** Group name, unique in the cluster. */
  readonly groupName: string;
  /** Desired workers; left unset on a pending cluster of an incremental upgrade so the autoscaler decides. */
  readonly replicas?: number;
  /** Autoscaler floor. @default 0 */
  readonly minReplicas?: number;
  /** Autoscaler ceiling. @default 2147483647 */
  readonly maxReplicas?: number;
  /** `ray start` parameters, all values strings. */
  readonly rayStartParams?: Record<string, string>;
  /** The worker pod template. */
  readonly template: PodTemplateJson;
  /**
   * Any other field of KubeRay's WorkerGroupSpec. TypeScript only (jsii languages have no index signatures:
   * set such fields with a JSON patch on the construct's `apiObject`).
   * @jsii ignore
   */
  readonly [key: string]: unknown;
}

/** A RayCluster spec (`spec.rayClusterConfig` of a RayService) in its JSON form. */
export interface RayClusterConfig {
  /** Ray version the image carries. */
  readonly rayVersion?: string;
  /** Runs the Ray autoscaler in the head pod; required by incremental upgrades. @default false */
  readonly enableInTreeAutoscaling?: boolean;
  /** Ray token authentication (see `validateRayAuth`). */
  readonly authOptions?: RayAuthOptions;
  /** Autoscaler options (`upscalingMode`, `idleTimeoutSeconds`, …). */
  readonly autoscalerOptions?: { readonly [key: string]: unknown };
  /** The head group. */
  readonly headGroupSpec: HeadGroupSpec;
  /** The worker groups. */
  readonly workerGroupSpecs?: WorkerGroupSpec[];
  /**
   * Any other field of KubeRay's RayClusterSpec. TypeScript only (jsii languages have no index signatures:
   * set such fields with a JSON patch on the construct's `apiObject`).
   * @jsii ignore
   */
  readonly [key: string]: unknown;
}

/** Counts of extended resources (accelerators: `nvidia.com/gpu`, `google.com/tpu`, …) by resource name. */
export type ResourceCounts = Record<string, number>;

/**
 * Whether a resource name is an extended resource, as Kubernetes defines one
 * (`IsExtendedResourceName`): a domain-prefixed name outside `kubernetes.io`, not a quota's
 * `requests.` name. Every accelerator is one (`nvidia.com/gpu`, `amd.com/gpu`, `google.com/tpu`,
 * `habana.ai/gaudi`, `aws.amazon.com/neuron`, …); cpu, memory and hugepages are not.
 */
export function isExtendedResource(name: string): boolean {
  return name.includes('/') && !name.includes('kubernetes.io/') && !name.startsWith('requests.');
}

/** Accelerators of a RayCluster: the largest per-pod count of any worker group, and the total at full capacity. */
export interface AcceleratorProfile {
  /** Accelerators one worker pod of the hungriest group requests. */
  readonly acceleratorsPerPod: number;
  /** Accelerators of every worker at full capacity (`ClusterShape`'s replicas of each group × its Pods). */
  readonly totalAccelerators: number;
}

function quantity(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return Number(value.trim());
  return 0;
}

/** A container's extended resources: its limits, or its requests where no limit is set (Kubernetes requires them equal when both are). */
function containerResources(container: unknown): Record<string, number> {
  const resources = asObject(asObject(container).resources);
  const limits = asObject(resources.limits);
  const requests = asObject(resources.requests);
  const out: Record<string, number> = {};
  for (const name of new Set([...Object.keys(limits), ...Object.keys(requests)])) {
    if (!isExtendedResource(name)) continue;
    const n = quantity(limits[name] ?? requests[name]);
    if (n > 0) out[name] = n;
  }
  return out;
}

/**
 * The extended resources one Pod of a template holds, by name, as the scheduler counts them:
 * the sum over its containers and sidecars (init containers with `restartPolicy: Always`), or
 * the largest init container's when that is more (init containers run one at a time, before the others).
 */
export function podExtendedResources(template: unknown): ResourceCounts {
  const spec = asObject(asObject(template).spec);
  const total: Record<string, number> = {};
  const add = (r: Record<string, number>) => {
    for (const [name, n] of Object.entries(r)) total[name] = (total[name] ?? 0) + n;
  };
  for (const c of asArray(spec.containers)) add(containerResources(c));
  const inits = asArray(spec.initContainers);
  for (const c of inits) if (asObject(c).restartPolicy === 'Always') add(containerResources(c));
  for (const c of inits) {
    if (asObject(c).restartPolicy === 'Always') continue;
    for (const [name, n] of Object.entries(containerResources(c))) total[name] = Math.max(total[name] ?? 0, n);
  }
  return total;
}

/** Sums the extended resources (accelerators of every kind) one Pod of a template holds. */
export function acceleratorsOfPod(template: unknown): number {
  return Object.values(podExtendedResources(template)).reduce((a, b) => a + b, 0);
}

/** A worker group of a `ClusterShape`. */
export interface WorkerGroupShape {
  /** The group's name. */
  readonly groupName: string;
  /** Replicas at full capacity: `maxReplicas` when the autoscaler runs (its ceiling), else KubeRay's desired replicas (`replicas` within min..max; 0 when suspended). */
  readonly replicas: number;
  /** Replicas the group keeps at any capacity: `minReplicas` with the autoscaler, else `replicas` (nothing scales the group down). */
  readonly minReplicas: number;
  /** Pods per replica (`numOfHosts`, 1 unless multi-host). */
  readonly podsPerReplica: number;
  /** Extended resources of one of its Pods. */
  readonly perPod: ResourceCounts;
}

/** What a RayCluster runs at full capacity: one head Pod and its worker groups. */
export interface ClusterShape {
  /** Extended resources of the head Pod. */
  readonly head: ResourceCounts;
  /** The worker groups, in spec order. */
  readonly workerGroups: WorkerGroupShape[];
}

/**
 * The shape of a RayCluster spec, as KubeRay v1.7.0 sizes it (`GetWorkerGroupDesiredReplicas`:
 * `replicas` clamped to `minReplicas`..`maxReplicas`, × `numOfHosts`, 0 when suspended). With
 * `enableInTreeAutoscaling` a group counts its `maxReplicas`, the most the autoscaler may start
 * (its desired replicas when `maxReplicas` is unset, KubeRay's unbounded default).
 */
export function clusterShape(cluster: unknown): ClusterShape {
  const c = asObject(cluster);
  const autoscaled = c.enableInTreeAutoscaling === true;
  const workerGroups = asArray(c.workerGroupSpecs).map((g): WorkerGroupShape => {
    const group = asObject(g);
    const min = isInteger(group.minReplicas) ? group.minReplicas : 0;
    const max = isInteger(group.maxReplicas) ? group.maxReplicas : INT32_MAX;
    const replicas = isInteger(group.replicas) ? group.replicas : 0;
    const desired = group.suspend === true ? 0 : Math.min(Math.max(replicas, min), max);
    const ceiling = autoscaled && isInteger(group.maxReplicas) && group.maxReplicas < INT32_MAX ? group.maxReplicas : desired;
    return {
      groupName: typeof group.groupName === 'string' ? group.groupName : '',
      replicas: ceiling,
      minReplicas: autoscaled ? Math.min(min, ceiling) : ceiling,
      podsPerReplica: isInteger(group.numOfHosts) && group.numOfHosts > 0 ? group.numOfHosts : 1,
      perPod: podExtendedResources(group.template),
    };
  });
  return { head: podExtendedResources(asObject(c.headGroupSpec).template), workerGroups };
}

/** Derives the accelerator profile of a RayCluster spec from its worker groups (`clusterShape`). */
export function acceleratorProfile(cluster: unknown): AcceleratorProfile {
  let perPod = 0;
  let total = 0;
  for (const g of clusterShape(cluster).workerGroups) {
    const pod = Object.values(g.perPod).reduce((a, b) => a + b, 0);
    perPod = Math.max(perPod, pod);
    total += pod * g.replicas * g.podsPerReplica;
  }
  return { acceleratorsPerPod: perPod, totalAccelerators: total };
}

/**
 * The smallest `maxSurgePercent` whose surge still holds one whole worker pod:
 * `ceil(100 × acceleratorsPerPod / totalAccelerators)`, at least 1 and at most 100.
 * A smaller surge gives the pending cluster a `target_capacity` too small to start even one
 * accelerator replica, so the upgrade cannot progress. Undefined when the cluster has no accelerators.
 */
export function minimumSafeMaxSurgePercent(profile: AcceleratorProfile): number | undefined {
  if (profile.acceleratorsPerPod <= 0 || profile.totalAccelerators <= 0) return undefined;
  return Math.min(100, Math.max(1, Math.ceil((100 * profile.acceleratorsPerPod) / profile.totalAccelerators)));
}

/**
 * Validates the RayCluster spec of a RayService; paths are relative to it (`headGroupSpec.template`).
 * Besides the shape rayshift relies on, it applies the rules of KubeRay v1.7.0 that refuse a
 * RayService's cluster: `headService.metadata.name`, worker `minReplicas`/`maxReplicas` without the
 * autoscaler, and an `upgradeStrategy.type` of its own.
 */
export function validateRayClusterConfig(cluster: unknown): ValidationResult {
  const problems = new ProblemList();
  if (!isObject(cluster)) {
    problems.error('', `is required and must be a RayCluster spec with a headGroupSpec; got ${show(cluster)}`);
    return problems.result();
  }
  const head = cluster.headGroupSpec;
  if (!isObject(head)) {
    problems.error('headGroupSpec', `is required; got ${show(head)}`);
  } else {
    checkTemplate(problems, 'headGroupSpec.template', head.template);
    if (asObject(asObject(head.headService).metadata).name !== undefined) {
      problems.error(
        'headGroupSpec.headService.metadata.name',
        `must not be set (KubeRay names the head Service itself); got ${show(asObject(asObject(head.headService).metadata).name)}`,
      );
    }
  }
  if (cluster.enableInTreeAutoscaling !== undefined && typeof cluster.enableInTreeAutoscaling !== 'boolean') {
    problems.error('enableInTreeAutoscaling', `must be true or false; got ${show(cluster.enableInTreeAutoscaling)}`);
  }
  const groups = cluster.workerGroupSpecs;
  if (groups !== undefined && !Array.isArray(groups)) {
    problems.error('workerGroupSpecs', `must be a list of worker groups; got ${show(groups)}`);
  }
  // KubeRay's RayCluster controller refuses every cluster a RayService creates with its own upgrade
  // strategy (ValidateRayClusterUpgradeOptions), while the RayService itself is accepted.
  const ownStrategy = asObject(cluster.upgradeStrategy).type;
  if (ownStrategy !== undefined) {
    problems.error(
      'upgradeStrategy.type',
      `must not be set in a RayService's cluster: KubeRay refuses every RayCluster a RayService creates with one (the RayService's spec.upgradeStrategy rolls it); got ${show(ownStrategy)}`,
    );
  }
  const autoscaled = cluster.enableInTreeAutoscaling === true;
  const seen = new Map<string, number>();
  asArray(groups).forEach((g, i) => {
    const at = `workerGroupSpecs[${i}]`;
    if (!isObject(g)) {
      problems.error(at, `must be a worker group with groupName and template; got ${show(g)}`);
      return;
    }
    const name = g.groupName;
    const nameProblem = typeof name === 'string' ? dns1123LabelProblem(name) : `is required; got ${show(name)}`;
    if (nameProblem) problems.error(`${at}.groupName`, nameProblem);
    else if (seen.has(name as string)) problems.error(`${at}.groupName`, `${show(name)} is already used by workerGroupSpecs[${seen.get(name as string)}]`);
    else seen.set(name as string, i);
    for (const field of ['replicas', 'minReplicas', 'maxReplicas'] as const) {
      const v = g[field];
      if (v !== undefined && (!isInteger(v) || v < 0)) problems.error(`${at}.${field}`, `must be an integer ≥ 0; got ${show(v)}`);
    }
    if (!autoscaled) {
      // Without the autoscaler nothing else bounds the group, so KubeRay requires both.
      for (const field of ['minReplicas', 'maxReplicas'] as const) {
        if (g[field] === undefined) problems.error(`${at}.${field}`, 'is required when enableInTreeAutoscaling is not true (KubeRay refuses the RayService without it); got unset');
      }
    }
    const min = isInteger(g.minReplicas) ? g.minReplicas : 0;
    if (isInteger(g.maxReplicas) && g.maxReplicas < min) {
      problems.error(`${at}.maxReplicas`, `${g.maxReplicas} is below minReplicas ${min}; must be ≥ minReplicas`);
    }
    // Only above the maximum: KubeRay's CRD defaults `replicas` to 0, so a group that leaves it out
    // (as KubeRay's samples do) reads as below minReplicas, and KubeRay then starts minReplicas.
    if (isInteger(g.replicas) && isInteger(g.maxReplicas) && g.replicas > g.maxReplicas) {
      problems.error(
        `${at}.replicas`,
        `${g.replicas} is outside [minReplicas ${min}, maxReplicas ${isInteger(g.maxReplicas) ? g.maxReplicas : '∞'}]`,
      );
    }
    checkTemplate(problems, `${at}.template`, g.template);
  });
  return problems.result();
}

function checkTemplate(problems: ProblemList, at: string, template: unknown): void {
  const containers = asObject(asObject(template).spec).containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    problems.error(`${at}.spec.containers`, `must list at least one container; got ${show(containers)}`);
  }
}
