import { k8s } from 'cdk8s-plus-28';
import { RAY_PORTS } from '../spec/object-names';
import { HeadGroupSpec, PodTemplateJson, RayClusterConfig, WorkerGroupSpec } from '../spec/raycluster';
import { validateClusterBuilderProps } from '../spec/cluster-builder';
import { ValidationResult } from '../spec/problem';
import { asArray, asObject, isObject } from '../spec/read';

/** Resources of one Ray container. */
export interface RayContainerResources {
  /** CPU request and limit, e.g. `"4"` or `"500m"`. */
  readonly cpu: string;
  /** Memory request and limit, e.g. `"16Gi"`. */
  readonly memory: string;
  /** Accelerators per pod. @default 0 */
  readonly accelerators?: number;
  /** Extended resource name of the accelerator. @default "nvidia.com/gpu" */
  readonly acceleratorResource?: string;
}

/**
 * Pod settings of a Ray head or worker group beyond its container, merged into the pod spec. Types
 * are the Kubernetes API's (`k8s` of cdk8s-plus); other PodSpec fields go through
 * `RayClusterConfig` or a JSON patch.
 */
export interface RayPodSettings {
  /** Service account of the pods. @default the namespace's default */
  readonly serviceAccountName?: string;
  /** Node labels the pods must run on. @default none */
  readonly nodeSelector?: Record<string, string>;
  /** Tolerations (e.g. of GPU node taints). @default none */
  readonly tolerations?: k8s.Toleration[];
  /** Node and pod affinity. @default none */
  readonly affinity?: k8s.Affinity;
  /** How the pods spread over topology domains. @default none */
  readonly topologySpreadConstraints?: k8s.TopologySpreadConstraint[];
  /** Volumes. @default none */
  readonly volumes?: k8s.Volume[];
  /** Init containers. @default none */
  readonly initContainers?: k8s.Container[];
  /** Secrets to pull the image with. @default none */
  readonly imagePullSecrets?: k8s.LocalObjectReference[];
  /** Priority class of the pods. @default none */
  readonly priorityClassName?: string;
  /** Runtime class (e.g. `nvidia`). @default the cluster's default */
  readonly runtimeClassName?: string;
  /** Scheduler of the pods. @default the default scheduler */
  readonly schedulerName?: string;
  /** Pod security context. @default none */
  readonly securityContext?: k8s.PodSecurityContext;
  /** Seconds a pod may take to stop. @default 30 */
  readonly terminationGracePeriodSeconds?: number;
}

/** The head group. */
export interface RayHeadProps {
  /** Head resources. */
  readonly resources: RayContainerResources;
  /** `ray start` parameters. @default { "num-cpus": "0" } so the head runs no Serve replicas */
  readonly rayStartParams?: Record<string, string>;
  /** Extra pod settings (service account, volumes, node selectors, …) merged into the head pod spec. @default none */
  readonly podSpec?: RayPodSettings;
}

/** One worker group. */
export interface RayWorkerGroupProps {
  /** Group name. */
  readonly groupName: string;
  /** Worker resources. */
  readonly resources: RayContainerResources;
  /** Starting workers. @default minReplicas */
  readonly replicas?: number;
  /** Autoscaler floor. @default 0 */
  readonly minReplicas?: number;
  /** Autoscaler ceiling. */
  readonly maxReplicas: number;
  /** `ray start` parameters. @default {} */
  readonly rayStartParams?: Record<string, string>;
  /** Extra pod settings merged into the worker pod spec. @default none */
  readonly podSpec?: RayPodSettings;
}

/** Inputs of a `RayClusterSpecBuilder`. */
export interface RayClusterSpecBuilderProps {
  /** Container image of head and workers, e.g. `rayproject/ray:2.52.0-py311-gpu`. */
  readonly image: string;
  /** Ray version in the image. */
  readonly rayVersion?: string;
  /** The head group. */
  readonly head: RayHeadProps;
  /** The worker groups. @default none */
  readonly workerGroups?: RayWorkerGroupProps[];
  /** Run the Ray autoscaler; forced on when an incremental upgrade needs it. @default false */
  readonly enableAutoscaler?: boolean;
  /** Autoscaler options. @default { upscalingMode: "Default", idleTimeoutSeconds: 60 } when the autoscaler runs */
  readonly autoscalerOptions?: { readonly [key: string]: unknown };
  /** Serve HTTP port of the head container (named `serve`). @default 8000 */
  readonly servePort?: number;
  /** Serve gRPC port of the head container (named `serve-grpc`); unset for HTTP-only apps. */
  readonly serveGrpcPort?: number;
}

/**
 * Builds a RayCluster spec for a RayService from a few inputs: one image, head and worker
 * resources, and autoscaling. The `RayService` construct asks it for an autoscaling spec when
 * its upgrade strategy is incremental, so the autoscaler is never forgotten.
 */
export class RayClusterSpecBuilder {
  constructor(private readonly props: RayClusterSpecBuilderProps) {}

  /**
   * Every problem of the props that the RayCluster spec cannot show (a required prop left out or
   * of the wrong type, as a JavaScript caller can pass), paths relative to the props.
   * The `RayService` construct reports them at synthesis under `rayClusterConfig`.
   */
  public problems(): ValidationResult {
    return validateClusterBuilderProps(this.props);
  }

  /**
   * The RayCluster spec; `requireAutoscaler` turns the autoscaler on whatever the props say. Never
   * throws: what malformed props leave out is reported by `problems()`.
   */
  public toRayClusterConfig(requireAutoscaler = false): RayClusterConfig {
    const p = asObject(this.props) as Partial<RayClusterSpecBuilderProps>;
    const head = asObject(p.head) as Partial<RayHeadProps>;
    const autoscale = requireAutoscaler || (p.enableAutoscaler ?? false);
    const ports: { name: string; containerPort: number }[] = [
      { name: RAY_PORTS.gcs.name, containerPort: RAY_PORTS.gcs.port },
      { name: RAY_PORTS.dashboard.name, containerPort: RAY_PORTS.dashboard.port },
      { name: RAY_PORTS.client.name, containerPort: RAY_PORTS.client.port },
      { name: RAY_PORTS.serve.name, containerPort: p.servePort ?? RAY_PORTS.serve.port },
    ];
    if (p.serveGrpcPort !== undefined) ports.push({ name: RAY_PORTS.serveGrpc.name, containerPort: p.serveGrpcPort });
    const headGroupSpec: HeadGroupSpec = {
      rayStartParams: head.rayStartParams ?? { 'num-cpus': '0' },
      template: this.podTemplate('ray-head', head.resources, head.podSpec, ports),
    };
    const groups = asArray(p.workerGroups).filter(isObject) as unknown as RayWorkerGroupProps[];
    const workerGroupSpecs: WorkerGroupSpec[] = groups.map((g) => ({
      groupName: g.groupName,
      replicas: g.replicas ?? g.minReplicas ?? 0,
      minReplicas: g.minReplicas ?? 0,
      // Left out when missing (the CRD would default it to 2147483647): `problems()` names it.
      ...(g.maxReplicas != null ? { maxReplicas: g.maxReplicas } : {}),
      rayStartParams: g.rayStartParams ?? {},
      template: this.podTemplate('ray-worker', g.resources, g.podSpec, []),
    }));
    return {
      ...(p.rayVersion !== undefined ? { rayVersion: p.rayVersion } : {}),
      enableInTreeAutoscaling: autoscale,
      ...(autoscale ? { autoscalerOptions: p.autoscalerOptions ?? { upscalingMode: 'Default', idleTimeoutSeconds: 60 } } : {}),
      headGroupSpec,
      workerGroupSpecs,
    };
  }

  private podTemplate(
    containerName: string,
    given: RayContainerResources | undefined,
    podSpec: RayPodSettings | undefined,
    ports: { name: string; containerPort: number }[],
  ): PodTemplateJson {
    // What is missing or not a string is left out of the template, and `problems()` names it at its prop.
    const resources = asObject(given) as Partial<RayContainerResources>;
    const amounts: Record<string, string> = {};
    for (const name of ['cpu', 'memory'] as const) {
      const amount: unknown = resources[name];
      if (typeof amount === 'string') amounts[name] = amount;
    }
    if ((resources.accelerators ?? 0) > 0) amounts[resources.acceleratorResource ?? 'nvidia.com/gpu'] = String(resources.accelerators);
    const image = asObject(this.props).image;
    const container = {
      name: containerName,
      ...(typeof image === 'string' ? { image } : {}),
      ...(ports.length > 0 ? { ports } : {}),
      resources: { requests: amounts, limits: amounts },
    };
    const extra = isObject(podSpec) ? podSpecJson(podSpec) : {};
    delete extra.containers;
    return { spec: { ...extra, containers: [container] } };
  }
}

/**
 * The pod settings as PodSpec JSON. cdk8s-plus's converter throws on a field of the wrong type (a
 * `null` nodeSelector, a string of tolerations), as a JavaScript caller can pass; the
 * settings are then written as given, and the pinned CRD's schema names the field at synthesis.
 */
function podSpecJson(podSpec: RayPodSettings): Record<string, unknown> {
  try {
    return k8s.toJson_PodSpec({ containers: [], ...podSpec }) as Record<string, unknown>;
  } catch {
    return { ...podSpec } as Record<string, unknown>;
  }
}
