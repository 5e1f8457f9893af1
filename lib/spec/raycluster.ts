import { dns1123LabelProblem } from './names';
import { ProblemList, ValidationResult, show } from './problem';
import type { RayAuthOptions } from './ray-auth';
import { JsonObject, asArray, asObject, isInteger, isObject } from './read';

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

/** Extended resources counted as accelerators when sizing a surge. */
export const ACCELERATOR_RESOURCES: readonly string[] = [
  'nvidia.com/gpu',
  'amd.com/gpu',
  'google.com/tpu',
  'habana.ai/gaudi',
  'aws.amazon.com/neuron',
  'aws.amazon.com/neuroncore',
  'intel.com/gpu',
];

/** Accelerators of a RayCluster: the largest per-pod count of any worker group, and the total at full capacity. */
export interface AcceleratorProfile {
  /** Accelerators one worker pod of the hungriest group requests. */
  readonly acceleratorsPerPod: number;
  /** Accelerators of every worker at full capacity (each group's per-pod count × `maxReplicas`, or `replicas` when no maximum). */
  readonly totalAccelerators: number;
}

function quantity(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return Number(value.trim());
  return 0;
}

/** Sums the accelerator limits (or requests, where no limit is set) of a pod template's containers. */
export function acceleratorsOfPod(template: unknown): number {
  let total = 0;
  for (const c of asArray(asObject(asObject(template).spec).containers)) {
    const resources = asObject(asObject(c).resources);
    const limits = asObject(resources.limits);
    const requests = asObject(resources.requests);
    for (const name of ACCELERATOR_RESOURCES) total += quantity(limits[name] ?? requests[name]);
  }
  return total;
}

/** Derives the accelerator profile of a RayCluster spec from its worker groups. */
export function acceleratorProfile(cluster: unknown): AcceleratorProfile {
  let perPod = 0;
  let total = 0;
  for (const g of asArray(asObject(cluster).workerGroupSpecs)) {
    const group = asObject(g);
    const pod = acceleratorsOfPod(group.template);
    const count = isInteger(group.maxReplicas) ? group.maxReplicas : isInteger(group.replicas) ? group.replicas : 0;
    perPod = Math.max(perPod, pod);
    total += pod * count;
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
    if (isInteger(g.replicas) && (g.replicas < min || (isInteger(g.maxReplicas) && g.replicas > g.maxReplicas))) {
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
