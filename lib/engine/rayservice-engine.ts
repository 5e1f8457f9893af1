/**
 * The RayService engine: a pure function from (observation, options, now) to the actions to take
 * now, the next status, and the time it must run again. No I/O, no timers, no clock reads.
 *
 * Executors call it when the observation changes, after applying the returned actions, and at
 * `nextStepAt`. Actions in one result are independent and are applied in the order given.
 */
import type { RayServiceAction } from './actions';
import { runBlueGreenUpgrade } from './blue-green-upgrade';
import { converge } from './convergence';
import { scheduleDeletions } from './deletions';
import { EngineRun, type DraftStatus } from './engine-run';
import { runIncrementalUpgrade } from './incremental-upgrade';
import type { RayServiceObservation } from './observation';
import type { RolloutEvent } from './rbg-coordination-types';
import { assertResolvedUpgradeOptions, type ResolvedUpgradeOptions } from '../spec/rayservice';
import { runServiceCreation } from './service-creation';
import type { RayServiceStatus } from './status';
import { runSteadyState } from './steady-state';

/** Result of one engine run. */
export interface RayServiceDecision {
  /** Actions to carry out now, in order. */
  readonly actions: readonly RayServiceAction[];
  /** Events to record once the status is persisted (analysis verdicts reached in this run). */
  readonly events: readonly RolloutEvent[];
  /** Status to persist and pass back on the next run. */
  readonly status: RayServiceStatus;
  /** When to run again without a new observation (epoch ms); `undefined`: only on a new observation. */
  readonly nextStepAt?: number;
}

/** Runs the RayService engine once at time `now` (epoch ms). */
export function nextRayService(obs: RayServiceObservation, opts: ResolvedUpgradeOptions, now: number): RayServiceDecision {
  assertResolvedUpgradeOptions(opts);
  const s = draftOf(obs.status ?? adoptStatus(obs));
  const r = new EngineRun(obs, opts, now, s);
  if (r.active === undefined) {
    s.activeClusterName = undefined;
    runServiceCreation(r);
  } else if (s.pendingClusterName === undefined) runSteadyState(r);
  else if (s.upgradeStrategy === 'NewCluster') runBlueGreenUpgrade(r);
  else runIncrementalUpgrade(r);
  converge(r);
  scheduleDeletions(r);
  if (s.pendingClusterName !== undefined && s.phase !== 'Paused' && s.phase !== 'Initializing') {
    const deadline = r.progressDeadline();
    if (deadline > now) r.wake(deadline);
  }
  if (r.decided && r.actions.length === 0) r.wakeAt = now;
  s.nextStepAt = r.wakeAt === Infinity ? undefined : r.wakeAt;
  return { actions: r.actions, events: r.events, status: s, nextStepAt: s.nextStepAt };
}

/** A mutable copy with every field present in one fixed order (one object shape for the whole engine). */
function draftOf(p: RayServiceStatus): DraftStatus {
  return {
    phase: p.phase,
    reason: p.reason,
    activeClusterName: p.activeClusterName,
    pendingClusterName: p.pendingClusterName,
    pendingSpecHash: p.pendingSpecHash,
    upgradeStrategy: p.upgradeStrategy,
    activeTargetCapacity: p.activeTargetCapacity,
    pendingTargetCapacity: p.pendingTargetCapacity,
    activeWeight: p.activeWeight,
    pendingWeight: p.pendingWeight,
    trafficConfirmed: p.trafficConfirmed,
    lastTrafficMigratedTime: p.lastTrafficMigratedTime,
    lastProgressTime: p.lastProgressTime,
    upgradeStartedAt: p.upgradeStartedAt,
    rollback: p.rollback,
    rejectedSpecHash: p.rejectedSpecHash,
    deletions: p.deletions,
    nextStepAt: p.nextStepAt,
    analysis: p.analysis,
    capacity: p.capacity,
    surgeUnschedulable: p.surgeUnschedulable,
  };
}

/**
 * The status assumed on the first run: the cluster the Services select (or the only cluster, or
 * one built from the goal spec) is adopted as active; every other owned cluster gets retired.
 */
export function adoptStatus(obs: RayServiceObservation): RayServiceStatus {
  const clusters = obs.clusters;
  const adopted = clusters.find((c) => c.name === obs.servingCluster)
    ?? (clusters.length === 1 ? clusters[0] : clusters.find((c) => c.specHash === obs.goalSpecHash));
  return {
    phase: adopted === undefined ? 'Initializing' : 'Running',
    reason: adopted === undefined ? 'CreatingCluster' : 'UpToDate',
    activeClusterName: adopted?.name,
    activeTargetCapacity: adopted === undefined ? 0 : 100,
    pendingTargetCapacity: 0,
    activeWeight: 100,
    pendingWeight: 0,
    trafficConfirmed: true,
    deletions: [],
  };
}
