/**
 * What an executor observes and hands to the RayService engine. Every field maps to one thing an
 * executor can read from the Kubernetes API or the Ray dashboard.
 */
import type { MeasuredValues } from './analysis-judgement';
import type { CapacityUnread, CapacityVerdict } from './capacity-preflight';
import type { RayServiceStatus } from './status';
import type { WorkerFloor } from './actions';
import type { SurgeScheduling } from './surge-scheduling';
import type { ObservedWorkers } from './worker-freeing';

/** One RayCluster owned by the RayService. */
export interface ObservedCluster {
  /** `metadata.name`. */
  readonly name: string;
  /** `clusterSpecHash()` of the spec the cluster was created from (stored as an annotation on it). */
  readonly specHash: string;
  /** The head Pod is ready, so the dashboard's Serve API answers. */
  readonly headReady: boolean;
  /**
   * Serve's `target_capacity` from `GET /api/serve/applications/`: `null` (full capacity) is
   * reported as 100; `undefined` means no Serve config is deployed yet (zero capacity).
   */
  readonly targetCapacity?: number;
  /** At least one Serve application exists and all of them are `RUNNING`. */
  readonly appsRunning: boolean;
  /** Serve replicas in state `RUNNING`, summed over all deployments. */
  readonly readyReplicas: number;
  /** Serve's target replica count at the current `target_capacity` (sum of `target_num_replicas`). */
  readonly targetReplicas: number;
  /**
   * Serve reports the proxy on the head node HEALTHY (`headServeLabel`); false or absent when it
   * does not, or when the dashboard did not answer.
   */
  readonly headProxyHealthy?: boolean;
  /**
   * Ready endpoints (distinct Pods) of the cluster's serve Service `<cluster>-serve-svc`, from its
   * EndpointSlices; absent when it has none (no such Service, or no endpoint controller has seen
   * it). Traffic never moves onto a cluster whose serve Service has 0 (`EngineRun.ready`).
   */
  readonly serveEndpoints?: number;
  /** The Serve config last PUT to the cluster, as recorded on it; absent before the first PUT. */
  readonly appliedServeConfig?: string;
  /**
   * Its worker groups, worker Pods and the Pods Serve runs on, read only while a shrinkFirst upgrade
   * runs (`needsWorkerObservation`); absent otherwise or when the read failed (a freeing then waits).
   */
  readonly workers?: ObservedWorkers;
  /** The original worker `minReplicas` a shrinkFirst upgrade recorded on it (`rayshift.dev/worker-floors`); absent when none. */
  readonly workerFloors?: readonly WorkerFloor[];
}

/** One backend of the service's HTTPRoute (or GRPCRoute) rule. */
export interface RouteBackend {
  /** The RayCluster whose `<cluster>-serve-svc` the backend points at. */
  readonly cluster: string;
  /** Gateway API backend weight. */
  readonly weight: number;
}

/** The route as read back from the API server. */
export interface ObservedRoute {
  /** `rules[0].backendRefs`, in order. */
  readonly backends: readonly RouteBackend[];
  /** Accepted and ResolvedRefs are True for the route's current generation on its Gateway. */
  readonly ready: boolean;
}

/** Operator commands (CLI `pause`, `resume`, `promote`, `abort`), level-triggered. */
export interface RolloutControls {
  /** Hold the forward migration; rollbacks are never paused. The progress deadline does not run while paused. */
  readonly paused?: boolean;
  /** Finish the migration without waiting for intervals; readiness and capacity bounds still apply. */
  readonly promoteNow?: boolean;
  /** Roll the upgrade in flight back; its spec is not retried until the goal spec changes. Clear it afterwards. */
  readonly abort?: boolean;
  /** Retry or skip the failed analysis run `runId` (a run that is not the failed one named is left alone). */
  readonly analysisOverride?: AnalysisOverride;
}

/** A person's decision on a failed analysis run. */
export interface AnalysisOverride {
  /** `retry` measures the run again from now; `skip` counts it as passed. */
  readonly action: 'retry' | 'skip';
  /** The run's `id` (status `analysis.step.id` or `analysis.background.id`). */
  readonly runId: string;
}

/** What an executor measured for a `measureAnalysis` action. */
export interface AnalysisMeasurement extends MeasuredValues {
  readonly runId: string;
  readonly metric: string;
  readonly seq: number;
  /** When it was taken (epoch ms). */
  readonly at: number;
}

/** Everything the RayService engine needs for one run. */
export interface RayServiceObservation {
  /** RayService name; pending cluster names are derived from it. */
  readonly name: string;
  /** RayService namespace, for analysis queries. @default "default" */
  readonly namespace?: string;
  /** `clusterSpecHash()` of the goal `spec.rayClusterConfig`. */
  readonly goalSpecHash: string;
  /** Every RayCluster the service owns, in any state (including ones being deleted). */
  readonly clusters: readonly ObservedCluster[];
  /** The service's route; `undefined` when it does not exist. Only read under the incremental strategy. */
  readonly route?: ObservedRoute;
  /** The cluster that `<rs>-head-svc` and `<rs>-serve-svc` select; `undefined` when they do not exist. */
  readonly servingCluster?: string;
  /** Operator commands. */
  readonly controls?: RolloutControls;
  /** Results of the `measureAnalysis` actions carried out since the last run. */
  readonly measurements?: readonly AnalysisMeasurement[];
  /**
   * The capacity preflight of the upgrade this run would start (`capacityPreflight` over the goal
   * spec's first Pods and the cluster as listed), when `needsCapacityPreflight` asked for it;
   * `unread` when the executor could not list the cluster (the policy decides, capacity-policy.ts);
   * `undefined`: none was asked for, and the upgrade starts without one.
   */
  readonly capacity?: CapacityVerdict | CapacityUnread;
  /**
   * The pending cluster's Unschedulable Pods (`surgeSchedulingOf` over its listed Pods), when
   * `needsSurgeScheduling` asked for them and there are some; `undefined`: none (or not read).
   */
  readonly surgeScheduling?: SurgeScheduling;
  /** The status the engine returned last time, as persisted by the executor; `undefined` on the first run. */
  readonly status?: RayServiceStatus;
}
