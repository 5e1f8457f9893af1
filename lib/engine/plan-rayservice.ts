/**
 * Dry run of a RayService upgrade: drives `nextRayService` — the engine the executors run — with a
 * simulated clock and a simulated world in which every wait is satisfied at once (heads ready,
 * capacity acknowledged and ready, routes programmed, actions applied instantly, and every analysis
 * measurement taken at once and passing).
 */
import type { AnalysisSuccessCondition } from '../spec/analysis';
import { analysisQuery } from './analysis-gate';
import type { RayServiceAction } from './actions';
import type { AnalysisMeasurement, ObservedCluster, ObservedRoute } from './observation';
import type { ResolvedUpgradeOptions, UpgradeStrategyType } from '../spec/rayservice';
import { adoptStatus, nextRayService } from './rayservice-engine';
import type { RayServiceStatus } from './status';

/** What to plan: a RayService whose cluster spec changes at time 0. */
export interface RayServicePlanInput {
  readonly kind: 'RayService';
  readonly name: string;
  readonly options: ResolvedUpgradeOptions;
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
  /** Largest active + pending target capacity, percent. */
  readonly peakCapacityPercent: number;
  /** `promoted`, `rolled-back` (the progress deadline is shorter than a wait the plan needs) or `unchanged` (strategy None). */
  readonly outcome: 'promoted' | 'rolled-back' | 'unchanged';
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
}

const MAX_RUNS = 1_000_000;

/** Plans the upgrade of `input.name` under `input.options`. */
export function planRayService(input: RayServicePlanInput): RayServicePlan {
  const { name, options } = input;
  const old: SimCluster = { name: `${name}-current`, specHash: 'current', headReady: true, targetCapacity: 100, appsRunning: true, readyReplicas: 100, targetReplicas: 100 };
  const world = {
    clusters: [old] as SimCluster[],
    route: options.strategy === 'NewClusterWithIncrementalUpgrade' ? ({ backends: [{ cluster: old.name, weight: 100 }], ready: true } as ObservedRoute) : undefined,
    serving: old.name as string | undefined,
    deletedAt: undefined as number | undefined,
    measurements: [] as AnalysisMeasurement[],
  };
  const steps: RayServicePlanStep[] = [];
  const gates: RayServicePlanGate[] = [];
  const conditions = new Map((options.analysis?.metrics ?? []).map((m) => [m.name, m.successCondition]));
  const observe = (status: RayServiceStatus | undefined) => ({
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
  let peak = 100;
  for (let run = 0; run < MAX_RUNS; run++) {
    const d = nextRayService(observe(status), options, now);
    world.measurements = [];
    const next = d.status;
    record(steps, status, next, now);
    recordGates(gates, status, next, now);
    const total = next.activeTargetCapacity + (next.pendingClusterName === undefined ? 0 : next.pendingTargetCapacity);
    if (total > peak) peak = total;
    status = next;
    for (const a of d.actions) {
      if (a.type === 'measureAnalysis') world.measurements.push({ runId: a.runId, metric: a.metric, seq: a.seq, at: now, ...passingValues(conditions.get(a.metric)) });
      else apply(world, a, old.name, now);
    }
    if (d.actions.length > 0) continue;
    if (d.nextStepAt === undefined) {
      const promoted = status.activeClusterName !== old.name;
      return {
        kind: 'RayService',
        name,
        strategy: options.strategy,
        steps,
        durationSeconds: steps.length === 0 ? 0 : steps[steps.length - 1].atSeconds,
        peakCapacityPercent: peak,
        outcome: promoted ? 'promoted' : steps.length === 0 ? 'unchanged' : 'rolled-back',
        ...(world.deletedAt === undefined ? {} : { oldClusterDeletedAtSeconds: world.deletedAt / 1000 }),
        gates,
        analysisQueries: analysisQueries(options, name),
      };
    }
    now = d.nextStepAt;
  }
  throw new Error(`plan of RayService ${name} did not finish within ${MAX_RUNS} engine runs`);
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

/** Applies an action to the simulated world, where everything becomes ready at once. */
function apply(world: { clusters: SimCluster[]; route: ObservedRoute | undefined; serving: string | undefined; deletedAt: number | undefined }, a: Exclude<RayServiceAction, { type: 'measureAnalysis' }>, oldName: string, now: number): void {
  switch (a.type) {
    case 'createPendingCluster':
      world.clusters.push({ name: a.name, specHash: a.specHash, headReady: true, appsRunning: false, readyReplicas: 0, targetReplicas: 0 });
      return;
    case 'setTargetCapacity': {
      const c = world.clusters.find((x) => x.name === a.clusterName)!;
      c.targetCapacity = a.percent;
      c.appsRunning = true;
      c.readyReplicas = c.targetReplicas = a.percent;
      return;
    }
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
