/**
 * What a plan costs: the Pods and extended resources (accelerators) of a RayCluster at a target
 * capacity, and the peak of any quantity over a plan's timeline with how long it lasts. The one
 * home of both for the RayService and the RoleBasedGroup plans.
 */
import type { ClusterShape, ResourceCounts } from '../spec/raycluster';

/** Pods and extended resources (by resource name) at one moment of a plan. */
export interface PlanUsage {
  /** Pods. */
  readonly pods: number;
  /** Extended resources (accelerators) by resource name; resources at 0 are left out. */
  readonly accelerators: ResourceCounts;
}

/** The usage of nothing. */
export const NO_USAGE: PlanUsage = { pods: 0, accelerators: {} };

/** `count` copies of `perPod`'s resources. */
export function scaleResources(perPod: ResourceCounts, count: number): ResourceCounts {
  return Object.fromEntries(Object.entries(perPod).filter(([, n]) => n * count > 0).map(([name, n]) => [name, n * count]));
}

/** The sum of two usages. */
export function addUsage(a: PlanUsage, b: PlanUsage): PlanUsage {
  const accelerators: Record<string, number> = { ...a.accelerators };
  for (const [name, n] of Object.entries(b.accelerators)) accelerators[name] = (accelerators[name] ?? 0) + n;
  return { pods: a.pods + b.pods, accelerators };
}

/**
 * A RayCluster's usage at `capacityPercent` (Serve's `target_capacity`): its head Pod, and each
 * worker group at `ceil(replicas × capacity / 100)` replicas, never below the replicas it keeps at
 * any capacity (`minReplicas` with the autoscaler, every replica without one: Serve's target
 * capacity scales replicas, and only the autoscaler turns that into fewer Pods).
 */
export function clusterUsage(shape: ClusterShape, capacityPercent: number): PlanUsage {
  let usage: PlanUsage = { pods: 1, accelerators: scaleResources(shape.head, 1) };
  for (const g of shape.workerGroups) {
    const replicas = Math.min(g.replicas, Math.max(g.minReplicas, Math.ceil((g.replicas * capacityPercent) / 100)));
    const pods = replicas * g.podsPerReplica;
    usage = addUsage(usage, { pods, accelerators: scaleResources(g.perPod, pods) });
  }
  return usage;
}

/** Where a quantity of a plan is at its largest. */
export interface PlanPeak {
  /** The largest value. */
  readonly value: number;
  /** When (seconds, or round) it is first reached. */
  readonly from: number;
  /** When (seconds, or round) it last ends. */
  readonly until: number;
  /** How long (seconds, or rounds) it holds in all: the sum of the spans at the peak. */
  readonly lasts: number;
}

/**
 * The peak of a quantity sampled at the moments `at` of a timeline, each value holding until the
 * next sample and the last one until `end`; undefined without samples.
 */
export function peakOf(samples: readonly { readonly at: number; readonly value: number }[], end: number): PlanPeak | undefined {
  if (samples.length === 0) return undefined;
  const value = Math.max(...samples.map((s) => s.value));
  let from = Infinity;
  let until = -Infinity;
  let lasts = 0;
  samples.forEach((s, i) => {
    if (s.value !== value) return;
    const next = i + 1 < samples.length ? samples[i + 1].at : end;
    from = Math.min(from, s.at);
    until = Math.max(until, next);
    lasts += next - s.at;
  });
  return { value, from, until, lasts };
}

/** The peaks of a timeline of usages: Pods and each extended resource (those ever above 0). */
export function usagePeaks(samples: readonly { readonly at: number; readonly usage: PlanUsage }[], end: number): { pods?: PlanPeak; accelerators: Readonly<Record<string, PlanPeak>> } {
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.usage.accelerators)))].sort();
  const pods = peakOf(samples.map((s) => ({ at: s.at, value: s.usage.pods })), end);
  return {
    ...(pods ? { pods } : {}),
    accelerators: Object.fromEntries(names.map((n) => [n, peakOf(samples.map((s) => ({ at: s.at, value: s.usage.accelerators[n] ?? 0 })), end)!])),
  };
}
