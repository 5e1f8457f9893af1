/**
 * The `UpgradeStatus` of a RayService object: from the rayshift operator's status (`phase`,
 * `reason`, `engineState`, KubeRay-named sides and conditions) or from KubeRay's own status (sides
 * and conditions only). Step counts come from the engine's plan of the service's own options
 * (`trafficStepProgress`); the one next-step time is the next traffic step's, `rayshift status`'s
 * (`nextTrafficStepAt` of the engine state), and
 * the analysis is the engine state's (`analysis`). Serve replicas per cluster come from the rayshift
 * operator's sides (`readyReplicas`, `targetReplicas`); KubeRay's status has none, so there
 * `ClusterSide.ready_replicas`/`target_replicas` stay unset. Which steering verb applies, and why
 * not, is the steering rules' answer (lib/engine/steering.ts, the one the steering handlers enforce),
 * so the dashboard shows it without a rule of its own. The status object
 * itself travels along verbatim (`executor_status`).
 */
import { create, type JsonObject as ProtoJsonObject } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { trafficStepProgress } from '../../engine/plan-rayservice';
import { resolveUpgradeOptions } from '../../spec/rayservice';
import type { KubeObject } from '../../runtime/kube/types';
import { storedOwner } from '../../engine/shards';
import { isPaused, STEERING_VERBS, steeringRefusal, steeringStateOf } from '../../engine/steering';
import { nextTrafficStepAt, serviceView, statusSide } from '../../runtime/rayservice/progress';
import type { RayServiceSpec } from '../../spec/rayservice';
import { validateRayService } from '../../spec/rayservice';
import { asObject, isObject } from '../../spec/read';
import { ClusterSideSchema, SteeringVerbStateSchema, UpgradePhase, UpgradeStatusSchema, type ClusterSide, type SteeringVerbState, type UpgradeStatus } from '../gen/rayshift/v1/upgrade_pb';
import { upgradeAnalysisOf } from './analysis';
import { conditionsOf } from './conditions';
import { timestampOf } from './timestamps';

/** One side of the status as the API shows it (read by `statusSide`, with KubeRay's defaults). */
function sideOf(raw: unknown, role: 'active' | 'pending'): ClusterSide | undefined {
  const s = statusSide(raw, role);
  if (!s) return undefined;
  return create(ClusterSideSchema, {
    cluster: s.name,
    targetCapacity: Math.round(s.capacity),
    trafficRoutedPercent: Math.round(s.weight),
    lastTrafficMigratedTime: timestampOf(asObject(raw).lastTrafficMigratedTime),
    ...(s.readyReplicas !== undefined ? { readyReplicas: Math.round(s.readyReplicas) } : {}),
    ...(s.targetReplicas !== undefined ? { targetReplicas: Math.round(s.targetReplicas) } : {}),
  });
}

/** The phase of the rayshift operator's `status.phase` and `status.reason`. */
export function operatorPhase(phase: unknown, reason: unknown): UpgradePhase {
  switch (phase) {
    case 'Running':
      return UpgradePhase.IDLE;
    case 'Initializing':
      return UpgradePhase.PREPARING;
    case 'Upgrading':
      if (reason === 'CreatingCluster' || reason === 'WaitingForHead') return UpgradePhase.PREPARING;
      return reason === 'Promoted' ? UpgradePhase.PROMOTING : UpgradePhase.SHIFTING;
    case 'Paused':
      return UpgradePhase.PAUSED;
    case 'RollingBack':
      return UpgradePhase.ROLLING_BACK;
    case 'Invalid':
    case 'Failed':
      return UpgradePhase.FAILED;
    default:
      return UpgradePhase.UNSPECIFIED;
  }
}

/** The phase of a KubeRay RayService, from its conditions and pending side. */
function kubeRayPhase(status: Record<string, unknown>): UpgradePhase {
  const conditions = conditionsOf(status);
  const isTrue = (type: string) => conditions.some((c) => c.type === type && c.status === 'True');
  if (isTrue('RollbackInProgress')) return UpgradePhase.ROLLING_BACK;
  if (isTrue('UpgradeInProgress')) return sideOf(status.pendingServiceStatus, 'pending')?.trafficRoutedPercent ? UpgradePhase.SHIFTING : UpgradePhase.PREPARING;
  if (isTrue('Ready')) return UpgradePhase.IDLE;
  return conditions.length > 0 ? UpgradePhase.PREPARING : UpgradePhase.UNSPECIFIED;
}

/** Traffic steps taken and planned, for an incremental upgrade with a pending cluster. */
function steps(spec: unknown, pending: ClusterSide | undefined): { step: number; totalSteps: number } {
  const manifest = { apiVersion: 'rayshift.dev/v1alpha1', metadata: { name: 'plan' }, spec };
  if (!pending || validateRayService(manifest).errors.length > 0) return { step: 0, totalSteps: 0 };
  return trafficStepProgress('plan', resolveUpgradeOptions(spec as RayServiceSpec), pending.trafficRoutedPercent);
}

/** Each steering verb and why it does not apply to `obj` (empty when it does), by the rules the steering handlers enforce. */
function steeringOf(obj: KubeObject): SteeringVerbState[] {
  const state = steeringStateOf(obj);
  return STEERING_VERBS.map((verb) => create(SteeringVerbStateSchema, { verb, refusal: steeringRefusal(verb, state) ?? '' }));
}

/** Where a RayService's upgrade stands, from the object as read. */
export function upgradeStatusOf(obj: KubeObject): UpgradeStatus {
  const status = asObject(obj.status);
  const spec = asObject(obj.spec);
  const rayshift = obj.apiVersion !== 'ray.io/v1';
  const active = sideOf(status.activeServiceStatus, 'active');
  const pending = sideOf(status.pendingServiceStatus, 'pending');
  const phase = rayshift ? operatorPhase(status.phase, status.reason) : kubeRayPhase(status);
  const nextTrafficStep = rayshift ? nextTrafficStepAt(serviceView(obj)) : undefined;
  return create(UpgradeStatusSchema, {
    phase,
    reason: typeof status.reason === 'string' ? status.reason : '',
    message: typeof status.message === 'string' ? status.message : '',
    active,
    pending,
    ...steps(spec, pending),
    conditions: conditionsOf(status),
    lastError: phase === UpgradePhase.FAILED && typeof status.message === 'string' ? status.message : '',
    observedGeneration: BigInt(typeof status.observedGeneration === 'number' ? status.observedGeneration : 0),
    generation: BigInt(obj.metadata.generation ?? 0),
    resourceVersion: obj.metadata.resourceVersion ?? '',
    nextTrafficStepTime: nextTrafficStep === undefined ? undefined : timestampFromMs(nextTrafficStep),
    paused: rayshift && isPaused(spec, obj.metadata.annotations),
    executorStatus: isObject(obj.status) ? (obj.status as ProtoJsonObject) : undefined,
    analysis: upgradeAnalysisOf(status.engineState),
    steering: rayshift ? steeringOf(obj) : [],
    owner: rayshift ? storedOwner(status.owner) : undefined,
  });
}

/** True while an upgrade (or its rollback) is in flight: a pending cluster next to an active one. */
export function upgradeInFlight(u: UpgradeStatus): boolean {
  return u.active !== undefined && u.pending !== undefined;
}
