/** Fixtures shared by the pass-rule and pass-step tests of the engine (test/engine/pass-rules.test.ts, rayservice-pass.test.ts). */
import { RayServiceStatus } from '../../lib/engine/status';

/** The pass's clock. */
export const NOW = 1_000_000;

/** An upgrade in flight: old `a` at 50 % traffic, new `b` at 50 %, the last step 10 s ago. */
export const MIGRATING: RayServiceStatus = {
  phase: 'Upgrading',
  reason: 'Migrating',
  activeClusterName: 'a',
  pendingClusterName: 'b',
  activeTargetCapacity: 100,
  pendingTargetCapacity: 50,
  activeWeight: 50,
  pendingWeight: 50,
  trafficConfirmed: false,
  lastTrafficMigratedTime: NOW - 10_000,
  lastProgressTime: NOW - 1_000,
  deletions: [],
};
