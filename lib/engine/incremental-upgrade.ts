/**
 * `NewClusterWithIncrementalUpgrade` while both clusters exist: KubeRay's observable sequence
 * (see `migration-steps.ts`) with these deliberate differences:
 *
 * - A traffic step is due exactly at `lastTrafficMigratedTime + intervalSeconds` in milliseconds
 *   and never earlier (KubeRay stores 1 s timestamps and polls every 2 s). `lastTrafficMigratedTime`
 *   is stamped when the new weights are first observed on a ready route, and one timestamp covers
 *   both directions and successive upgrades, so any two weight changes are at least an interval apart.
 * - Traffic only moves onto capacity that is ready: the receiving cluster's `target_capacity` is
 *   acknowledged by Serve, its apps are RUNNING and its ready replicas reach the target replicas
 *   (KubeRay moves traffic as soon as the apps are RUNNING).
 * - Every decision waits until the previous one is observed in effect (route, target capacities).
 * - A capacity is lowered only one interval after traffic last moved (not at once, as KubeRay
 *   does): a gateway reports a route accepted before its data plane applies the weights (Traefik
 *   still sent requests to the old cluster ~0.7 s after accepting 0/100), and those requests
 *   would meet replicas that are gone. Promote-now skips the wait.
 * - Under `capacityPolicy: shrinkFirst`, when the surge fits only once the old cluster shrinks
 *   (`capacity.shrinkFirst`), both directions run without a surge (`migration-steps.ts`), and each
 *   take first frees the giver's idle worker Pods and waits until they are gone (`worker-freeing.ts`).
 * - Pause, promote-now and abort inputs, and a progress deadline that rolls back automatically;
 *   under `capacityPolicy: fail`, so does a surge Unschedulable past its bound (`surge-scheduling.ts`).
 * - An optional analysis (`analysis-gate.ts`) holds each traffic step after the first until its
 *   run at the current weights passed, and pauses, rolls back or aborts when a run fails.
 * - A rollback whose pending head is not ready writes the pending capacity off (it serves nothing
 *   and cannot take a `target_capacity`), so the rollback completes where KubeRay stalls with the
 *   capacities summing over 100. Only in that state can the pending weight exceed its capacity.
 */
import { endAnalysis, runAnalysis, stepGateClosed } from './analysis-gate';
import type { EngineRun } from './engine-run';
import { nextForwardMove, nextRollbackMove } from './migration-steps';
import type { ObservedCluster } from './observation';
import { rejectsSpec, type RayServiceStatus, type RollbackReason } from './status';
import { routeConverged } from './route-convergence';
import { judgeSurgeScheduling } from './surge-scheduling';
import { freeingWait } from './worker-freeing';

/** Runs one step of an incremental upgrade; `r.active` is observed. */
export function runIncrementalUpgrade(r: EngineRun): void {
  const s = r.s;
  const active = r.active!;
  r.resumeIfPaused();
  updateRollback(r, active);
  const routeOk = routeConverged(r);
  if (!s.trafficConfirmed && routeOk) {
    s.trafficConfirmed = true;
    s.lastTrafficMigratedTime = r.now;
    s.lastProgressTime = r.now;
  }
  const surgeFailed = judgeSurgeScheduling(r);
  if (s.rollback === undefined) {
    const failure = runAnalysis(r);
    if (failure === 'pause') {
      s.phase = 'Paused';
      s.reason = 'AnalysisFailed';
      return;
    }
    if (failure !== undefined) startRollback(r, failure);
    else if (surgeFailed) startRollback(r, 'SurgeUnschedulable');
  }
  if (s.rollback === undefined) {
    if (r.obs.controls?.paused === true) {
      s.phase = 'Paused';
      s.reason = 'Paused';
      return;
    }
    if (r.now < r.progressDeadline()) {
      s.phase = 'Upgrading';
      forward(r, active, routeOk);
      return;
    }
    startRollback(r, 'ProgressDeadlineExceeded');
  }
  rollBack(r, active, routeOk);
}

/** KubeRay's rollback trigger (goal hash vs cluster hashes) plus sticky abort and deadline rollbacks. */
function updateRollback(r: EngineRun, active: ObservedCluster): void {
  const s = r.s;
  const sticky = rejectsSpec(s.rollback);
  if (r.obs.controls?.abort === true && !sticky) {
    if (s.rollback === undefined) startRollback(r, 'Aborted');
    else s.rollback = 'Aborted';
    return;
  }
  if (sticky) return;
  const goal = r.obs.goalSpecHash;
  if (goal === s.pendingSpecHash) {
    if (s.rollback !== undefined) {
      s.rollback = undefined;
      s.lastProgressTime = r.now;
    }
    return;
  }
  const reason: RollbackReason = goal === active.specHash ? 'SpecReverted' : 'SpecChanged';
  if (s.rollback === undefined) startRollback(r, reason);
  else s.rollback = reason;
}

function startRollback(r: EngineRun, reason: RollbackReason): void {
  r.s.rollback = reason;
  r.s.lastProgressTime = r.now;
}

type Wait = 'CreatingCluster' | 'WaitingForRoute' | 'WaitingForHead' | 'WaitingForCapacity' | 'WaitingForInterval' | 'WaitingForAnalysis' | 'DrainingTraffic' | 'FreeingWorkers';

function forward(r: EngineRun, active: ObservedCluster, routeOk: boolean): void {
  const wait = forwardStep(r, active, routeOk);
  if (wait !== undefined) r.s.reason = wait;
}

/** Takes the next forward step, or returns what it waits for. */
function forwardStep(r: EngineRun, active: ObservedCluster, routeOk: boolean): Wait | undefined {
  const { s, opts } = r;
  const pending = r.pending;
  if (pending === undefined) return 'CreatingCluster';
  if (!routeOk) return 'WaitingForRoute';
  if (!pending.headReady) return 'WaitingForHead';
  if (r.acked(active) !== s.activeTargetCapacity || r.acked(pending) !== s.pendingTargetCapacity) return 'WaitingForCapacity';
  const promoteNow = r.obs.controls?.promoteNow === true;
  const zeroSurge = s.capacity?.shrinkFirst === true;
  const move = nextForwardMove(s, opts.maxSurgePercent, opts.stepSizePercent, promoteNow, zeroSurge);
  s.reason = 'Migrating';
  switch (move.kind) {
    case 'shift-traffic': {
      const wait = trafficWait(r, pending, s.pendingTargetCapacity, promoteNow);
      if (wait !== undefined) return wait;
      if (stepGateClosed(r)) return 'WaitingForAnalysis';
      s.pendingWeight = move.pendingWeight;
      s.activeWeight = 100 - move.pendingWeight;
      s.trafficConfirmed = false;
      break;
    }
    case 'scale-active': {
      const wait = intervalWait(r, 'DrainingTraffic', promoteNow);
      if (wait !== undefined) return wait;
      applyCapacityMove(s, move);
      break;
    }
    case 'scale-pending': {
      const wait = zeroSurge ? freeingWait(r, active) : undefined;
      if (wait !== undefined) return wait;
      applyCapacityMove(s, move);
      break;
    }
    case 'promote':
      if (stepGateClosed(r)) return 'WaitingForAnalysis';
      r.retire(active.name);
      s.activeClusterName = pending.name;
      s.activeTargetCapacity = s.pendingTargetCapacity;
      s.activeWeight = 100;
      endUpgrade(r);
      s.reason = 'Promoted';
      break;
  }
  r.decide();
  return undefined;
}

/** Records a capacity move (either direction) as the new intended target capacity of its side. */
function applyCapacityMove(
  s: EngineRun['s'],
  move: { readonly kind: 'scale-active'; readonly activeTargetCapacity: number } | { readonly kind: 'scale-pending'; readonly pendingTargetCapacity: number },
): void {
  if (move.kind === 'scale-active') s.activeTargetCapacity = move.activeTargetCapacity;
  else s.pendingTargetCapacity = move.pendingTargetCapacity;
}

function rollBack(r: EngineRun, active: ObservedCluster, routeOk: boolean): void {
  const s = r.s;
  s.phase = 'RollingBack';
  const reachable = r.pending !== undefined && r.pending.headReady;
  if (!reachable && s.pendingTargetCapacity !== 0) {
    s.pendingTargetCapacity = 0;
    r.decide();
  }
  const wait = rollbackStep(r, active, routeOk, reachable);
  if (wait !== undefined) s.reason = r.now >= r.progressDeadline() ? 'RollbackDeadlineExceeded' : wait;
}

/** Takes the next rollback step, or returns what it waits for. */
function rollbackStep(r: EngineRun, active: ObservedCluster, routeOk: boolean, pendingReachable: boolean): Wait | undefined {
  const { s, opts } = r;
  if (!routeOk) return 'WaitingForRoute';
  if (r.acked(active) !== s.activeTargetCapacity) return 'WaitingForCapacity';
  if (pendingReachable && r.acked(r.pending!) !== s.pendingTargetCapacity) return 'WaitingForCapacity';
  // An analysis abort takes all the traffic the old cluster can carry back at once, and skips the intervals.
  const atOnce = s.rollback === 'AnalysisAborted';
  const zeroSurge = s.capacity?.shrinkFirst === true;
  const move = nextRollbackMove(s, opts.maxSurgePercent, atOnce ? 100 : opts.stepSizePercent, zeroSurge);
  s.reason = 'Migrating';
  switch (move.kind) {
    case 'shift-traffic': {
      const wait = trafficWait(r, active, s.activeTargetCapacity, atOnce);
      if (wait !== undefined) return wait;
      s.activeWeight = move.activeWeight;
      s.pendingWeight = 100 - move.activeWeight;
      s.trafficConfirmed = false;
      break;
    }
    case 'scale-pending': {
      const wait = intervalWait(r, 'DrainingTraffic', atOnce);
      if (wait !== undefined) return wait;
      applyCapacityMove(s, move);
      break;
    }
    case 'scale-active': {
      const wait = zeroSurge ? freeingWait(r, pendingReachable ? r.pending : undefined) : undefined;
      if (wait !== undefined) return wait;
      applyCapacityMove(s, move);
      break;
    }
    case 'complete': {
      const rejected = rejectsSpec(s.rollback) ? s.rollback : undefined;
      if (rejected !== undefined) s.rejectedSpecHash = s.pendingSpecHash;
      if (s.pendingClusterName !== undefined) r.retire(s.pendingClusterName);
      endUpgrade(r);
      s.reason = rejected ?? 'RollbackComplete';
      break;
    }
  }
  r.decide();
  return undefined;
}

/**
 * What a traffic step onto `receiver` waits for: its capacity to be ready, then the interval since
 * the last weight change of any upgrade (skipped by promote-now; the service's first step is immediate).
 */
function trafficWait(r: EngineRun, receiver: ObservedCluster, capacity: number, promoteNow: boolean): Wait | undefined {
  if (!r.ready(receiver, capacity)) return 'WaitingForCapacity';
  return intervalWait(r, 'WaitingForInterval', promoteNow);
}

/**
 * When a traffic step is due: one interval after the traffic last moved. The one rule of the
 * engine's wait (`intervalWait`), the lateness of a step taken (`trafficStepDueAt`) and the next
 * step's time the progress views show (`nextTrafficStepDue`).
 */
export function stepDueAfter(lastMove: number, intervalMs: number): number {
  return lastMove + intervalMs;
}

/**
 * When the next traffic step of an upgrade in flight is due (epoch ms), for the views that count
 * down to it (`rayshift status`, the API server's `next_traffic_step_time`, the dashboard): one
 * interval after the last weight change once the route carries it, or (while the route is being
 * confirmed) after the decision, which precedes the confirmation by milliseconds. Undefined while
 * no step waits for the clock (no upgrade, paused, rolling back).
 */
export function nextTrafficStepDue(s: Pick<RayServiceStatus, 'phase' | 'pendingClusterName' | 'trafficConfirmed' | 'lastTrafficMigratedTime' | 'lastProgressTime'> | undefined, intervalMs: number | undefined): number | undefined {
  if (!s || s.pendingClusterName === undefined || intervalMs === undefined || s.phase !== 'Upgrading') return undefined;
  const from = s.trafficConfirmed ? s.lastTrafficMigratedTime : s.lastProgressTime;
  return from === undefined ? undefined : stepDueAfter(from, intervalMs);
}

/**
 * Waits (as `reason`) until one interval after the last weight change of any upgrade, unless
 * skipped by promote-now or no weight ever changed.
 */
function intervalWait(r: EngineRun, reason: 'WaitingForInterval' | 'DrainingTraffic', promoteNow: boolean): Wait | undefined {
  const last = r.s.lastTrafficMigratedTime;
  if (promoteNow || last === undefined) return undefined;
  const due = stepDueAfter(last, r.opts.intervalSeconds * 1000);
  if (r.now >= due) return undefined;
  r.wake(due);
  return reason;
}

/** Clears the pending side after a promotion or a completed rollback. */
function endUpgrade(r: EngineRun): void {
  endAnalysis(r);
  r.endPending();
  r.s.rollback = undefined;
  r.s.pendingWeight = 0;
}
