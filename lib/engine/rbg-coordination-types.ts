/**
 * The data of a rayshift executor's pass over a RoleBasedGroup coordination (pure types): the rule
 * it runs, the roles it observes, the status it reports and the writes and Events it decides.
 * `coordinationStep` (rbg-coordination.ts) turns the first two into the others; lib/runtime/rbg
 * observes the roles and writes the rest.
 */
import type { ResolvedRouterOptions } from '../spec/rbg-router';
import type { MeasureAnalysisAction } from './actions';
import type { AnalysisStatus } from './analysis-status';
import type { RbgPlanRole } from './plan-rbg';
import type { RouteHold } from './rbg-router-hold';
import type { RouterStatus } from './rbg-router-step';

/** One rolling-update rule as the executor runs it. */
export interface ExecutorRule {
  /** Rule name. */
  readonly name: string;
  /** Largest allowed progress skew between the roles, percent (100 when the rule sets none). */
  readonly maxSkewPercent: number;
  /** The coordinated roles that exist in the group, with their resolved partition and maxUnavailable. */
  readonly roles: readonly RbgPlanRole[];
  /** Seconds without progress before the rollout is stopped. */
  readonly progressDeadlineSeconds: number;
  /** Return every role to the old revision when the deadline passes. */
  readonly rollbackOnDeadline: boolean;
  /**
   * AffinityScheduling release order: role names per wave; wave k+1 starts once every role of the
   * waves before it is updated and ready. Undefined: one wave of every role.
   */
  readonly waves?: readonly (readonly string[])[];
  /** The rule's version-matched router, defaults applied (`resolveRouter`). @default no router */
  readonly router?: ResolvedRouterOptions;
}

/** Progress counts of one role. */
export interface RoleProgress {
  /** Replicas on the new revision, ready or not. */
  readonly updatedReplicas: number;
  /** Ready replicas. */
  readonly readyReplicas: number;
  /** Where the counts come from. */
  readonly source: 'group' | 'workload';
  /** The workload's `status.updateRevision` (its template's revision) when the counts come from the workload. */
  readonly workloadRevision?: string;
  /**
   * The workload's `status.currentRevision` when the counts come from the workload: the revision it
   * recreates a replica below its partition from. RBG's RoleInstanceSet (v0.7, v0.8) and a
   * StatefulSet make the update revision their current one only after their last replica is updated
   * and ready, in a later sync, and a paused RoleInstanceSet never does.
   */
  readonly workloadCurrentRevision?: string;
  /** The partition the workload carries (its own spec's), when the counts come from the workload. */
  readonly workloadPartition?: number;
  /** Updated replicas that are ready (the workload's `updatedReadyReplicas`), when it reports them. */
  readonly updatedReadyReplicas?: number;
  /**
   * Each ordinal below the workload's replicas that has a replica, read from ONE list of its replicas
   * against the revisions of the workload read just before (a StatefulSet's Pods: RBG v0.6.0; a
   * RoleInstanceSet's RoleInstances while it may strand some, rbg-stranded.ts). When
   * present, the way back takes every count from it and none from the counts above, which were read
   * at another moment (lib/engine/rbg-rollback.ts `rollbackCounts`).
   */
  readonly replicas?: readonly ReplicaState[];
}

/** One replica of a role's workload, as one list of them shows it. */
export interface ReplicaState {
  /** Its ordinal (`<workload>-<ordinal>`). */
  readonly ordinal: number;
  /**
   * Its revision: the workload's current one (the revision before the rollout), its update one (the
   * rollout's, abandoned on the way back), or neither.
   */
  readonly revision: 'current' | 'update' | 'other';
  /** Its Ready condition is True. */
  readonly ready: boolean;
  /** Being deleted (`deletionTimestamp` set): it is going down whatever its Ready condition says. */
  readonly terminating: boolean;
}

/** One role as observed. */
export interface ObservedRole {
  readonly name: string;
  /** Position in `spec.roles` (the JSON-patch index). */
  readonly index: number;
  /** `spec.replicas` (default 1). */
  readonly desired: number;
  /** Partition written on the role (resolved to a count); undefined when none is written. */
  readonly partition?: number;
  /** maxUnavailable written on the role (resolved to a count); undefined when none is written. */
  readonly maxUnavailable?: number;
  /** `rolloutStrategy.rollingUpdate.paused`. */
  readonly paused: boolean;
  /**
   * Its workload ignores `paused` (`workloadHonoursPaused`: a StatefulSet, as RBG v0.6.0 makes for
   * every v1alpha1 role): only its partition holds it, so a hold at every replica, and the arming
   * between rollouts, write partition = replicas. @default false
   */
  readonly holdsByPartition?: boolean;
  /**
   * Its group's webhook admits only a partition below replicas (RBG v0.8.0-alpha.5's
   * `ValidateRollingUpdate`): the way back writes at most replicas − 1 and returns the ordinals at
   * and above it by reverting them in place (`RoleReturn.revertBelow`). @default false
   */
  readonly partitionBelowReplicas?: boolean;
  /** Hash of the role without its replicas and rollout strategy: changes exactly when its pods need a new revision. */
  readonly revision: string;
  /** Progress counts; undefined when neither the group's status nor the workload reports the role. */
  readonly progress?: RoleProgress;
  /** The release its pod template is labelled with (`rayshift.dev/router-revision`), when a router marks it. */
  readonly routerRevision?: string;
}

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

/** One coordination (rolling-update rule). */
export interface CoordinationStatus {
  readonly name: string;
  readonly phase: CoordinationPhase;
  /** CamelCase reason (`RoundWritten`, `WaitingForRoles`, `WaitingForBatch`, `WaitingForController`, `WaitingForRoute`, `RoleUnavailable`, `RolloutComplete`, `ProgressDeadlineExceeded`; with an analysis `WaitingForAnalysis`, `AnalysisFailed`; before the first round of a warmed revision `WarmingImages`, `WarmupFailed`, `WarmupTimedOut`). */
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
}

/** The analysis of one coordination: its runs and verdicts, and the new revision's share they measure. */
export interface CoordinationAnalysisStatus extends AnalysisStatus {
  /** Replicas the written partitions put on the new revision, over the coordinated roles. */
  readonly newReplicas: number;
  /** When every coordinated role first had those replicas updated and every replica ready (epoch ms). */
  readonly effectiveAt?: number;
}

/** Rolling-update fields to write on one role. */
export interface RoleWrite {
  readonly name: string;
  /** Position in `spec.roles`. */
  readonly index: number;
  readonly partition: number;
  readonly maxUnavailable: number;
  readonly paused: boolean;
}

/**
 * Replicas to replace on one role: every replica at an ordinal below `below` that runs the abandoned
 * revision. The workload, whose partition is at `below`, recreates them from its current revision.
 */
export interface RoleReturn {
  readonly name: string;
  /** Position in `spec.roles`. */
  readonly index: number;
  /** Replicas on the abandoned revision with an ordinal below this are replaced (deleted; the workload recreates them from its current revision). */
  readonly below: number;
  /**
   * Replicas on the abandoned revision with an ordinal from `below` up to this one (excluded) are
   * reverted in place to the workload's current revision (`partitionBelowReplicas`: no partition
   * the webhook admits puts them below it). Undefined: none.
   */
  readonly revertBelow?: number;
}

/**
 * Replicas of a role to replace because its workload will never update them (rbg-stranded.ts): the
 * runtime deletes them, each guarded by its uid and still on a revision other than `revision`, and
 * the workload recreates each ordinal from `revision`.
 */
export interface RoleReplace {
  readonly name: string;
  /** Position in `spec.roles`. */
  readonly index: number;
  /** The workload's one revision (its current and update revision), which the replicas are not on. */
  readonly revision: string;
  /** Their ordinals (`<workload>-<ordinal>`), highest first. */
  readonly ordinals: readonly number[];
}

/** An Event to record on the group. */
export interface RolloutEvent {
  readonly type: 'Normal' | 'Warning';
  /** CamelCase reason: `RolloutRound`, `RolloutComplete`, `RoleUnavailable`, `ProgressDeadlineExceeded`, `RollbackStarted`, `RollbackRound`, `RolledBack`, `StrandedReplicasReplaced`; an analysis verdict's `Analysis<phase>` (`isVerdictEvent`). */
  readonly reason: string;
  readonly message: string;
  /** The Event's `action`, when it is not the recorder's own (the capacity preflight's `CapacityPreflight`). */
  readonly action?: string;
}

/** Reason of the Event recorded for every round written. */
export const ROUND_EVENT = 'RolloutRound';

/** Reason of the Event recorded when replicas a workload will not update are replaced (rbg-stranded.ts). */
export const STRANDED_EVENT = 'StrandedReplicasReplaced';

/** Reason of the Event recorded for every rollback round written. */
export const ROLLBACK_ROUND_EVENT = 'RollbackRound';

/** What a pass over one coordination sees. */
export interface CoordinationStepInput {
  readonly rule: ExecutorRule;
  /** Every role of the group, by name. */
  readonly roles: ReadonlyMap<string, ObservedRole>;
  /** The RBG controller has observed the group's current generation. */
  readonly controllerCaughtUp: boolean;
  /** The coordination's status from the previous pass. */
  readonly previous?: CoordinationStatus;
  /** Epoch ms. */
  readonly now: number;
  /**
   * A closed analysis gate: no partition is lowered and the rollout does not complete; `measured`
   * when a measurement was counted in this pass (progress, as for the progress deadline).
   */
  readonly analysisHold?: { readonly message: string; readonly measured: boolean };
  /**
   * A failure may roll the rollout back (a gate with `onFailure: rollback`; `rollbackOnDeadline`
   * sets it too): no role updates its last replica before every role can (see `coordinationStep`).
   */
  readonly rollbackPossible?: boolean;
  /**
   * The rule's router route as read (`routeHoldOf`): rolling forward the routed roles keep their
   * last old replica while it sends the old release a share; rolling back no round is written while
   * it sends the new release one. @default no hold
   */
  readonly routeHold?: RouteHold;
}

/** What a pass over one coordination decides. */
export interface CoordinationStep {
  readonly status: CoordinationStatus;
  /** Only the roles whose written fields must change. */
  readonly writes: readonly RoleWrite[];
  readonly events: readonly RolloutEvent[];
  /** Look again at this time (epoch ms) even if nothing changes: the progress deadline, a measurement due. */
  readonly wakeAt?: number;
  /** Analysis measurements to take, for the next pass. */
  readonly measure?: readonly MeasureAnalysisAction[];
  /** Replicas to replace on the abandoned revision, after the writes landed (a rollback's). */
  readonly returns?: readonly RoleReturn[];
  /** Replicas a workload will never update (rbg-stranded.ts), to replace after the writes landed. */
  readonly replaces?: readonly RoleReplace[];
  /**
   * Rolling forward: the roles whose round releases their last old replica (partition 0), or would
   * but for a hold (the route's, a possible rollback's): the weight rule's `lastRound`.
   */
  readonly lastRound?: readonly string[];
}
