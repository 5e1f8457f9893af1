/**
 * Dry run of a RayService upgrade: drives `nextRayService` — the engine the executors run — with a
 * simulated clock and a simulated world in which every wait is satisfied at once (heads ready,
 * capacity acknowledged and ready, routes programmed, actions applied instantly, and every analysis
 * measurement taken at once and passing). Under `capacityPolicy: shrinkFirst` it plans the
 * upgrade a misfit starts, the one without a surge (a surge that fits runs the plan of the other policies).
 */
import type { AnalysisSuccessCondition } from '../spec/analysis';
import { analysisQuery } from './analysis-gate';
import type { RayServiceAction, WorkerFloor } from './actions';
import type { CapacityOutcome } from './capacity-preflight';
import type { AnalysisMeasurement, ObservedCluster, ObservedRoute } from './observation';
import type { ResolvedUpgradeOptions, UpgradeStrategyType } from '../spec/rayservice';
import type { ClusterShape } from '../spec/raycluster';
import { NO_USAGE, PlanPeak, PlanUsage, addUsage, clusterUsage, peakOf, usagePeaks } from './plan-cost';
import { adoptStatus, nextRayService } from './rayservice-engine';
import type { RayServiceStatus } from './status';
import type { ObservedWorkers } from './worker-freeing';

/** What to plan: a RayService whose cluster spec changes at time 0. */
export interface RayServicePlanInput {
  readonly kind: 'RayService';
  readonly name: string;
  readonly options: ResolvedUpgradeOptions;
  /** The cluster every RayCluster of the service is built from (`clusterShape(spec.rayClusterConfig)`): with it the plan counts Pods and accelerators. */
  readonly cluster?: ClusterShape;
  /**
   * The capacity preflight's outcome at the start (`plan --cluster`), for `capacityPolicy:
   * shrinkFirst`, which it decides: `fits` surges, `doesNotFit` is refused. @default fitsAfterOldShrinks (the zero-surge upgrade)
   */
  readonly capacity?: CapacityOutcome;
}

/** What `plan()` shows of one cluster at a moment of the timeline. */
export interface RayServicePlanCluster {
  /** Its Serve `target_capacity`, percent (the total's: the sum over the clusters). */
  readonly capacityPercent: number;
  /** Its Pods and accelerators at that capacity; only when the input has a `cluster`. */
  readonly usage?: PlanUsage;
}

/** The clusters right after a moment of the timeline where something changes, and what changed. */
export interface RayServicePlanPoint {
  /** Seconds since the spec change. */
  readonly atSeconds: number;
  /** What happened: the steps' actions, `create-new`, `delete-old`, `delete-new` for the clusters created and deleted, and (shrinkFirst) `free-old-workers` / `free-new-workers` when a cluster's idle worker Pods are deleted before a capacity step. */
  readonly events: readonly string[];
  /** The cluster that served before the upgrade, until it is deleted. */
  readonly old?: RayServicePlanCluster;
  /** The cluster the upgrade creates, from its creation (until it is deleted on a rollback). */
  readonly new?: RayServicePlanCluster;
  /** Both clusters together. */
  readonly total: RayServicePlanCluster;
}

/** Where the plan is at its largest: capacity, Pods and each accelerator, each with how long it lasts (`from`, `until`, `lasts` in seconds). */
export interface RayServicePlanPeaks {
  readonly capacityPercent?: PlanPeak;
  readonly pods?: PlanPeak;
  readonly accelerators: Readonly<Record<string, PlanPeak>>;
}

/**
 * Where the service serves less than its full load (a `shrinkFirst` upgrade): the lowest percent
 * served, how many times it drops below 100, and when and how long (seconds) it is below.
 */
export interface RayServicePlanDip extends PlanPeak {
  readonly times: number;
}

/** A step of the timeline, with both capacities and weights right after it. */
export interface RayServicePlanStep {
  /** Seconds since the spec change. */
  readonly atSeconds: number;
  readonly action: 'scale-pending' | 'shift-traffic' | 'scale-active' | 'promote';
  readonly activeTargetCapacity: number;
  readonly pendingTargetCapacity: number;
  readonly activeWeight: number;
  readonly pendingWeight: number;
}

/** An analysis run of the timeline, as it goes when every measurement passes. */
export interface RayServicePlanGate {
  /** `step` gates the next traffic step (or the promotion); `background` runs until promotion. */
  readonly kind: 'step' | 'background';
  /** The new cluster's weight it measures. */
  readonly pendingWeight: number;
  /** Seconds since the spec change when it passed (a background run passes with the promotion). */
  readonly passedAtSeconds: number;
}

/** The upgrade timeline. */
export interface RayServicePlan {
  readonly kind: 'RayService';
  readonly name: string;
  readonly strategy: UpgradeStrategyType;
  readonly steps: readonly RayServicePlanStep[];
  /** Seconds from the spec change to the last step. */
  readonly durationSeconds: number;
  /** Largest target capacity of all clusters together, percent (`peak.capacityPercent.value`; 100 when nothing changes). */
  readonly peakCapacityPercent: number;
  /** The clusters at each moment something changes, until the last cluster the upgrade leaves behind is deleted. */
  readonly footprint: readonly RayServicePlanPoint[];
  /** The peaks of the footprint, each with when it starts, ends and how long it holds in all (an old cluster counts until it is deleted). */
  readonly peak: RayServicePlanPeaks;
  /** Where the service serves less than 100% of its load (only a `shrinkFirst` upgrade has one). */
  readonly dip?: RayServicePlanDip;
  /** `promoted`, `rolled-back` (the progress deadline is shorter than a wait the plan needs), `unchanged` (strategy None) or `refused` (shrinkFirst on a preflight that does not fit). */
  readonly outcome: 'promoted' | 'rolled-back' | 'unchanged' | 'refused';
  /** Seconds from the spec change until the old cluster is deleted, when it is. */
  readonly oldClusterDeletedAtSeconds?: number;
  /** The analysis runs, in the order they pass (none without an analysis). */
  readonly gates: readonly RayServicePlanGate[];
  /** Each analysis metric's PromQL, with `{{namespace}}` and `{{cluster}}` left for the executor to fill in. */
  readonly analysisQueries: readonly { readonly metric: string; readonly query: string }[];
}

interface SimCluster {
  name: string;
  specHash: string;
  headReady: boolean;
  targetCapacity?: number;
  appsRunning: boolean;
  readyReplicas: number;
  targetReplicas: number;
  /** One simulated worker Pod per percent of capacity ever reached (none go by themselves); Serve uses the first `targetCapacity`. */
  workers: ObservedWorkers;
  /** Worker Pods ever created, for their names. */
  created: number;
  workerFloors?: readonly WorkerFloor[];
}

const MAX_RUNS = 1_000_000;

/** Plans the upgrade of `input.name` under `input.options`. */
export function planRayService(input: RayServicePlanInput): RayServicePlan {
  const { name, options } = input;
  const old: SimCluster = { name: `${name}-current`, specHash: 'current', headReady: true, targetCapacity: 100, appsRunning: true, readyReplicas: 100, targetReplicas: 100, workers: NO_WORKERS, created: 0 };
  scaleWorkers(old, 100);
  const world = {
    clusters: [old] as SimCluster[],
    route: options.strategy === 'NewClusterWithIncrementalUpgrade' ? ({ backends: [{ cluster: old.name, weight: 100 }], ready: true } as ObservedRoute) : undefined,
    serving: old.name as string | undefined,
    deletedAt: undefined as number | undefined,
    measurements: [] as AnalysisMeasurement[],
  };
  const steps: RayServicePlanStep[] = [];
  const footprint: RayServicePlanPoint[] = [];
  const gates: RayServicePlanGate[] = [];
  const conditions = new Map((options.analysis?.metrics ?? []).map((m) => [m.name, m.successCondition]));
  // A shrinkFirst plan shows the upgrade of a misfit: the preflight the first run sees says the surge fits only after the old cluster shrinks.
  const capacity = options.capacityPolicy === 'shrinkFirst' && options.strategy === 'NewClusterWithIncrementalUpgrade' ? { capacity: { outcome: input.capacity ?? 'fitsAfterOldShrinks' } } : {};
  const observe = (status: RayServiceStatus | undefined) => ({
    ...capacity,
    name,
    goalSpecHash: 'goal',
    clusters: world.clusters as readonly ObservedCluster[],
    route: world.route,
    servingCluster: world.serving,
    status,
    measurements: world.measurements,
  });
  let status = adoptStatus(observe(undefined));
  let now = 0;
  for (let run = 0; run < MAX_RUNS; run++) {
    const d = nextRayService(observe(status), options, now);
    world.measurements = [];
    const next = d.status;
    const before = steps.length;
    record(steps, status, next, now);
    recordGates(gates, status, next, now);
    status = next;
    const created: string[] = [];
    const deleted: string[] = [];
    for (const a of d.actions) {
      if (a.type === 'measureAnalysis') world.measurements.push({ runId: a.runId, metric: a.metric, seq: a.seq, at: now, ...passingValues(conditions.get(a.metric)) });
      else apply(world, a, old.name, now);
      if (a.type === 'createPendingCluster') created.push('create-new');
      if (a.type === 'deleteCluster') deleted.push(a.name === old.name ? 'delete-old' : 'delete-new');
      if (a.type === 'freeWorkers') created.push(a.clusterName === old.name ? 'free-old-workers' : 'free-new-workers');
    }
    const events = [...created, ...steps.slice(before).map((s) => s.action), ...deleted];
    if (events.length > 0) footprint.push(pointOf(world.clusters, status, old.name, input.cluster, now, events));
    if (d.actions.length > 0) continue;
    if (d.nextStepAt === undefined) {
      const promoted = status.activeClusterName !== old.name;
      const peak = peaksOf(footprint);
      const dip = dipOf(steps);
      return {
        kind: 'RayService',
        name,
        strategy: options.strategy,
        steps,
        durationSeconds: steps.length === 0 ? 0 : steps[steps.length - 1].atSeconds,
        peakCapacityPercent: peak.capacityPercent?.value ?? 100,
        footprint,
        peak,
        ...(dip ? { dip } : {}),
        outcome: promoted ? 'promoted' : status.phase === 'Failed' ? 'refused' : steps.length === 0 ? 'unchanged' : 'rolled-back',
        ...(world.deletedAt === undefined ? {} : { oldClusterDeletedAtSeconds: world.deletedAt / 1000 }),
        gates,
        analysisQueries: analysisQueries(options, name),
      };
    }
    now = d.nextStepAt;
  }
  throw new Error(`plan of RayService ${name} did not finish within ${MAX_RUNS} engine runs`);
}

/** The clusters of the simulated world after a pass: the active and pending ones at the status' capacities, any other (retired, not yet deleted) at the last capacity it had (100 when never set). */
function pointOf(clusters: readonly SimCluster[], s: RayServiceStatus, oldName: string, shape: ClusterShape | undefined, now: number, events: string[]): RayServicePlanPoint {
  const capacityOf = (c: SimCluster) =>
    c.name === s.activeClusterName ? s.activeTargetCapacity : c.name === s.pendingClusterName ? s.pendingTargetCapacity : (c.targetCapacity ?? 100);
  const of = (c: SimCluster | undefined): RayServicePlanCluster | undefined => {
    if (c === undefined) return undefined;
    const capacityPercent = capacityOf(c);
    return shape === undefined ? { capacityPercent } : { capacityPercent, usage: clusterUsage(shape, capacityPercent) };
  };
  const oldCluster = of(clusters.find((c) => c.name === oldName));
  const newCluster = of(clusters.find((c) => c.name !== oldName));
  const parts = [oldCluster, newCluster].filter((c): c is RayServicePlanCluster => c !== undefined);
  const total: RayServicePlanCluster = {
    capacityPercent: parts.reduce((sum, c) => sum + c.capacityPercent, 0),
    ...(shape === undefined ? {} : { usage: parts.reduce((sum, c) => addUsage(sum, c.usage!), NO_USAGE) }),
  };
  return { atSeconds: now / 1000, events, ...(oldCluster ? { old: oldCluster } : {}), ...(newCluster ? { new: newCluster } : {}), total };
}

/** The peaks of the footprint; the state after the last point is the one the service keeps, so the timeline ends there. */
function peaksOf(footprint: readonly RayServicePlanPoint[]): RayServicePlanPeaks {
  const end = footprint.length === 0 ? 0 : footprint[footprint.length - 1].atSeconds;
  const capacityPercent = peakOf(footprint.map((p) => ({ at: p.atSeconds, value: p.total.capacityPercent })), end);
  const usages = footprint.filter((p) => p.total.usage !== undefined).map((p) => ({ at: p.atSeconds, usage: p.total.usage! }));
  return { ...(capacityPercent ? { capacityPercent } : {}), ...usagePeaks(usages, end) };
}

/**
 * The dip: where the service serves less than 100% of its load, each cluster serving at most its
 * weight and at most its capacity (`min(capacity, weight)` summed), counted from the moments it
 * drops below 100; undefined when it never does (every surge upgrade, whose weights stay within
 * the capacities).
 */
function dipOf(steps: readonly RayServicePlanStep[]): RayServicePlanDip | undefined {
  const served = steps.map((s) => ({ at: s.atSeconds, value: Math.min(s.activeTargetCapacity, s.activeWeight) + Math.min(s.pendingTargetCapacity, s.pendingWeight) }));
  const times = served.filter((s, i) => s.value < 100 && (i === 0 || served[i - 1].value >= 100)).length;
  if (times === 0) return undefined;
  const end = steps[steps.length - 1].atSeconds;
  // The lowest is the peak of the negation; the time below 100 is the time the points below 100 hold.
  const low = peakOf(served.map((s) => ({ at: s.at, value: -s.value })), end)!;
  const under = peakOf(served.map((s) => ({ at: s.at, value: s.value < 100 ? 1 : 0 })), end)!;
  return { value: -low.value, from: under.from, until: under.until, lasts: under.lasts, times };
}

function record(steps: RayServicePlanStep[], prev: RayServiceStatus, next: RayServiceStatus, now: number): void {
  if (prev.activeClusterName !== undefined && next.activeClusterName !== prev.activeClusterName) return void steps.push(stepOf('promote', next, now));
  if (next.activeTargetCapacity !== prev.activeTargetCapacity) steps.push(stepOf('scale-active', next, now));
  if (next.pendingClusterName !== undefined && next.pendingTargetCapacity !== prev.pendingTargetCapacity) steps.push(stepOf('scale-pending', next, now));
  if (next.activeWeight !== prev.activeWeight) steps.push(stepOf('shift-traffic', next, now));
}

/** Adds the analysis runs that finished between `prev` and `next`, and at a promotion the background run. */
function recordGates(gates: RayServicePlanGate[], prev: RayServiceStatus, next: RayServiceStatus, now: number): void {
  const seen = new Set((prev.analysis?.verdicts ?? []).map((v) => v.id));
  for (const v of next.analysis?.verdicts ?? []) {
    if (!seen.has(v.id)) gates.push({ kind: v.kind, pendingWeight: v.pendingWeight, passedAtSeconds: now / 1000 });
  }
  const background = prev.analysis?.background;
  if (background !== undefined && next.analysis?.background === undefined) gates.push({ kind: 'background', pendingWeight: background.pendingWeight, passedAtSeconds: now / 1000 });
}

/** Each metric's PromQL, with the namespace and the cluster left as placeholders (unknown before the upgrade runs). */
function analysisQueries(options: ResolvedUpgradeOptions, service: string): RayServicePlan['analysisQueries'] {
  const a = options.analysis;
  if (a === undefined) return [];
  return a.metrics.map((m) => ({ metric: m.name, query: analysisQuery(a, m, { namespace: '{{namespace}}', service, cluster: '{{cluster}}' }) }));
}

/** Values that meet `c` (the new and the old cluster measure the same). */
function passingValues(c: AnalysisSuccessCondition | undefined): { value: number; activeValue: number } {
  const v = c?.minimum ?? c?.maximum ?? 0;
  return { value: v, activeValue: v };
}

function stepOf(action: RayServicePlanStep['action'], s: RayServiceStatus, now: number): RayServicePlanStep {
  return {
    atSeconds: now / 1000,
    action,
    activeTargetCapacity: s.activeTargetCapacity,
    pendingTargetCapacity: s.pendingTargetCapacity,
    activeWeight: s.activeWeight,
    pendingWeight: s.pendingWeight,
  };
}

const SIM_GROUP = { index: 0, name: 'workers', replicas: 0, minReplicas: 0, numOfHosts: 1, workersToDelete: [] };
const NO_WORKERS: ObservedWorkers = { groups: [SIM_GROUP], pods: [], busyPods: [], settling: false };

/** The simulated autoscaler and Serve at `percent`: Pods up to `percent` (never fewer), replicas on the first `percent`. */
function scaleWorkers(c: SimCluster, percent: number): void {
  const pods = [...c.workers.pods];
  while (pods.length < percent) pods.push({ name: `${c.name}-w${c.created++}`, group: SIM_GROUP.name, deleting: false });
  c.workers = { ...c.workers, groups: [{ ...SIM_GROUP, replicas: pods.length }], pods, busyPods: pods.slice(0, percent).map((p) => p.name) };
}

/** Applies an action to the simulated world, where everything becomes ready at once. */
function apply(world: { clusters: SimCluster[]; route: ObservedRoute | undefined; serving: string | undefined; deletedAt: number | undefined }, a: Exclude<RayServiceAction, { type: 'measureAnalysis' }>, oldName: string, now: number): void {
  switch (a.type) {
    case 'createPendingCluster':
      world.clusters.push({
        name: a.name, specHash: a.specHash, headReady: true, appsRunning: false, readyReplicas: 0, targetReplicas: 0, workers: NO_WORKERS, created: 0,
        ...(a.workerFloorZero === true ? { workerFloors: [{ index: 0, groupName: SIM_GROUP.name, minReplicas: 0 }] } : {}),
      });
      return;
    case 'setTargetCapacity': {
      const c = world.clusters.find((x) => x.name === a.clusterName)!;
      c.targetCapacity = a.percent;
      c.appsRunning = true;
      c.readyReplicas = c.targetReplicas = a.percent;
      scaleWorkers(c, a.percent);
      return;
    }
    case 'freeWorkers': {
      // The named Pods go at once: the plan knows no termination grace or proxy drain (docs/capacity.md).
      const c = world.clusters.find((x) => x.name === a.clusterName)!;
      const named = new Set(a.groups.flatMap((g) => g.workersToDelete));
      const pods = c.workers.pods.filter((p) => !named.has(p.name));
      c.workers = { ...c.workers, groups: [{ ...SIM_GROUP, replicas: pods.length }], pods };
      c.workerFloors ??= a.floors;
      return;
    }
    case 'restoreWorkerFloors':
      world.clusters.find((x) => x.name === a.clusterName)!.workerFloors = undefined;
      return;
    case 'setTrafficWeights':
      world.route = {
        backends: a.pendingCluster === undefined
          ? [{ cluster: a.activeCluster, weight: a.active }]
          : [{ cluster: a.activeCluster, weight: a.active }, { cluster: a.pendingCluster, weight: a.pending }],
        ready: true,
      };
      return;
    case 'promote':
      world.serving = a.cluster;
      return;
    case 'deleteCluster':
      world.clusters = world.clusters.filter((c) => c.name !== a.name);
      if (a.name === oldName) world.deletedAt = now;
      return;
  }
}

/**
 * How far an incremental upgrade is, counted in its plan's traffic steps: the steps whose pending
 * weight the pending cluster has reached (`pendingWeight`), of all of them. 0 of 0 for any other
 * strategy. The API server's `step`/`totalSteps` (and whatever shows them) ask here.
 */
export function trafficStepProgress(name: string, options: ResolvedUpgradeOptions, pendingWeight: number): { step: number; totalSteps: number } {
  if (options.strategy !== 'NewClusterWithIncrementalUpgrade') return { step: 0, totalSteps: 0 };
  const shifts = planRayService({ kind: 'RayService', name, options }).steps.filter((s) => s.action === 'shift-traffic');
  return { step: shifts.filter((s) => s.pendingWeight <= pendingWeight).length, totalSteps: shifts.length };
}
