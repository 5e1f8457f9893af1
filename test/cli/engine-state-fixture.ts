/** An engine state mid-upgrade (70/30 traffic, 100/50 capacity, the last step at `T`), for the views' tests. */
import type { RayServiceStatus } from '../../lib/engine/status';

/** When the fixture's last traffic step happened. */
export const T = Date.parse('2026-11-21T12:00:00.000Z');

/** The mid-upgrade engine state with `over` applied. */
export function engine(over: Partial<RayServiceStatus> = {}): RayServiceStatus {
  return {
    phase: 'Upgrading', reason: 'Migrating', activeClusterName: 'llm-aaaaa', pendingClusterName: 'llm-bbbbb',
    activeTargetCapacity: 100, pendingTargetCapacity: 50, activeWeight: 70, pendingWeight: 30,
    trafficConfirmed: true, lastTrafficMigratedTime: T, lastProgressTime: T, deletions: [], ...over,
  };
}
