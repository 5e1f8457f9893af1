/**
 * The data of a rayshift executor's pass over a RoleBasedGroup coordination (pure types): the rule
 * it runs, the roles it observes, and the writes and Events it decides (the status it reports is
 * rbg-coordination-status.ts's).
 * `coordinationStep` (rbg-coordination.ts) turns the first two into the others; lib/runtime/rbg
 * observes the roles and writes the rest.
 */
import type { RbgCapacityPolicy } from '../spec/capacity-policy';
import type { ResolvedRouterOptions } from '../spec/rbg-router';
import type { MeasureAnalysisAction } from './actions';
import type { ListedCapacity } from './capacity-demand';
import type { CapacityUnread } from './capacity-preflight';
import type { RbgPlanRole } from './plan-rbg';
import type { CoordinationStatus } from './rbg-coordination-status';
import type { RouteHold } from './rbg-router-hold';
import type { SurgeScheduling } from './surge-scheduling';

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
   * What a rollout does when its first round does not fit the cluster (start anyway and report it,
   * or not start), and once Pods of its roles stay Unschedulable for `surgeUnschedulableSeconds`
   * (report and wait, or also roll back).
   */
  readonly capacityPolicy: RbgCapacityPolicy;
  /** Seconds a Pod of the rule's roles may stay Unschedulable before the rollout reports it (and, under `fail`, rolls back). */
  readonly surgeUnschedulableSeconds: number;
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
 * A workload without ordinals (a Stateless RoleInstanceSet) keeps at most `desired − below` replicas
 * on the abandoned revision, the others returned (`unorderedReturn`, rbg-unordered-return.ts).
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
  /**
   * The role's maxUnavailable (a count; 0 is read as 1): a Ready replica is returned only while the
   * role's replicas down, as the list the return reads shows them, stay within it (rbg-return-budget.ts).
   */
  readonly maxUnavailable: number;
}

/** The replicas of one role a rollback round returns, by name (lib/engine/rbg-ordered-return.ts, rbg-unordered-return.ts). */
export interface ReplicaReturn {
  /** To delete (the workload recreates each from its current revision). */
  readonly remove: readonly string[];
  /** To revert in place to the current revision (only with `revertBelow`, on a workload that can keep them there). */
  readonly revert: readonly string[];
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
  /** CamelCase reason: `RolloutRound`, `RolloutComplete`, `RoleUnavailable`, `ProgressDeadlineExceeded`, `SurgeUnschedulable`, `InsufficientCapacity`, `RollbackStarted`, `RollbackRound`, `RolledBack`, `StrandedReplicasReplaced`; an analysis verdict's `Analysis<phase>` (`isVerdictEvent`). */
  readonly reason: string;
  readonly message: string;
  /** The Event's `action`, when it is not the recorder's own (the capacity preflight's `CapacityPreflight`, the scheduler watch's `SurgeScheduling`). */
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
  /**
   * The rule's roles' Pods as the executor read them while the coordination was Progressing
   * (`needsRbgSurgeScheduling`): `unschedulable`, those the scheduler could not place, as one
   * (`ruleSurgeScheduling`), absent when there are none. Undefined: the Pods were not read, so
   * nothing is judged and no one looks at them again.
   */
  readonly scheduling?: { readonly unschedulable?: SurgeScheduling };
  /**
   * The cluster's capacity as the executor listed it for this pass (`releasesFirstRound`),
   * with the group as read: the round that starts the rollout is preflighted against it; `unread`
   * when it could not be listed (the rule's policy decides, rbg-capacity.ts). Undefined: not
   * listed, so no round is judged.
   */
  readonly capacity?: RbgCapacityReading;
}

/** What the executor read for a preflight of a RoleBasedGroup round, or why it could not (`unread`). */
export type RbgCapacityReading = RbgCapacityListed | CapacityUnread;

/** The cluster as the executor listed it for a preflight of a RoleBasedGroup round. */
export interface RbgCapacityListed {
  /** The group as read: its roles' templates are the new revision's. */
  readonly group: unknown;
  /** The cluster's Nodes, bound Pods, and the group namespace's ResourceQuotas and LimitRanges. */
  readonly listed: ListedCapacity;
  /**
   * The first rounds that earlier rules release in the same pass, as each role's partition there
   * (a role is in one rule only): a rule's preflight places them with its own, so two rollouts
   * starting together are judged on the capacity they share. Undefined or empty: none.
   */
  readonly releasedInPass?: ReadonlyMap<string, number>;
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
