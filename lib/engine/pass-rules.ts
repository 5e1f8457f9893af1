/**
 * The rules of one reconcile pass around the engine's decision: what must be persisted now and
 * what may wait, what a deletion does first, when the service next needs attention, which Serve
 * config a cluster gets, and when a traffic step was due (spent steering requests are the steering
 * rules', lib/engine/steering.ts). Pure: the reconciler (lib/runtime/rayservice/reconciler.ts)
 * observes, asks these, and executes.
 */
import { RayServiceAction, SetTrafficWeightsAction } from './actions';
import { RayServiceDecision } from './rayservice-engine';
import { RayServiceStatus, WAITING_ON_SERVE } from './status';
import { canonicalJson } from '../spec/canonical-json';
import { stepDueAfter } from './incremental-upgrade';

/**
 * How long after a step the route may still be unconfirmed (the Gateway has not reported the new
 * generation) before the status says `WaitingForRoute`; until then the step's own status stands.
 */
export const ROUTE_CONFIRMATION_GRACE_MS = 5_000;
/** Engine fields a confirmation between two steps changes; alone, they are kept in memory until the next write. */
const CONFIRMATION_FIELDS = new Set(['trafficConfirmed', 'lastTrafficMigratedTime', 'lastProgressTime', 'reason', 'nextStepAt']);
/** Actions whose effect arrives as a watch event of an object the operator watches. */
const WATCHABLE_ACTIONS = new Set<RayServiceAction['type']>(['createPendingCluster', 'setTrafficWeights', 'promote', 'deleteCluster']);

/**
 * True when `next` differs from the stored `stored` only by the confirmation of a step: the
 * Gateway has yet to report the route's new generation (for at most the grace), or the route was
 * seen carrying the weights, so the step's time is stamped and the interval runs (before a traffic
 * step, or before a capacity drop). Such a status is kept in memory and written with the next step
 * (one status write per step, not three). A crash loses only the stamp, which the next run takes
 * again later: a step can then come late, never early.
 */
export function isOnlyConfirmation(stored: RayServiceStatus, next: RayServiceStatus, now: number): boolean {
  if (next.pendingClusterName === undefined) return false;
  const routeWait = next.reason === 'WaitingForRoute' && stored.reason === 'Migrating' && now < (stored.lastProgressTime ?? 0) + ROUTE_CONFIRMATION_GRACE_MS;
  if (next.reason !== 'WaitingForInterval' && next.reason !== 'DrainingTraffic' && !routeWait) return false;
  const a = stored as unknown as Record<string, unknown>;
  const b = next as unknown as Record<string, unknown>;
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (!CONFIRMATION_FIELDS.has(k) && canonicalJson(a[k]) !== canonicalJson(b[k])) return false;
  }
  return true;
}

/**
 * Whether a pass writes its status now (`write`) or keeps it in memory until the next write
 * (`hold`): held only when the pass carries out no action, the stored status is the one this
 * process wrote last (after a restart the confirmation is written, so a crash loop cannot keep
 * re-stamping a step that never comes due), and the new status only confirms a step
 * (`isOnlyConfirmation`).
 */
export function statusWrite(decision: RayServiceDecision, stored: RayServiceStatus | undefined, storedIsOwn: boolean, now: number): 'write' | 'hold' {
  const hold = storedIsOwn && decision.actions.length === 0 && stored !== undefined && isOnlyConfirmation(stored, decision.status, now);
  return hold ? 'hold' : 'write';
}

/**
 * What deleting a RayService does before its finalizer is released: with an upgrade in flight,
 * every request goes back to the active cluster (the safe state; both clusters are deleted with
 * the service, the pending one may not be serving yet). Nothing otherwise.
 */
export function finalizationActions(status: Partial<RayServiceStatus>): SetTrafficWeightsAction[] {
  if (status.activeClusterName === undefined || status.pendingClusterName === undefined) return [];
  return [{ type: 'setTrafficWeights', activeCluster: status.activeClusterName, active: 100, pending: 0 }];
}

/** What `nextAttentionAt` needs besides the decision. */
export interface AttentionInput {
  /** The pass's time (epoch ms). */
  readonly now: number;
  /** The traffic step interval, ms. */
  readonly intervalMs: number;
  /** The pass kept a step's confirmation in memory (`statusWrite` said `hold`) instead of writing it. */
  readonly held: boolean;
  /** Watch events of the objects the actions write wake the service (an operator). */
  readonly watchDriven: boolean;
  /** Poll period while waiting on Serve, ms. */
  readonly pollMs: number;
  /** When a held change of the Serve replicas the status shows is due to be written (`PersistChoice.until`). */
  readonly replicasDueAt?: number;
}

/**
 * When the service next needs a pass if no watch event brings one earlier (epoch ms; undefined:
 * only an event will). At once after actions whose effects cannot all be watched; while waiting on
 * Serve (and, without watches, on the route), one poll later; otherwise the engine's due time or
 * the route's wake-up, whichever is first. The route's wake-up: after a weight change, one
 * interval after the grace (the Gateway's acknowledgement normally wakes the service first, and the
 * step then due one interval later replaces this); while a route wait is held in memory, at the end
 * of its grace, so that it is written if it outlasts it. A held change of the replicas shown is
 * written at its due time at the latest.
 */
export function nextAttentionAt(decision: RayServiceDecision, input: AttentionInput): number | undefined {
  const { now } = input;
  if (decision.actions.length > 0 && !(input.watchDriven && decision.actions.every((a) => WATCHABLE_ACTIONS.has(a.type)))) return now;
  let routeWake: number | undefined;
  if (decision.actions.some((a) => a.type === 'setTrafficWeights')) routeWake = now + ROUTE_CONFIRMATION_GRACE_MS + input.intervalMs;
  else if (input.held && decision.status.reason === 'WaitingForRoute') routeWake = (decision.status.lastProgressTime ?? now) + ROUTE_CONFIRMATION_GRACE_MS;
  // The Gateway's acknowledgement of a route reaches only a watching driver as an event; one that
  // does not watch (Pulumi) must poll for it as it does for Serve.
  const reason = decision.status.reason;
  const polled = WAITING_ON_SERVE.has(reason) || (!input.watchDriven && reason === 'WaitingForRoute');
  const poll = polled ? now + input.pollMs : routeWake;
  const wakes = [decision.nextStepAt, poll, input.replicasDueAt].filter((t): t is number => t !== undefined);
  return wakes.length === 0 ? undefined : Math.min(...wakes);
}

/**
 * When the traffic step this pass took was due (epoch ms): one interval after the previous traffic
 * move (`stepDueAfter`). Undefined when the pass moved no traffic, or moved it for the first time (nothing before it
 * to be due after). The operator's lateness metric is the write time minus this.
 */
export function trafficStepDueAt(previous: RayServiceStatus | undefined, actions: readonly RayServiceAction[], intervalMs: number): number | undefined {
  const shift = actions.find((a) => a.type === 'setTrafficWeights');
  if (!shift || previous?.lastTrafficMigratedTime === undefined || shift.pending === previous.pendingWeight) return undefined;
  return stepDueAfter(previous.lastTrafficMigratedTime, intervalMs);
}

/**
 * The Serve config a `setTargetCapacity` PUT carries: the active cluster keeps the config it
 * serves (`applied`) while another cluster takes over, as KubeRay freezes it; every other PUT
 * carries the spec's.
 */
export function serveConfigForCapacity(action: Extract<RayServiceAction, { type: 'setTargetCapacity' }>, status: RayServiceStatus, applied: string | undefined, specConfig: string): string {
  const frozen = action.cluster === 'active' && status.pendingClusterName !== undefined ? applied : undefined;
  return frozen ?? specConfig;
}

/** What `inPlaceServeConfig` reads of the serving cluster. */
export interface ServingClusterState {
  /** Its head is ready. */
  readonly headReady: boolean;
  /** The capacity Serve reports (undefined: Serve has not answered). */
  readonly targetCapacity?: number;
  /** The Serve config last PUT to it, as recorded on it. */
  readonly appliedConfig?: string;
}

/**
 * A change of `serveConfigV2` alone needs no new cluster: with no upgrade in flight and no action
 * this pass, the serving cluster gets the spec's config in place at its current capacity (as
 * KubeRay does, for every strategy). Returns the PUT to make, or undefined. A spec that was
 * aborted or timed out is not the serving cluster's: its Serve config stays out too.
 */
export function inPlaceServeConfig(
  decision: RayServiceDecision,
  goalSpecHash: string,
  serving: ServingClusterState | undefined,
  specConfig: string,
): { readonly cluster: string; readonly config: string; readonly percent: number } | undefined {
  const s = decision.status;
  if (s.pendingClusterName !== undefined || s.activeClusterName === undefined || decision.actions.length > 0) return undefined;
  if (s.rejectedSpecHash !== undefined && s.rejectedSpecHash === goalSpecHash) return undefined;
  if (!serving?.headReady || serving.targetCapacity === undefined || serving.appliedConfig === specConfig) return undefined;
  return { cluster: s.activeClusterName, config: specConfig, percent: s.activeTargetCapacity };
}

