/**
 * The `status` of the rayshift RayService CRD: its structural schema (KubeRay's names where the
 * meaning is the same, rayshift's own fields beside them) and the `kubectl get` columns that read it.
 */
import { type JsonObject, asObject } from '../spec/read';
import { SERVING_SPEC_SCHEMA } from './serving-spec-schema';

const TIME: JsonObject = { type: 'string', format: 'date-time' };

const PERCENT = (what: string): JsonObject => ({ type: 'integer', format: 'int32', minimum: 0, maximum: 100, description: what });

/** Status of one side (active or pending) of a rayshift RayService, with KubeRay's field names. */
function serviceStatusSchema(side: string, applicationStatuses: JsonObject | undefined): JsonObject {
  return {
    type: 'object',
    description: `The ${side} cluster.`,
    properties: {
      rayClusterName: { type: 'string', maxLength: 253, description: `Name of the ${side} RayCluster.` },
      targetCapacity: PERCENT('Serve target_capacity of the cluster, in percent.'),
      trafficRoutedPercent: PERCENT('Route weight of the cluster, in percent.'),
      lastTrafficMigratedTime: { ...TIME, description: 'When its route weight last changed.' },
      readyReplicas: { type: 'integer', format: 'int32', minimum: 0, description: 'Serve replicas of the cluster running and ready, as the operator last observed them.' },
      targetReplicas: { type: 'integer', format: 'int32', minimum: 0, description: "Serve replicas the cluster runs at its target_capacity (Serve's target_num_replicas), as the operator last observed them." },
      ...(applicationStatuses !== undefined ? { applicationStatuses } : {}),
    },
  };
}

/**
 * The structural `status` schema of a rayshift RayService: KubeRay's names where the meaning is the
 * same (`activeServiceStatus` / `pendingServiceStatus` with `rayClusterName`, `targetCapacity`,
 * `trafficRoutedPercent`, `lastTrafficMigratedTime`, `applicationStatuses`; `conditions`,
 * `numServeEndpoints`, `lastUpdateTime`, `observedGeneration`), plus rayshift's `phase`, `reason`,
 * `message`, `nextStepAt`, `owner` (the operator replica and shard), `engineState` (the engine's state, persisted verbatim) and `servingSpec`
 * (what a rollback restores). `conditions` and `applicationStatuses` reuse the upstream CRD's
 * schemas when it has them.
 */
export function rayshiftStatusSchema(upstreamStatus: JsonObject = {}): JsonObject {
  const props = asObject(upstreamStatus.properties);
  const apps = asObject(asObject(asObject(props.activeServiceStatus).properties).applicationStatuses);
  const applicationStatuses = Object.keys(apps).length > 0 ? structuredClone(apps) : undefined;
  const conditions = Object.keys(asObject(props.conditions)).length > 0 ? structuredClone(asObject(props.conditions)) : CONDITIONS_SCHEMA;
  return {
    type: 'object',
    description: "Observed state, written by the rayshift operator through the status subresource.",
    properties: {
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0, description: 'metadata.generation this status describes.' },
      phase: { type: 'string', maxLength: 64, description: 'Initializing, Running, Upgrading, Paused, RollingBack, or Failed (an upgrade refused by capacityPolicy fail).' },
      reason: { type: 'string', maxLength: 1024, description: 'Machine-readable reason for the phase (e.g. WaitingForInterval, ProgressDeadlineExceeded).' },
      message: { type: 'string', maxLength: 32768, description: 'Human-readable detail of the reason.' },
      nextStepAt: { ...TIME, description: 'When the next traffic or capacity step is due, if one is scheduled.' },
      activeServiceStatus: serviceStatusSchema('active (serving)', applicationStatuses),
      pendingServiceStatus: serviceStatusSchema('pending (upgrading to)', applicationStatuses),
      numServeEndpoints: { type: 'integer', format: 'int32', minimum: 0, description: 'Ready serve endpoints of both clusters.' },
      lastUpdateTime: { ...TIME, description: 'When the status last changed.' },
      conditions,
      engineState: {
        type: 'object',
        'x-kubernetes-preserve-unknown-fields': true,
        description: "The operator's engine state, persisted verbatim between reconciles; not an API.",
      },
      servingSpec: structuredClone(SERVING_SPEC_SCHEMA),
      capacity: {
        type: 'object',
        description: 'The capacity preflight of the upgrade under way (or refused, or held): fits, fitsAfterOldShrinks, doesNotFit, or unknown (the cluster could not be read), why, and whether the upgrade runs without a surge (shrinkFirst).',
        properties: {
          outcome: { type: 'string', maxLength: 32 },
          message: { type: 'string', maxLength: 4096 },
          checkedTime: TIME,
          shrinkFirst: { type: 'boolean', description: 'capacityPolicy shrinkFirst runs this upgrade without a surge.' },
          freeing: {
            type: 'object',
            description: "shrinkFirst: the giving cluster's worker Pods named for deletion (they host no Serve replica); the next capacity step waits until they are gone.",
            properties: {
              cluster: { type: 'string', maxLength: 253 },
              pods: { type: 'array', maxItems: 1024, items: { type: 'string', maxLength: 253 } },
              sinceTime: TIME,
            },
          },
        },
      },
      owner: {
        type: 'object',
        description: "The operator replica working on the service (its Pod name) and, when the operator is sharded (--shards), the service's shard; written with each status change, so a replica taking over a shard names itself at its first status write.",
        properties: {
          replica: { type: 'string', maxLength: 253 },
          shard: { type: 'integer', format: 'int32', minimum: 0 },
        },
      },
      surgeUnschedulable: {
        type: 'object',
        description: "The new cluster's Pods the scheduler marks Unschedulable while the upgrade runs: how many, since when, the scheduler's message, and whether surgeUnschedulableSeconds has passed.",
        properties: {
          pods: { type: 'integer', format: 'int32', minimum: 0 },
          sinceTime: TIME,
          message: { type: 'string', maxLength: 1024 },
          boundExceeded: { type: 'boolean' },
        },
      },
    },
  };
}

/** metav1.Condition list, for upstream CRDs that lack one. */
const CONDITIONS_SCHEMA: JsonObject = {
  type: 'array',
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
  items: {
    type: 'object',
    required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
    properties: {
      lastTransitionTime: TIME,
      message: { type: 'string', maxLength: 32768 },
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      reason: { type: 'string', minLength: 1, maxLength: 1024 },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      type: { type: 'string', maxLength: 316 },
    },
  },
};

/** `kubectl get` columns of a rayshift RayService: phase, both clusters, their weights and capacities, age. */
export const RAYSHIFT_PRINTER_COLUMNS: readonly JsonObject[] = [
  { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Lifecycle phase.' },
  { name: 'Active', type: 'string', jsonPath: '.status.activeServiceStatus.rayClusterName', description: 'Serving RayCluster.' },
  { name: 'Pending', type: 'string', jsonPath: '.status.pendingServiceStatus.rayClusterName', description: 'RayCluster being upgraded to.' },
  { name: 'Active Weight', type: 'integer', jsonPath: '.status.activeServiceStatus.trafficRoutedPercent', description: 'Percent of traffic routed to the active cluster.' },
  { name: 'Pending Weight', type: 'integer', jsonPath: '.status.pendingServiceStatus.trafficRoutedPercent', description: 'Percent of traffic routed to the pending cluster.' },
  { name: 'Active Capacity', type: 'integer', jsonPath: '.status.activeServiceStatus.targetCapacity', description: 'Serve target_capacity of the active cluster.' },
  { name: 'Pending Capacity', type: 'integer', jsonPath: '.status.pendingServiceStatus.targetCapacity', description: 'Serve target_capacity of the pending cluster.' },
  { name: 'Owner', type: 'string', jsonPath: '.status.owner.replica', priority: 1, description: 'The operator replica working on the service (kubectl get -o wide).' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];
