/**
 * One run of the RayService engine: the observation, a mutable draft of the next status, the
 * actions emitted so far, the earliest wake-up time, and the helpers the lifecycle modules share.
 */
import type { RayServiceAction } from './actions';
import type { RolloutEvent } from './rbg-coordination-types';
import type { ObservedCluster, RayServiceObservation } from './observation';
import type { ResolvedUpgradeOptions } from '../spec/rayservice';
import type { RayServiceStatus } from './status';

/** A status under construction. */
export type DraftStatus = { -readonly [K in keyof RayServiceStatus]: RayServiceStatus[K] };

/** State of one engine run. */
export class EngineRun {
  /** Actions emitted so far, in order. */
  readonly actions: RayServiceAction[] = [];
  /** Events to record, each once: what this run decided that a person should see (analysis verdicts). */
  readonly events: RolloutEvent[] = [];
  /** Earliest time the engine must run again without a new observation (Infinity: none). */
  wakeAt = Infinity;
  /** A decision changed the intent in this run. */
  decided = false;
  /** Observed cluster named by the previous status' `activeClusterName`. */
  readonly active: ObservedCluster | undefined;
  /** Observed cluster named by the previous status' `pendingClusterName`. */
  readonly pending: ObservedCluster | undefined;

  constructor(
    readonly obs: RayServiceObservation,
    readonly opts: ResolvedUpgradeOptions,
    readonly now: number,
    /** The status being built (starts as a copy of the previous one). */
    readonly s: DraftStatus,
  ) {
    this.active = this.cluster(s.activeClusterName);
    this.pending = this.cluster(s.pendingClusterName);
  }

  /** The observed cluster called `name`. */
  cluster(name: string | undefined): ObservedCluster | undefined {
    if (name === undefined) return undefined;
    const clusters = this.obs.clusters;
    for (let i = 0; i < clusters.length; i++) if (clusters[i].name === name) return clusters[i];
    return undefined;
  }

  /** Serve's acknowledged target capacity of `c`; a cluster without a deployed Serve config has none. */
  acked(c: ObservedCluster): number {
    return c.targetCapacity ?? 0;
  }

  /**
   * `c` serves `percent` for real: the target capacity is acknowledged, every app is RUNNING, every
   * target replica is ready, and its serve Service has a ready endpoint where its EndpointSlices
   * are observed (Serve reports replicas before the Pods' readiness probes pass: a route weight on a
   * Service without endpoints is an error for every request it gets). Traffic only ever moves onto
   * such capacity.
   */
  ready(c: ObservedCluster, percent: number): boolean {
    return c.headReady && c.appsRunning && (c.targetCapacity ?? 0) === percent && c.readyReplicas >= c.targetReplicas && c.serveEndpoints !== 0;
  }

  /** Records a decision: the intent changed, which counts as progress. */
  decide(): void {
    this.decided = true;
    this.s.lastProgressTime = this.now;
  }

  /** Asks to run again at `t` (the earliest request wins). */
  wake(t: number): void {
    if (t < this.wakeAt) this.wakeAt = t;
  }

  /** Schedules the deletion of a cluster that no longer serves, after the deletion delay. */
  retire(name: string): void {
    if (this.s.deletions.some((d) => d.name === name)) return;
    this.s.deletions = [...this.s.deletions, { name, at: this.now + this.opts.rayClusterDeletionDelaySeconds * 1000 }];
  }

  /** Time the progress deadline passes (Infinity when disabled). */
  progressDeadline(): number {
    const seconds = this.opts.progressDeadlineSeconds;
    return seconds === 0 || this.s.lastProgressTime === undefined ? Infinity : this.s.lastProgressTime + seconds * 1000;
  }

  /**
   * Ends the pending side (a promotion, a dropped pending cluster or a finished rollback): phase
   * `Running`, no pending cluster, spec hash or upgrade strategy, pending target capacity 0, and
   * no capacity preflight or surge scheduling record (they belonged to the upgrade that ended).
   * The reason, the weights and a rollback's cause are the caller's.
   */
  endPending(): void {
    const s = this.s;
    s.phase = 'Running';
    s.capacity = undefined;
    s.surgeUnschedulable = undefined;
    s.pendingClusterName = undefined;
    s.pendingSpecHash = undefined;
    s.upgradeStrategy = undefined;
    s.pendingTargetCapacity = 0;
  }

  /** On the first run after a pause is lifted, restarts the progress clock so the pause never counts. */
  resumeIfPaused(): void {
    if (this.s.phase === 'Paused' && this.obs.controls?.paused !== true) this.s.lastProgressTime = this.now;
  }
}
