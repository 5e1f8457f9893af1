/**
 * Invariants every engine trace must satisfy, checked over the persisted statuses and the
 * simulated world. Returns human-readable violations (empty when all hold).
 */
import type { Simulation } from './harness';

/** Options of the check. */
export interface InvariantOptions {
  /** promote-now was used: traffic steps may be closer than the interval. */
  readonly promoteNow?: boolean;
}

/** Checks weights, capacity bounds, interval spacing, monotone forward progress and world-level safety. */
export function invariantViolations(sim: Simulation, o: InvariantOptions = {}): string[] {
  const out = [...sim.violations];
  const { maxSurgePercent: maxSurge, intervalSeconds } = sim.options;
  const interval = intervalSeconds * 1000;
  const incremental = sim.options.strategy === 'NewClusterWithIncrementalUpgrade';
  let prev = undefined as (typeof sim.trace)[number]['status'] | undefined;
  for (const { t, status: s } of sim.trace) {
    const at = `t=${t}`;
    if (s.activeWeight + s.pendingWeight !== 100) out.push(`${at}: weights ${s.activeWeight}+${s.pendingWeight}`);
    if (incremental && s.pendingClusterName !== undefined) {
      const writtenOff = s.rollback !== undefined && s.pendingTargetCapacity === 0;
      if (s.pendingWeight > s.pendingTargetCapacity && !writtenOff) out.push(`${at}: pending weight ${s.pendingWeight} > tc ${s.pendingTargetCapacity}`);
      if (s.activeWeight > s.activeTargetCapacity) out.push(`${at}: active weight ${s.activeWeight} > tc ${s.activeTargetCapacity}`);
      if (s.activeTargetCapacity + s.pendingTargetCapacity > 100 + maxSurge) out.push(`${at}: capacity ${s.activeTargetCapacity}+${s.pendingTargetCapacity} > 100+${maxSurge}`);
    }
    if (prev !== undefined && !o.promoteNow && s.activeWeight !== prev.activeWeight && prev.lastTrafficMigratedTime !== undefined
      && prev.pendingClusterName === s.pendingClusterName && t < prev.lastTrafficMigratedTime + interval) {
      out.push(`${at}: traffic step ${t - prev.lastTrafficMigratedTime} ms after the last one (< ${interval})`);
    }
    if (prev !== undefined && prev.pendingClusterName !== undefined && prev.pendingClusterName === s.pendingClusterName
      && prev.rollback === undefined && s.rollback === undefined) {
      if (s.pendingTargetCapacity < prev.pendingTargetCapacity) out.push(`${at}: pending tc fell ${prev.pendingTargetCapacity}→${s.pendingTargetCapacity} outside rollback`);
      if (s.activeTargetCapacity > prev.activeTargetCapacity) out.push(`${at}: active tc rose ${prev.activeTargetCapacity}→${s.activeTargetCapacity} outside rollback`);
      if (s.pendingWeight < prev.pendingWeight) out.push(`${at}: pending weight fell ${prev.pendingWeight}→${s.pendingWeight} outside rollback`);
    }
    prev = s;
  }
  if (!o.promoteNow) {
    for (let i = 1; i < sim.trafficChanges.length; i++) {
      const gap = sim.trafficChanges[i].t - sim.trafficChanges[i - 1].t;
      if (gap < interval) out.push(`route weights changed ${gap} ms after the previous change (< ${interval})`);
    }
  }
  return out;
}
