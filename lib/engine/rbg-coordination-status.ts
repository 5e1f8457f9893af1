/**
 * What a rayshift executor reports of one RoleBasedGroup coordination (pure types): its phase,
 * each role's rollout, the rollback, the scheduler watch's and the capacity preflight's records,
 * the analysis and the router, as written to the group's status annotation and read by the CLI,
 * the API server and the dashboard. The step that decides it is rbg-coordination.ts's
 * (`coordinationStep`), run for every rule by rbg-coordination-pass.ts.
 */
import type { AnalysisStatus } from './analysis-status';
import type { CapacityRecordOutcome } from './capacity-preflight';
import type { RouterStatus } from './rbg-router-step';

/** Where a coordination stands. */
export type CoordinationPhase = 'Progressing' | 'Complete' | 'Failed' | 'RollingBack' | 'RolledBack';

/** Where one role stands. */
export type RolePhase =
  /** Reached its final partition. */
  | 'Complete'
  /** Its workload is moving replicas up to the written partition. */
  | 'Updating'
  /** Waiting for another role before its partition may move (maxSkew). */
  | 'WaitingForSkew'
  /** More replicas unavailable than maxUnavailable: held, and it holds the others. */
  | 'Unavailable'
  /** An AffinityScheduling batch role waiting for the waves before it to be updated and ready. */
  | 'WaitingForBatch'
  /** Held before the rollout's first round: its capacity preflight could not read the cluster (`capacityPolicy: fail`). */
  | 'WaitingForCapacity'
  /** Stopped by the progress deadline. */
  | 'Stopped'
  /** Being returned to the revision before the rollout, round by round. */
  | 'RollingBack'
  /** Every replica back on the revision before the rollout. */
  | 'RolledBack';

/** One role of a coordination. */
export interface RoleRolloutStatus {
  readonly name: string;
  readonly desired: number;
  readonly updated: number;
  readonly ready: number;
  /** Partition written (replicas kept on the old revision). */
  readonly partition: number;
  /** Progress ahead of the coordination's slowest role, percent. */
  readonly skewPercent: number;
  readonly phase: RolePhase;
  /** Why the role is where it is, in words. */
  readonly reason: string;
  /** The workload's template revision its counts were last read at (its `status.updateRevision`). */
  readonly workloadRevision?: string;
  /**
   * The workload's template revision of the previous rollout: while the workload still reports it,
   * RBG has not carried this rollout's template into it and its counts are the old template's.
   */
  readonly fromWorkloadRevision?: string;
  /** During and after a rollback: replicas on the abandoned revision and on the one before the rollout. */
  readonly replicasByRevision?: { readonly abandoned: number; readonly previous: number };
}

/** The way back of a coordination (`rbg-rollback.ts`). */
export interface RollbackStatus {
  /** Why it runs: the failed gate, the deadline or the person's verb, in words. */
  readonly cause: string;
  /** Rollback rounds written (a round raises at least one partition). */
  readonly rounds: number;
  /** When it started (ISO time). */
  readonly startedAt: string;
}

/** A condition of a coordination, as Kubernetes conditions read. */
export interface CoordinationCondition {
  /** `RolledBack`: False while rollback rounds go on (reason `RollbackRound`, the round in words), True once every replica is back. */
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
}

/**
 * Pods of the coordinated roles the scheduler could not place while the rollout runs
 * (`PodScheduled=False`, reason `Unschedulable`); absent when there are none.
 */
export interface CoordinationSurgeStatus {
  /** How many. */
  readonly pods: number;
  /** Their roles. */
  readonly roles: readonly string[];
  /** When the one Unschedulable longest became so (ISO time). */
  readonly since: string;
  /** The scheduler's message on that Pod. */
  readonly message: string;
  /** Unschedulable for the rule's `surgeUnschedulableSeconds` or longer (reported by an Event). */
  readonly boundExceeded: boolean;
}

/**
 * The capacity preflight of a rollout's first round (`rbg-capacity.ts`) when it did not fit or could
 * not read the cluster: kept on the rollout's later statuses (but the `Complete` one); absent when it
 * fit or was not run.
 */
export interface CoordinationCapacityStatus {
  /** The preflight's verdict: only a round that did not fit, or was not placed, is recorded (readers tell this record from a RayService's by it). */
  readonly outcome: Extract<CapacityRecordOutcome, 'doesNotFit' | 'unknown'>;
  /** What did not fit, with what was free then (`decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free`), or why the cluster could not be read. */
  readonly message: string;
  /** When the preflight ran (ISO time). */
  readonly at: string;
}

/** One coordination (rolling-update rule). */
export interface CoordinationStatus {
  readonly name: string;
  readonly phase: CoordinationPhase;
  /** CamelCase reason (`RoundWritten`, `WaitingForRoles`, `WaitingForBatch`, `WaitingForController`, `WaitingForRoute`, `RoleUnavailable`, `RolloutComplete`, `ProgressDeadlineExceeded`, `SurgeUnschedulable` (a rollback under `capacityPolicy: fail`), `InsufficientCapacity` (a first round refused under `capacityPolicy: fail`), `CapacityUnknown` (a first round held under `capacityPolicy: fail` while the cluster cannot be read); with an analysis `WaitingForAnalysis`, `AnalysisFailed`; before the first round of a warmed revision `WarmingImages`, `WarmupFailed`, `WarmupTimedOut`). */
  readonly reason: string;
  readonly message: string;
  /** Hash of the coordinated roles' templates this rollout moves them to. */
  readonly revision: string;
  /** Rounds written for this revision (a round lowers at least one partition). */
  readonly rounds: number;
  /** Largest minus smallest progress of the roles now, percent. */
  readonly skewPercent: number;
  readonly maxSkewPercent: number;
  /** The role holding the others back, when one does. */
  readonly blockingRole?: string;
  /** AffinityScheduling batch release: the wave being rolled (1-based) of how many. */
  readonly wave?: { readonly current: number; readonly total: number };
  /** When this revision's rollout was first seen (ISO time). */
  readonly startedAt: string;
  /** Last time a replica became updated or ready, or a partition was lowered (ISO time). */
  readonly lastProgressAt: string;
  /** When the progress deadline passes without further progress (ISO time); absent once finished. */
  readonly deadlineAt?: string;
  /** High-water mark of Σ(updated + ready) over the roles, to tell progress from flapping readiness. */
  readonly progressMark: number;
  readonly roles: readonly RoleRolloutStatus[];
  /** The rollout's analysis, when the group has one. */
  readonly analysis?: CoordinationAnalysisStatus;
  /** The way back, once a rollback started. */
  readonly rollback?: RollbackStatus;
  /** The coordination's conditions (a rollback's `RolledBack`). */
  readonly conditions?: readonly CoordinationCondition[];
  /** The rule's version-matched router: each release's router and its weight on the route (`routerStep`). */
  readonly router?: RouterStatus;
  /** While it is Progressing (and in the status that starts a rollback for it): Pods of its roles the scheduler could not place. */
  readonly surgeUnschedulable?: CoordinationSurgeStatus;
  /** Its first round did not fit the cluster when it was released (or refused). */
  readonly capacity?: CoordinationCapacityStatus;
}

/** The analysis of one coordination: its runs and verdicts, and the new revision's share they measure. */
export interface CoordinationAnalysisStatus extends AnalysisStatus {
  /** Replicas the written partitions put on the new revision, over the coordinated roles. */
  readonly newReplicas: number;
  /** When every coordinated role first had those replicas updated and every replica ready (epoch ms). */
  readonly effectiveAt?: number;
}
