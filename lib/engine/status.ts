/**
 * The RayService engine's status: its intent (names, capacities, weights) and its clock (times in
 * epoch ms). Executors persist it verbatim (it is plain JSON) and pass it back on the next run.
 */
import type { UpgradeStrategyType } from '../spec/rayservice';
import type { AnalysisStatus } from './analysis-status';
import type { CapacityRecordOutcome } from './capacity-preflight';
import type { FreeingRecord } from './worker-freeing';
import type { SurgeUnschedulableRecord } from './surge-scheduling';

/** Coarse lifecycle phase; `Failed`: an upgrade `capacityPolicy: fail` refused to start (the active cluster still serves). */
export type RayServicePhase = 'Initializing' | 'Running' | 'Upgrading' | 'Paused' | 'RollingBack' | 'Failed';

/** Why a rollback runs. */
export type RollbackReason =
  /** The goal spec went back to the active cluster's spec (KubeRay: "Goal state reverted…"). */
  | 'SpecReverted'
  /** The goal spec changed to a third spec; a new upgrade starts once the rollback completes. */
  | 'SpecChanged'
  /** `controls.abort` was set. */
  | 'Aborted'
  /** No progress for `progressDeadlineSeconds`. */
  | 'ProgressDeadlineExceeded'
  /** The analysis failed with `onFailure: rollback`. */
  | 'AnalysisFailed'
  /** The analysis failed with `onFailure: abort`: traffic goes back at once. */
  | 'AnalysisAborted'
  /** The new cluster's Pods stayed Unschedulable for `surgeUnschedulableSeconds` under `capacityPolicy: fail`. */
  | 'SurgeUnschedulable';

/** Rollbacks whose spec is given up: they run to the end whatever the goal does, and the spec is not retried while it stays the goal. */
const REJECTING_ROLLBACKS: ReadonlySet<string> = new Set<RollbackReason>(['Aborted', 'ProgressDeadlineExceeded', 'AnalysisFailed', 'AnalysisAborted', 'SurgeUnschedulable']);

/** True when a rollback (or a blue/green drop) for `reason` gives its spec up. */
export function rejectsSpec(reason: string | undefined): reason is RollbackReason {
  return reason !== undefined && REJECTING_ROLLBACKS.has(reason);
}

/**
 * Machine-readable reason for the current phase (a condition reason). After an aborted or
 * timed-out upgrade, `Aborted` / `ProgressDeadlineExceeded` stays the reason while its spec is the goal.
 */
export type RayServiceReason =
  | 'UpToDate'
  | 'UpgradeDisabled'
  | 'SpecRejected'
  | 'CreatingCluster'
  | 'WaitingForHead'
  | 'WaitingForCapacity'
  | 'WaitingForRoute'
  | 'WaitingForInterval'
  | 'WaitingForAnalysis'
  | 'DrainingTraffic'
  /** shrinkFirst: the next capacity step waits until the giving cluster's freed worker Pods are gone (`worker-freeing.ts`). */
  | 'FreeingWorkers'
  | 'Migrating'
  | 'Paused'
  | 'Promoted'
  | 'UpgradeCancelled'
  | 'RollbackComplete'
  | 'RollbackDeadlineExceeded'
  /** `capacityPolicy: fail` refused the upgrade: its first Pods do not fit the cluster (`capacity` says why). */
  | 'InsufficientCapacity'
  /** `capacityPolicy: fail` or `shrinkFirst` holds the upgrade: the cluster could not be read for its preflight, which runs again (`capacity` says why). */
  | 'CapacityUnknown'
  | RollbackReason;

/**
 * The reasons of an upgrade waiting on Serve or on the Pods behind it (worker Pods, which the
 * operator does not watch): the service is polled, and the pending cluster's Pods are read for the
 * scheduler's verdict (`needsSurgeScheduling`).
 */
export const WAITING_ON_SERVE: ReadonlySet<RayServiceReason> = new Set<RayServiceReason>(['CreatingCluster', 'WaitingForHead', 'WaitingForCapacity', 'FreeingWorkers']);

/** The capacity preflight run when the upgrade started (or was refused). */
export interface CapacityRecord {
  readonly outcome: CapacityRecordOutcome;
  /** What did not fit then, or why the cluster could not be read; absent when it fit. */
  readonly message?: string;
  /** When the preflight ran (epoch ms). */
  readonly at: number;
  /** `capacityPolicy: shrinkFirst` met a surge that fits only after the old cluster shrinks: the upgrade runs without a surge. */
  readonly shrinkFirst?: true;
  /** The worker Pods a shrinkFirst round named for deletion and still waits for (`worker-freeing.ts`). */
  readonly freeing?: FreeingRecord;
}

/** A retired cluster and the time (epoch ms) it is due for deletion. */
export interface ScheduledDeletion {
  readonly name: string;
  readonly at: number;
}

/** Status of one RayService as the engine sees it. */
export interface RayServiceStatus {
  readonly phase: RayServicePhase;
  readonly reason: RayServiceReason;
  /** The serving cluster. */
  readonly activeClusterName?: string;
  /** The cluster being brought up (upgrade or first creation). */
  readonly pendingClusterName?: string;
  /** Spec hash the pending cluster is created from. */
  readonly pendingSpecHash?: string;
  /** Strategy of the upgrade in flight (fixed when it starts). */
  readonly upgradeStrategy?: UpgradeStrategyType;
  /** Intended Serve `target_capacity` of the active cluster. */
  readonly activeTargetCapacity: number;
  /** Intended Serve `target_capacity` of the pending cluster. */
  readonly pendingTargetCapacity: number;
  /** Intended route weight of the active cluster. */
  readonly activeWeight: number;
  /** Intended route weight of the pending cluster; `activeWeight + pendingWeight = 100`. */
  readonly pendingWeight: number;
  /** False from a weight change until the route is observed carrying it. */
  readonly trafficConfirmed: boolean;
  /** When the last weight change was first observed applied (epoch ms). */
  readonly lastTrafficMigratedTime?: number;
  /** Last time the migration moved (a decision or a confirmation), epoch ms; the progress deadline counts from here. */
  readonly lastProgressTime?: number;
  /** When the upgrade in flight started, epoch ms. */
  readonly upgradeStartedAt?: number;
  /** Set while a rollback runs. */
  readonly rollback?: RollbackReason;
  /** A spec that was aborted or timed out; it is not retried while it stays the goal. */
  readonly rejectedSpecHash?: string;
  /** Retired clusters awaiting deletion. */
  readonly deletions: readonly ScheduledDeletion[];
  /** When the engine next needs to run without a new observation (epoch ms). */
  readonly nextStepAt?: number;
  /** The analysis runs and verdicts, when the upgrade options have an analysis. */
  readonly analysis?: AnalysisStatus;
  /** The capacity preflight of the upgrade under way (or refused), when the executor observed one; cleared once the goal is the active cluster's spec. */
  readonly capacity?: CapacityRecord;
  /** The pending cluster's Pods the scheduler marks Unschedulable, while there are some. */
  readonly surgeUnschedulable?: SurgeUnschedulableRecord;
}

/** One-line human summary of a status, for logs and the CLI. */
export function describeStatus(s: RayServiceStatus): string {
  const clusters = s.pendingClusterName === undefined
    ? `${s.activeClusterName ?? '-'} @${s.activeTargetCapacity}%`
    : `${s.activeClusterName ?? '-'} @${s.activeTargetCapacity}% w${s.activeWeight} -> ${s.pendingClusterName} @${s.pendingTargetCapacity}% w${s.pendingWeight}`;
  return `${s.phase}/${s.reason}: ${clusters}`;
}

/**
 * True when nothing is left to do: one cluster serves, nothing is pending or scheduled for deletion,
 * no upgrade waits for its preflight to read the cluster (`CapacityUnknown`), and the last pass
 * carried out no action.
 */
export function isSettled(status: RayServiceStatus, actionsCarriedOut: number): boolean {
  return actionsCarriedOut === 0 && status.phase !== 'Initializing' && status.reason !== 'CapacityUnknown' && status.activeClusterName !== undefined && status.pendingClusterName === undefined && status.deletions.length === 0;
}

/** True when the engine gave the goal spec (its cluster hash `goalSpecHash`) up: it stays rejected until the spec changes. */
export function isGoalGivenUp(status: RayServiceStatus, goalSpecHash: string): boolean {
  return (rejectsSpec(status.reason) || status.reason === 'RollbackDeadlineExceeded' || status.phase === 'Failed') && status.rejectedSpecHash === goalSpecHash;
}
