/**
 * One reconcile pass of a RayService as the steps an executor carries out, in order: the decision's
 * Events, the engine's actions, each with the objects it needs kept in place (the Gateway, the route, the per-cluster
 * serve Services, the Serve config a capacity PUT carries), then what every pass keeps (the Serve
 * config in place, the head Pods' serve label, spent steering cleared), and whether the status is
 * written now or held. The executor only carries the steps out (lib/runtime/rayservice/execute.ts).
 */
import type { CreatePendingClusterAction, DeleteClusterAction, FreeWorkersAction, MeasureAnalysisAction, RestoreWorkerFloorsAction, PromoteAction, SetTrafficWeightsAction } from './actions';
import { HeadServeLabel, headServeLabel } from './head-serve-label';
import type { ObservedCluster, RayServiceObservation, RouteBackend } from './observation';
import { inPlaceServeConfig, serveConfigForCapacity, statusWrite } from './pass-rules';
import type { RayServiceDecision } from './rayservice-engine';
import { routeManagedFor } from './route-convergence';
import type { RayServiceStatus } from './status';
import { ABORT_ANNOTATION, PROMOTE_ANNOTATION, spentSteeringAnnotations } from './steering';
import type { UpgradeStrategyType } from '../spec/rayservice';

/** Create-if-absent the service's own Gateway (`<name>-gateway`; never a `gatewayRef`'s). */
export interface EnsureGatewayStep {
  readonly type: 'ensureGateway';
}

/** Create-if-absent `<cluster>-serve-svc`, the route's backend for `cluster` (nothing when the RayCluster is gone). */
export interface EnsureServeServiceStep {
  readonly type: 'ensureServeService';
  readonly cluster: string;
}

/** Create the route with these backends, in order (create-if-absent). */
export interface CreateRouteStep {
  readonly type: 'createRoute';
  readonly backends: readonly RouteBackend[];
}

/** Give the managed backends of the existing route these weights (a guarded JSON patch). */
export interface PatchRouteWeightsStep {
  readonly type: 'patchRouteWeights';
  readonly backends: readonly RouteBackend[];
}

/**
 * PUT `config` at `percent` to the cluster's Serve (100 sent as no `target_capacity`), then, when
 * `record`, record `config` on the RayCluster as the one applied.
 */
export interface PutServeConfigStep {
  readonly type: 'putServeConfig';
  readonly clusterName: string;
  readonly config: string;
  readonly percent: number;
  readonly record: boolean;
  /** A Serve config change applied to the serving cluster without a new cluster (`inPlaceServeConfig`). */
  readonly inPlace: boolean;
}

/** Give every head Pod of `cluster` the `ray.io/serve` label `value` (a Pod that has it is left alone). */
export interface SetHeadServeLabelStep {
  readonly type: 'setHeadServeLabel';
  readonly cluster: string;
  readonly value: HeadServeLabel;
}

/** Remove these steering annotations from the service: they took effect. */
export interface ClearSteeringStep {
  readonly type: 'clearSteering';
  readonly annotations: readonly string[];
}

/** Record the decision's events (analysis verdicts) as Kubernetes Events, each once. */
export interface RecordEventsStep {
  readonly type: 'recordEvents';
}

/** One step of a pass. */
export type PassStep =
  | CreatePendingClusterAction
  | PromoteAction
  | DeleteClusterAction
  | MeasureAnalysisAction
  | FreeWorkersAction
  | RestoreWorkerFloorsAction
  | EnsureGatewayStep
  | EnsureServeServiceStep
  | CreateRouteStep
  | PatchRouteWeightsStep
  | PutServeConfigStep
  | SetHeadServeLabelStep
  | ClearSteeringStep
  | RecordEventsStep;

/** What a pass plan reads of the spec. */
export interface PassSpec {
  /** `spec.upgradeStrategy.type`. */
  readonly strategy?: UpgradeStrategyType;
  /** The route attaches to a Gateway the user names (`spec.rayshift.gatewayRef`), which rayshift never creates. */
  readonly userGateway: boolean;
  /** `spec.serveConfigV2` ('' when unset: nothing is deployed, as with KubeRay). */
  readonly serveConfig: string;
  /** `spec.excludeHeadPodFromServeSvc`. */
  readonly excludeHeadPodFromServeSvc: boolean;
}

/** What the status-write choice reads besides the decision. */
export interface PersistInput {
  /** The engine status stored before the pass. */
  readonly stored: RayServiceStatus | undefined;
  /** The stored status is the one this process wrote last. */
  readonly storedIsOwn: boolean;
  /** The status the pass would write shows other Serve replicas on either side than the stored one. */
  readonly replicasDiffer: boolean;
  /** The pass's time (epoch ms). */
  readonly now: number;
  /** When the stored status was written (its `lastUpdateTime`, epoch ms); undefined when unknown. */
  readonly lastWriteAt?: number;
  /** The status the pass would write differs from the stored one only in the Serve replicas it shows. */
  readonly onlyReplicasDiffer: boolean;
}

/**
 * How long after a status write a change of only the Serve replicas the status shows waits for the
 * next write (the replicas are shown to people, never read back by a decision): during an upgrade
 * each capacity step changes both sides' replicas several times within a second or two, and a
 * write per change was the larger part of the operator's status writes (issue 37).
 */
export const REPLICAS_REFRESH_MS = 5_000;

/** Whether a pass writes its status now or holds it in memory, and why. */
export interface PersistChoice {
  readonly status: 'write' | 'hold';
  /** The hold keeps a step's confirmation (`statusWrite`'s rule), not only a change of the replicas shown. */
  readonly confirmationHeld: boolean;
  /** When a held change of the replicas shown is written at the latest (epoch ms). */
  readonly until?: number;
}

/** A cluster's Serve replicas as `ready/target`, when its head is ready (before, Serve's 0/0 means "unknown"). */
export function serveReplicasOf(name: string | undefined, clusters: readonly ObservedCluster[]): { readyReplicas: number; targetReplicas: number } | undefined {
  const c = clusters.find((x) => x.name === name && x.headReady);
  return c && { readyReplicas: c.readyReplicas, targetReplicas: c.targetReplicas };
}

/**
 * Whether the pass writes its status now: `statusWrite`'s rule, except for the Serve replicas the
 * status shows. A change of either side's replicas is written even in a pass that would hold a
 * confirmation (the replicas are in the status for people to watch), and a status whose only
 * change is the replicas is written too; both at most once per `REPLICAS_REFRESH_MS` after the
 * stored status was written, otherwise held `until` then (the next write carries them sooner).
 */
export function persistChoice(decision: RayServiceDecision, input: PersistInput): PersistChoice {
  const write: PersistChoice = { status: 'write', confirmationHeld: false };
  const refreshed = (confirmationHeld: boolean): PersistChoice => {
    const until = input.lastWriteAt === undefined ? undefined : input.lastWriteAt + REPLICAS_REFRESH_MS;
    return until !== undefined && input.now < until ? { status: 'hold', confirmationHeld, until } : write;
  };
  if (statusWrite(decision, input.stored, input.storedIsOwn, input.now) === 'write') return input.onlyReplicasDiffer ? refreshed(false) : write;
  return input.replicasDiffer ? refreshed(true) : { status: 'hold', confirmationHeld: true };
}

/** The steps of a pass (see the file comment), in the order they are carried out. */
export function planPass(decision: RayServiceDecision, obs: RayServiceObservation, spec: PassSpec): PassStep[] {
  const managed = routeManagedFor(spec.strategy, decision.status.upgradeStrategy);
  const applied = (name: string) => obs.clusters.find((c) => c.name === name)?.appliedServeConfig;
  // The decision's Events first, right after the status that holds the decision: an action of the
  // pass that fails (a Serve PUT timing out, a conflicting route patch) must not lose them, since the
  // next pass, deciding from that status, does not decide them again.
  const steps: PassStep[] = decision.events.length > 0 ? [{ type: 'recordEvents' }] : [];
  for (const action of decision.actions) {
    switch (action.type) {
      case 'createPendingCluster':
        steps.push(action, ...(managed ? [{ type: 'ensureServeService' as const, cluster: action.name }] : []));
        break;
      case 'setTargetCapacity': {
        const config = serveConfigForCapacity(action, decision.status, applied(action.clusterName), spec.serveConfig);
        steps.push(...servePut(action.clusterName, config, action.percent, obs.clusters, false));
        break;
      }
      case 'setTrafficWeights': {
        steps.push(...routeSteps(backendsOf(action), obs.route !== undefined, spec.userGateway));
        break;
      }
      default:
        steps.push(action);
    }
  }
  const active = obs.clusters.find((c) => c.name === decision.status.activeClusterName);
  const serving = active && { headReady: active.headReady, targetCapacity: active.targetCapacity, appliedConfig: active.appliedServeConfig };
  const put = inPlaceServeConfig(decision, obs.goalSpecHash, serving, spec.serveConfig);
  if (put) steps.push(...servePut(put.cluster, put.config, put.percent, obs.clusters, true));
  for (const c of obs.clusters) steps.push({ type: 'setHeadServeLabel', cluster: c.name, value: headServeLabel(c, spec.excludeHeadPodFromServeSvc) });
  const spent = spentSteeringAnnotations(steeringAnnotationsOf(obs), decision.status);
  if (spent.length > 0) steps.push({ type: 'clearSteering', annotations: spent });
  return steps;
}

/**
 * The steps that put `backends` on the route: the Gateway (unless the user's) and each backend's
 * serve Service first (`createPendingCluster` is not emitted again once the RayCluster exists, so a
 * crash between creating it and its Service would leave the route pointing at no Service), then
 * the route itself, created when absent.
 */
export function routeSteps(backends: readonly RouteBackend[], routeExists: boolean, userGateway: boolean): PassStep[] {
  return [
    ...(userGateway ? [] : [{ type: 'ensureGateway' as const }]),
    ...backends.map((b) => ({ type: 'ensureServeService' as const, cluster: b.cluster })),
    routeExists ? { type: 'patchRouteWeights', backends } : { type: 'createRoute', backends },
  ];
}

/** A Serve PUT: none for an empty config (a RayService without `serveConfigV2` has nothing to deploy, as KubeRay sends none). */
function servePut(clusterName: string, config: string, percent: number, clusters: readonly ObservedCluster[], inPlace: boolean): PutServeConfigStep[] {
  if (config === '') return [];
  const cluster = clusters.find((c) => c.name === clusterName);
  return [{ type: 'putServeConfig', clusterName, config, percent, record: cluster !== undefined && cluster.appliedServeConfig !== config, inPlace }];
}

/** The steering annotations the observation's controls stand for (abort and promote are `"true"` annotations). */
function steeringAnnotationsOf(obs: RayServiceObservation): Record<string, string> {
  return { ...(obs.controls?.abort ? { [ABORT_ANNOTATION]: 'true' } : {}), ...(obs.controls?.promoteNow ? { [PROMOTE_ANNOTATION]: 'true' } : {}) };
}

/**
 * The steps of a deletion before the finalizer is released: the `finalizationActions`' weights
 * patched onto the route. Without a route no request reaches either cluster: nothing to move, and
 * nothing is created while the service goes.
 */
export function finalizationSteps(actions: readonly SetTrafficWeightsAction[], routeExists: boolean): PassStep[] {
  if (!routeExists) return [];
  return actions.map((a) => ({ type: 'patchRouteWeights', backends: backendsOf(a) }));
}

function backendsOf(a: SetTrafficWeightsAction): RouteBackend[] {
  return [{ cluster: a.activeCluster, weight: a.active }, ...(a.pendingCluster !== undefined ? [{ cluster: a.pendingCluster, weight: a.pending }] : [])];
}
