/**
 * What the RayService engine asks an executor to do. Each action is one API call (or one
 * idempotent group of calls on one object) and must be carried out now; the engine repeats an
 * action on later runs for as long as the observation shows it has not taken effect.
 */

/** Which side of a migration a cluster is on. */
export type ClusterSide = 'active' | 'pending';

/**
 * Create the RayCluster `name` from the goal spec (create-if-absent: `AlreadyExists` is success),
 * annotated with `specHash`, plus its `<name>-serve-svc` when the route is managed.
 */
export interface CreatePendingClusterAction {
  readonly type: 'createPendingCluster';
  readonly name: string;
  readonly specHash: string;
  /** Leave `workerGroupSpecs[*].replicas` unset so the autoscaler follows `target_capacity` (incremental upgrades). */
  readonly startFromMinReplicas: boolean;
  /**
   * shrinkFirst: start every worker group at `replicas` and `minReplicas` 0 (the head only: the new
   * cluster's workers come with its capacity, as the old one frees Pods), the spec's `minReplicas`
   * recorded as the cluster's worker floors (`rayshift.dev/worker-floors`) and restored once it serves alone.
   */
  readonly workerFloorZero?: true;
}

/**
 * `PUT /api/serve/applications/` on the cluster with the goal `serveConfigV2` and this
 * `target_capacity`. Send 100 as an absent `target_capacity` (ray#62682 pins the autoscaling floor at 100).
 */
export interface SetTargetCapacityAction {
  readonly type: 'setTargetCapacity';
  readonly cluster: ClusterSide;
  readonly clusterName: string;
  readonly percent: number;
}

/**
 * Write the route's backends: `activeCluster` at weight `active` and, when `pendingCluster` is
 * set, `pendingCluster` at weight `pending`. The weights sum to 100.
 */
export interface SetTrafficWeightsAction {
  readonly type: 'setTrafficWeights';
  readonly activeCluster: string;
  readonly active: number;
  readonly pendingCluster?: string;
  readonly pending: number;
}

/** Point `<rs>-head-svc` and `<rs>-serve-svc` at `cluster` (creating them if absent). */
export interface PromoteAction {
  readonly type: 'promote';
  readonly cluster: string;
  /** The cluster they selected before, if any. */
  readonly previous?: string;
}

/** Delete the RayCluster `name`; `at` is when it became due (retired time + deletion delay). */
export interface DeleteClusterAction {
  readonly type: 'deleteCluster';
  readonly name: string;
  readonly at: number;
}

/**
 * Measure one metric of an analysis run: `query` (and `activeQuery`, the same for the old cluster,
 * when the condition compares them) against the Prometheus HTTP API at `prometheusUrl`, each within
 * `timeoutSeconds`, and hand the numbers (or the error) back as an `AnalysisMeasurement` with the
 * same `runId`, `metric` and `seq`. Reads only; repeating it is harmless.
 */
export interface MeasureAnalysisAction {
  readonly type: 'measureAnalysis';
  readonly runId: string;
  readonly metric: string;
  /** Which measurement of the run this is (0-based); the engine counts each one once. */
  readonly seq: number;
  readonly prometheusUrl: string;
  readonly timeoutSeconds: number;
  readonly query: string;
  readonly activeQuery?: string;
}

/** One worker group of a `freeWorkers` patch: the values read (tested) and the values written. */
export interface FreeWorkersGroup {
  /** Index in `spec.workerGroupSpecs`. */
  readonly index: number;
  readonly groupName: string;
  /** `replicas`, `minReplicas` and `scaleStrategy.workersToDelete` as observed: the patch tests them. */
  readonly read: { readonly replicas: number; readonly minReplicas: number; readonly workersToDelete: readonly string[] };
  readonly replicas: number;
  readonly minReplicas: number;
  /** The list read plus the Pods this freeing names. */
  readonly workersToDelete: readonly string[];
}

/**
 * One JSON patch of the RayCluster `clusterName` (`lib/engine/worker-freeing.ts`): per group, `test`
 * the values read, then set `replicas`, `minReplicas` and `workersToDelete` together; with `floors`,
 * record the original `minReplicas` of every group in the `rayshift.dev/worker-floors` annotation.
 * A failed `test` (someone wrote the group since it was read) writes nothing; the engine decides again.
 */
export interface FreeWorkersAction {
  readonly type: 'freeWorkers';
  readonly clusterName: string;
  readonly groups: readonly FreeWorkersGroup[];
  readonly floors?: readonly WorkerFloor[];
}

/** A worker group's original `minReplicas`, as the `rayshift.dev/worker-floors` annotation keeps it. */
export interface WorkerFloor {
  readonly index: number;
  readonly groupName: string;
  readonly minReplicas: number;
}

/**
 * Give the RayCluster `clusterName`'s worker groups back the `minReplicas` in `floors` and remove the
 * annotation (one JSON patch, each group's name tested): the cluster serves alone again.
 */
export interface RestoreWorkerFloorsAction {
  readonly type: 'restoreWorkerFloors';
  readonly clusterName: string;
  readonly floors: readonly WorkerFloor[];
}

/** Any action of the RayService engine. */
export type RayServiceAction =
  | CreatePendingClusterAction
  | SetTargetCapacityAction
  | SetTrafficWeightsAction
  | PromoteAction
  | DeleteClusterAction
  | MeasureAnalysisAction
  | FreeWorkersAction
  | RestoreWorkerFloorsAction;
