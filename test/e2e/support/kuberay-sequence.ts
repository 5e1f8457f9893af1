/**
 * What KubeRay writes during an incremental upgrade, as a watch of its `ray.io/v1` RayService sees
 * it, and its step-by-step comparison with `rayshift plan` (`planRayService`) for the same options.
 *
 * A state is the 4-tuple rayshift's plan reports after each step: the old (active) and new
 * (pending) clusters' target capacities and route weights, from the status KubeRay writes
 * (`activeServiceStatus`/`pendingServiceStatus`: `targetCapacity`, `trafficRoutedPercent`). Once
 * KubeRay promotes the new cluster the state is read as the plan's `promote` row (new cluster
 * 100 / 100, nothing pending).
 */
import { RayServicePlan } from '../../../lib/engine/plan-rayservice';
import { KubeClient } from '../../../lib/runtime/kube/client';
import { KnownTypes, KubeObject } from '../../../lib/runtime/kube/types';

/** KubeRay's RayService resource type. */
export const KUBERAY_RAYSERVICE = KnownTypes.RayService;

/** Capacities and weights of the old and new cluster, as `old TC / new TC, old weight / new weight`. */
export interface UpgradeState {
  readonly activeTargetCapacity: number;
  readonly pendingTargetCapacity: number;
  readonly activeWeight: number;
  readonly pendingWeight: number;
}

/** A state with the time the watch saw it. */
export interface ObservedState extends UpgradeState {
  readonly at: number;
}

interface ServiceStatus {
  rayClusterName?: string;
  targetCapacity?: number;
  trafficRoutedPercent?: number;
}

/** Short form `a/p w a/p`, for messages and documentation. */
export function stateKey(s: UpgradeState): string {
  return `${s.activeTargetCapacity}/${s.pendingTargetCapacity} w${s.activeWeight}/${s.pendingWeight}`;
}

/** The active and pending cluster names of a KubeRay RayService. */
export function kubeRayClusters(rs: KubeObject | undefined): { active?: string; pending?: string } {
  const st = (rs?.status ?? {}) as { activeServiceStatus?: ServiceStatus; pendingServiceStatus?: ServiceStatus };
  return { active: st.activeServiceStatus?.rayClusterName || undefined, pending: st.pendingServiceStatus?.rayClusterName || undefined };
}

/** Reads which clusters a KubeRay RayService serves from (for `sampleServe`/`runUnderLoad`'s `state`). */
export function kubeRayStateReader(admin: KubeClient, namespace: string, name: string): () => Promise<Record<string, any>> {
  return async () => {
    const c = kubeRayClusters(await admin.tryGet(KUBERAY_RAYSERVICE, name, namespace));
    return { activeClusterName: c.active, pendingClusterName: c.pending };
  };
}

/**
 * Records the state sequence of the upgrade away from cluster `oldCluster`: every distinct state
 * while `oldCluster` is active with a pending cluster, and the promoted state once another cluster
 * is active with none pending (KubeRay's defaults for unset fields: active 100, pending 0).
 */
export function recordKubeRayStates(admin: KubeClient, namespace: string, name: string, oldCluster: string): { states: ObservedState[]; stop(): void } {
  const states: ObservedState[] = [];
  const push = (s: UpgradeState) => {
    const last = states[states.length - 1];
    if (!last || stateKey(last) !== stateKey(s)) states.push({ at: Date.now(), ...s });
  };
  const informer = admin.watch(KUBERAY_RAYSERVICE, namespace, (e) => {
    if (e.object.metadata.name !== name || e.type === 'delete') return;
    const st = (e.object.status ?? {}) as { activeServiceStatus?: ServiceStatus; pendingServiceStatus?: ServiceStatus };
    const a = st.activeServiceStatus ?? {};
    const p = st.pendingServiceStatus ?? {};
    if (a.rayClusterName === oldCluster && p.rayClusterName) {
      push({ activeTargetCapacity: a.targetCapacity ?? 100, pendingTargetCapacity: p.targetCapacity ?? 0, activeWeight: a.trafficRoutedPercent ?? 100, pendingWeight: p.trafficRoutedPercent ?? 0 });
    } else if (a.rayClusterName && a.rayClusterName !== oldCluster && !p.rayClusterName && states.length > 0) {
      push({ activeTargetCapacity: a.targetCapacity ?? 100, pendingTargetCapacity: 0, activeWeight: a.trafficRoutedPercent ?? 100, pendingWeight: 0 });
    }
  });
  informer.start();
  return { states, stop: () => informer.stop() };
}

/** The plan's states in order: the state before the first step, then the state after each step. */
export function planStates(plan: RayServicePlan): UpgradeState[] {
  const initial: UpgradeState = { activeTargetCapacity: 100, pendingTargetCapacity: 0, activeWeight: 100, pendingWeight: 0 };
  return [initial, ...plan.steps.map((s) => ({ activeTargetCapacity: s.activeTargetCapacity, pendingTargetCapacity: s.pendingTargetCapacity, activeWeight: s.activeWeight, pendingWeight: s.pendingWeight }))];
}

/** The step-by-step comparison of KubeRay's observed states with the plan's. */
export interface SequenceComparison {
  /** Observed states that are not the plan's next states in order (empty when KubeRay followed the plan). */
  readonly offPlan: string[];
  /** Plan states KubeRay never showed on its own: it wrote them together with the next one (one status write). */
  readonly merged: string[];
  /** Every observed state with the seconds since the first one. */
  readonly observed: string[];
  /** Seconds between consecutive weight changes (rayshift: never less than `intervalSeconds`). */
  readonly trafficStepGaps: number[];
  /** For each drop of the old cluster's capacity, seconds since the weights last changed (rayshift: one interval). */
  readonly capacityDropsAfterTraffic: number[];
}

/**
 * Walks the observed states along the plan's: each observed state must be the plan's current
 * state or a later one (KubeRay may make several of rayshift's steps in one reconcile, so a watch
 * sees only their result); plan states passed over are `merged`, observed states found nowhere
 * ahead in the plan are `offPlan`.
 */
export function compareWithPlan(observed: readonly ObservedState[], plan: readonly UpgradeState[]): SequenceComparison {
  const offPlan: string[] = [];
  const merged: string[] = [];
  let i = 0;
  for (const o of observed) {
    const j = plan.findIndex((p, k) => k >= i && stateKey(p) === stateKey(o));
    if (j < 0) {
      offPlan.push(stateKey(o));
      continue;
    }
    for (let k = i + 1; k < j; k++) merged.push(stateKey(plan[k]));
    i = j;
  }
  for (let k = i + 1; k < plan.length; k++) merged.push(`${stateKey(plan[k])} (not reached)`);
  const t0 = observed[0]?.at ?? 0;
  const seconds = (ms: number) => Math.round(ms / 100) / 10;
  const trafficStepGaps: number[] = [];
  const capacityDropsAfterTraffic: number[] = [];
  let lastTraffic: number | undefined;
  // The promoted row swaps the clusters' roles: read it from the old cluster's side (capacity 0, no traffic).
  const upgrade = observed.map((o, k) => (k > 0 && stateKey(o) === '100/0 w100/0' ? { ...o, activeTargetCapacity: 0, pendingTargetCapacity: 100, activeWeight: 0, pendingWeight: 100 } : o));
  for (let k = 1; k < upgrade.length; k++) {
    const [prev, o] = [upgrade[k - 1], upgrade[k]];
    if (o.activeTargetCapacity < prev.activeTargetCapacity && lastTraffic !== undefined) capacityDropsAfterTraffic.push(seconds(o.at - lastTraffic));
    if (o.pendingWeight !== prev.pendingWeight) {
      if (lastTraffic !== undefined) trafficStepGaps.push(seconds(o.at - lastTraffic));
      lastTraffic = o.at;
    }
  }
  return { offPlan, merged, observed: observed.map((o) => `${((o.at - t0) / 1000).toFixed(1)}s ${stateKey(o)}`), trafficStepGaps, capacityDropsAfterTraffic };
}
