/**
 * Test-only simulation of an executor and a Kubernetes/Ray world around the RayService engine.
 *
 * The executor is a single worker (like a controller with concurrency 1): it runs the engine,
 * persists the returned status, applies the actions in order (each after a configurable latency),
 * and runs again on every observation change (after a watch latency), at `nextStepAt`, and after
 * applying actions. The world models heads that become ready after a delay, Serve replicas that
 * follow `target_capacity` (Ray's `max(1, round(n·tc/100))`, ready after a delay when scaling up),
 * and a route that is programmed after a delay. Scripted hooks change the goal spec, kill heads or
 * set controls when a predicate on the persisted status first holds.
 */
import {
  nextRayService,
  type AnalysisMeasurement,
  type MeasureAnalysisAction,
  type ObservedCluster,
  type ObservedRoute,
  type RayServiceAction,
  type RayServiceDecision,
  type RayServiceStatus,
  type RolloutControls,
  type RouteBackend,
} from '../../lib/engine';
import type { ResolvedUpgradeOptions } from '../../lib/spec';
import { prng } from '../support/prng';

export { prng };

/** Delays of the simulated world, in ms. */
export interface WorldTiming {
  /** Creation → head Pod ready (Infinity: never). */
  readonly headReadyMs: number;
  /** Capacity increase → the added Serve replicas are ready. */
  readonly replicaReadyMs: number;
  /** Route write → Gateway has programmed it. */
  readonly routeProgramMs: number;
  /**
   * Head ready → the cluster's serve Service has a ready endpoint (the Pods' readiness probes after
   * Serve is up). Absent: the world has no EndpointSlices (`serveEndpoints` unobserved).
   */
  readonly endpointsReadyMs?: number;
  /** Latency of applying one action. */
  readonly actionLatencyMs: () => number;
  /** World change → the executor's next run. */
  readonly watchLatencyMs: () => number;
}

/** One persisted engine run. */
export interface TraceEntry {
  readonly t: number;
  readonly status: RayServiceStatus;
  readonly actions: readonly RayServiceAction[];
  readonly events: RayServiceDecision['events'];
}

/** A change of the route's weights in the world (not a backend merely added or removed at weight 0). */
export interface TrafficChange {
  readonly t: number;
  readonly weights: ReadonlyMap<string, number>;
}

/** A scripted intervention: `act` runs once, after the first run whose status satisfies `when`. */
export interface Hook {
  readonly name: string;
  readonly when: (status: RayServiceStatus, sim: Simulation) => boolean;
  readonly act: (sim: Simulation) => void;
}

interface SimCluster {
  readonly name: string;
  readonly specHash: string;
  readonly headReadyAt: number;
  headDead: boolean;
  targetCapacity: number | undefined;
  targetReplicas: number;
  readyReplicas: number;
  /** Scale-up in flight: replicas become `targetReplicas` at this time. */
  replicasReadyAt: number;
}


/** Serve replicas at a target capacity (Ray's `get_capacity_adjusted_num_replicas`). */
export function serveReplicas(full: number, percent: number): number {
  if (percent === 0) return 0;
  if (percent === 100) return full;
  return Math.max(1, Math.floor((full * percent) / 100 + 0.5));
}


/** The simulated executor + world. */
export class Simulation {
  readonly trace: TraceEntry[] = [];
  readonly trafficChanges: TrafficChange[] = [];
  /** World-level invariant violations (traffic onto unready capacity, capacity over the bound). */
  readonly violations: string[] = [];
  readonly firedHooks: string[] = [];
  goal: string;
  controls: RolloutControls = {};
  now = 0;
  private status: RayServiceStatus | undefined;
  private clusters: SimCluster[] = [];
  private route: { backends: RouteBackend[]; readyAt: number } | undefined;
  private serving: string | undefined;
  /** Times of scheduled executor runs, ascending. */
  private readonly queue: number[] = [];
  private busyUntil = 0;
  private readonly hooks: Hook[];
  private readonly deletedClusters = new Set<string>();
  /** Simulated Prometheus answers taken since the last engine run. */
  private measurements: AnalysisMeasurement[] = [];
  /** Simulated Prometheus: what a `measureAnalysis` action measures at time t, with the route's current weights. */
  measure: ((a: MeasureAnalysisAction, t: number, sim: Simulation) => Pick<AnalysisMeasurement, 'value' | 'activeValue' | 'error'>) | undefined;

  constructor(
    readonly options: ResolvedUpgradeOptions,
    readonly timing: WorldTiming,
    init: { readonly goal: string; readonly activeSpec?: string; readonly hooks?: readonly Hook[]; readonly fullReplicas?: number; readonly measure?: Simulation['measure'] },
    readonly fullReplicas = init.fullReplicas ?? 8,
  ) {
    this.goal = init.goal;
    this.measure = init.measure;
    this.hooks = [...(init.hooks ?? [])];
    if (init.activeSpec !== undefined) {
      const name = 'svc-a0000';
      this.clusters.push({
        name,
        specHash: init.activeSpec,
        headReadyAt: 0,
        headDead: false,
        targetCapacity: 100,
        targetReplicas: this.fullReplicas,
        readyReplicas: this.fullReplicas,
        replicasReadyAt: 0,
      });
      this.serving = name;
      if (options.strategy === 'NewClusterWithIncrementalUpgrade') this.route = { backends: [{ cluster: name, weight: 100 }], readyAt: 0 };
    }
    this.schedule(0);
  }

  /** The persisted status after the last run. */
  get lastStatus(): RayServiceStatus {
    return this.trace[this.trace.length - 1].status;
  }

  /** Names of the clusters that exist now. */
  clusterNames(): string[] {
    return this.clusters.map((c) => c.name);
  }

  /** Spec hash of an existing cluster. */
  specOf(name: string | undefined): string | undefined {
    return this.clusters.find((c) => c.name === name)?.specHash;
  }

  /** Whether a cluster was deleted by a `deleteCluster` action. */
  wasDeleted(name: string): boolean {
    return this.deletedClusters.has(name);
  }

  /** The route's backends as they are now. */
  routeBackends(): readonly RouteBackend[] {
    return this.route?.backends ?? [];
  }

  /** Kills a cluster's head for good (the Serve state is lost). */
  killHead(name: string): void {
    const c = this.clusters.find((x) => x.name === name);
    if (c === undefined) throw new Error(`no cluster ${name}`);
    c.headDead = true;
    c.targetCapacity = undefined;
    c.readyReplicas = 0;
    c.targetReplicas = 0;
    this.changed();
  }

  /** Adds a hook after construction (e.g. from another hook). */
  addHook(h: Hook): void {
    this.hooks.push(h);
  }

  /** Makes the executor also run every `everyMs` until `untilMs` (an operator's periodic resync). */
  resync(everyMs: number, untilMs: number): void {
    for (let t = 0; t <= untilMs; t += everyMs) this.schedule(t);
  }

  /** Signals an observation change (spec edit, control change) to the executor. */
  changed(): void {
    this.schedule(this.now + this.timing.watchLatencyMs());
  }

  /** Runs until nothing is scheduled or `maxMs` of simulated time passed; returns the number of engine runs. */
  runUntilIdle(maxMs = 48 * 3600_000, maxRuns = 200_000): number {
    let runs = 0;
    while (this.queue.length > 0 && runs < maxRuns) {
      const due = this.queue.shift()!;
      if (due > maxMs) break;
      const t = Math.max(due, this.busyUntil);
      this.now = t;
      this.runEngine();
      runs++;
    }
    return runs;
  }

  private runEngine(): void {
    const t = this.now;
    const d = nextRayService(
      {
        name: 'svc',
        goalSpecHash: this.goal,
        clusters: this.clusters.map((c) => this.observe(c, t)),
        route: this.route === undefined ? undefined : ({ backends: this.route.backends, ready: t >= this.route.readyAt } as ObservedRoute),
        servingCluster: this.serving,
        controls: this.controls,
        status: this.status,
        measurements: this.measurements,
      },
      this.options,
      t,
    );
    this.measurements = [];
    this.status = d.status;
    this.trace.push({ t, status: d.status, actions: d.actions, events: d.events });
    let at = t;
    for (const a of d.actions) {
      at += this.timing.actionLatencyMs();
      this.apply(a, at);
    }
    this.busyUntil = at;
    if (d.actions.length > 0) this.schedule(at);
    if (d.nextStepAt !== undefined) this.schedule(d.nextStepAt);
    for (const h of this.hooks) {
      if (!this.firedHooks.includes(h.name) && h.when(d.status, this)) {
        this.firedHooks.push(h.name);
        this.now = at;
        h.act(this);
      }
    }
  }

  private observe(c: SimCluster, t: number): ObservedCluster {
    const headReady = !c.headDead && t >= c.headReadyAt;
    if (!headReady) return { name: c.name, specHash: c.specHash, headReady, appsRunning: false, readyReplicas: 0, targetReplicas: 0 };
    const ready = this.readyAt(c, t);
    const endpoints = this.timing.endpointsReadyMs === undefined ? {} : { serveEndpoints: t >= c.headReadyAt + this.timing.endpointsReadyMs ? 1 : 0 };
    return {
      name: c.name,
      specHash: c.specHash,
      headReady,
      targetCapacity: c.targetCapacity,
      appsRunning: c.targetCapacity !== undefined && ready >= c.targetReplicas,
      readyReplicas: ready,
      targetReplicas: c.targetReplicas,
      ...endpoints,
    };
  }

  private readyAt(c: SimCluster, t: number): number {
    return t >= c.replicasReadyAt ? c.targetReplicas : c.readyReplicas;
  }

  /** Applies one action at time `t` (the executor's API call lands then). */
  private apply(a: RayServiceAction, t: number): void {
    switch (a.type) {
      case 'createPendingCluster': {
        if (this.clusters.some((c) => c.name === a.name)) return;
        const headReadyAt = t + this.timing.headReadyMs;
        this.clusters.push({ name: a.name, specHash: a.specHash, headReadyAt, headDead: false, targetCapacity: undefined, targetReplicas: 0, readyReplicas: 0, replicasReadyAt: t });
        if (Number.isFinite(headReadyAt)) this.schedule(headReadyAt + this.timing.watchLatencyMs());
        if (Number.isFinite(headReadyAt) && this.timing.endpointsReadyMs !== undefined) this.schedule(headReadyAt + this.timing.endpointsReadyMs + this.timing.watchLatencyMs());
        break;
      }
      case 'setTargetCapacity': {
        const c = this.clusters.find((x) => x.name === a.clusterName);
        if (c === undefined || c.headDead || t < c.headReadyAt) break;
        const ready = this.readyAt(c, t);
        c.targetCapacity = a.percent;
        c.targetReplicas = serveReplicas(this.fullReplicas, a.percent);
        if (c.targetReplicas <= ready) {
          c.readyReplicas = c.targetReplicas;
          c.replicasReadyAt = t;
        } else {
          c.readyReplicas = ready;
          c.replicasReadyAt = t + this.timing.replicaReadyMs;
          this.schedule(c.replicasReadyAt + this.timing.watchLatencyMs());
        }
        this.checkCapacityBound(t);
        const routed = this.route?.backends.find((b) => b.cluster === c.name)?.weight ?? 0;
        if (routed > a.percent) this.violations.push(`t=${t}: ${c.name} lowered to tc ${a.percent} while routed ${routed}`);
        break;
      }
      case 'setTrafficWeights': {
        const backends: RouteBackend[] = [{ cluster: a.activeCluster, weight: a.active }];
        if (a.pendingCluster !== undefined) backends.push({ cluster: a.pendingCluster, weight: a.pending });
        this.writeRoute(backends, t);
        break;
      }
      case 'promote':
        this.serving = a.cluster;
        break;
      case 'deleteCluster':
        if (this.clusters.some((c) => c.name === a.name)) this.deletedClusters.add(a.name);
        this.clusters = this.clusters.filter((c) => c.name !== a.name);
        break;
      case 'measureAnalysis': {
        if (this.measure === undefined) throw new Error(`no simulated Prometheus for ${a.metric}`);
        this.measurements.push({ runId: a.runId, metric: a.metric, seq: a.seq, at: t, ...this.measure(a, t, this) });
        break;
      }
    }
    this.schedule(t + this.timing.watchLatencyMs());
  }

  private writeRoute(backends: RouteBackend[], t: number): void {
    const before = weightsOf(this.route?.backends ?? []);
    const after = weightsOf(backends);
    this.route = { backends, readyAt: t + this.timing.routeProgramMs };
    this.schedule(this.route.readyAt + this.timing.watchLatencyMs());
    const names = new Set([...before.keys(), ...after.keys()]);
    if ([...names].some((n) => (before.get(n) ?? 0) !== (after.get(n) ?? 0))) this.trafficChanges.push({ t, weights: after });
    for (const b of backends) {
      const c = this.clusters.find((x) => x.name === b.cluster);
      if (b.weight === 0 || c === undefined || c.headDead) continue;
      const ready = this.readyAt(c, t);
      if (ready < c.targetReplicas || c.targetCapacity === undefined || b.weight > c.targetCapacity) {
        this.violations.push(`t=${t}: weight ${b.weight} routed to ${c.name} at tc ${c.targetCapacity} with ${ready}/${c.targetReplicas} ready`);
      }
    }
  }

  private checkCapacityBound(t: number): void {
    if (this.options.strategy !== 'NewClusterWithIncrementalUpgrade') return;
    const total = this.clusters.reduce((sum, c) => sum + (c.headDead ? 0 : c.targetCapacity ?? 0), 0);
    if (total > 100 + this.options.maxSurgePercent) this.violations.push(`t=${t}: total target capacity ${total} > 100 + ${this.options.maxSurgePercent}`);
  }

  private schedule(t: number): void {
    if (!Number.isFinite(t)) return;
    let i = this.queue.length;
    while (i > 0 && this.queue[i - 1] > t) i--;
    if (i > 0 && this.queue[i - 1] === t) return;
    this.queue.splice(i, 0, t);
  }
}

function weightsOf(backends: readonly RouteBackend[]): Map<string, number> {
  return new Map(backends.map((b) => [b.cluster, b.weight]));
}

/** Fixed delays (no randomness). */
export function fixedTiming(overrides: Partial<Omit<WorldTiming, 'actionLatencyMs' | 'watchLatencyMs'>> & { actionMs?: number; watchMs?: number } = {}): WorldTiming {
  return {
    headReadyMs: overrides.headReadyMs ?? 30_000,
    replicaReadyMs: overrides.replicaReadyMs ?? 10_000,
    routeProgramMs: overrides.routeProgramMs ?? 500,
    ...(overrides.endpointsReadyMs !== undefined ? { endpointsReadyMs: overrides.endpointsReadyMs } : {}),
    actionLatencyMs: () => overrides.actionMs ?? 50,
    watchLatencyMs: () => overrides.watchMs ?? 100,
  };
}

/** Incremental options with KubeRay-like defaults for the fields a test does not set. */
export function incremental(o: { maxSurge: number; step: number; interval: number; deletionDelay?: number; deadline?: number }): ResolvedUpgradeOptions {
  return {
    strategy: 'NewClusterWithIncrementalUpgrade',
    maxSurgePercent: o.maxSurge,
    stepSizePercent: o.step,
    intervalSeconds: o.interval,
    rayClusterDeletionDelaySeconds: o.deletionDelay ?? 0,
    progressDeadlineSeconds: o.deadline ?? 0,
  };
}
