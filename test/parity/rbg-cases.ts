/**
 * RBG's coordinated-rolling-update tests, ported: `internal/controller/workloads/
 * rolebasedgroup_controller_test.go` (rolling targets, fastest/slowest role, the skew bound, the
 * merge of per-role settings) and `pkg/utils/utils_test.go` (`TestCalculatePartitionReplicas`).
 * Their cases are identical in v0.7.0 and v0.8.0-alpha.5, which only adds
 * `Test_CalculateNextRollingTarget_MinProgressWhenNoRoleReady` (v0.8.0-alpha.5 and rayshift's port
 * take a minimum step of one replica when no role is ready; v0.7.0 stalls there).
 */
import { DIFFERENCES, type UpstreamCase } from './ledger';

/** A rolling start: maxSkew in percent and each role's desired and updated replicas. */
export interface RollingCase extends UpstreamCase {
  readonly maxSkew: number;
  readonly roles: readonly { readonly name: string; readonly desired: number; readonly updated: number }[];
}

const roles = (spec: Record<string, [desired: number, updated: number]>) => Object.entries(spec).map(([name, [desired, updated]]) => ({ name, desired, updated }));
const NORMAL = 'Test_CalculateNextRollingTarget_WithNormalCases';

/** The named cases of `Test_CalculateNextRollingTarget_WithNormalCases`. */
const NAMED: RollingCase[] = [
  { test: NORMAL, name: '(200p, 100d): maxSkew=1%', maxSkew: 1, roles: roles({ prefill: [200, 20], decode: [100, 0] }) },
  { test: NORMAL, name: '(200p, 100d): maxSkew=10%', maxSkew: 10, roles: roles({ prefill: [200, 71], decode: [100, 53] }) },
  { test: NORMAL, name: '(3p, 1d): maxSkew=1%', maxSkew: 1, roles: roles({ prefill: [3, 1], decode: [1, 1] }) },
  { test: NORMAL, name: '(7p, 5d): maxSkew=1%', maxSkew: 1, roles: roles({ prefill: [7, 2], decode: [5, 1] }) },
  { test: NORMAL, name: '(1p, 1d): maxSkew=1%', maxSkew: 1, roles: roles({ prefill: [1, 0], decode: [1, 0] }) },
  { test: NORMAL, name: '(10p, 10d): maxSkew=1%', maxSkew: 1, roles: roles({ prefill: [10, 2], decode: [10, 0] }) },
  { test: NORMAL, name: '(10p, 10d, 10e): maxSkew=1%', maxSkew: 1, roles: roles({ prefill: [10, 1], decode: [10, 2], encoder: [10, 3] }) },
  { test: NORMAL, name: '(7p, 5d, 3e): maxSkew=1%', maxSkew: 1, roles: roles({ prefill: [7, 3], decode: [5, 1], encoder: [3, 1] }) },
  { test: NORMAL, name: '(7p, 5d, 3e): maxSkew=10%', maxSkew: 10, roles: roles({ prefill: [7, 1], decode: [5, 1], encoder: [3, 1] }) },
  { test: NORMAL, name: '(10p, 2d): maxSkew=10%', maxSkew: 10, roles: roles({ prefill: [10, 0], decode: [2, 0] }) },
];

/** Every case of `Test_CalculateNextRollingTarget_WithNormalCases`: the named ones and both generated loops. */
export function rollingCases(): RollingCase[] {
  const out = [...NAMED];
  for (let p = 1; p < 100; p++) {
    for (let d = 1; d < 100; d++) out.push({ test: `${NORMAL} (from 0/0)`, name: `(${p} p, ${d} d): maxSkew=1%`, maxSkew: 1, roles: roles({ prefill: [p, 0], decode: [d, 0] }) });
  }
  for (let p = 1; p < 20; p++) {
    for (let d = 1; d < 20; d++) {
      for (let up = 1; up <= p; up++) {
        for (let ud = 1; ud <= d; ud++) {
          out.push({ test: `${NORMAL} (from every start)`, name: `(${p} p, ${d} d) from ${up}/${ud}: maxSkew=1%`, maxSkew: 1, roles: roles({ prefill: [p, up], decode: [d, ud] }) });
        }
      }
    }
  }
  return out;
}

/** `Test_CalculateNextRollingTarget_MinProgressWhenNoRoleReady` (v0.8.0-alpha.5): 1p/1d at 10%, nothing ready. */
export const MIN_PROGRESS: UpstreamCase = { test: 'Test_CalculateNextRollingTarget_MinProgressWhenNoRoleReady', name: '(1p, 1d): maxSkew=10%, no role ready' };

/** `Test_getFastestAndSlowestRole` and `_EdgeCases`: roles as [desired, updated], expected [fastest, slowest] ("" for none). */
export const FASTEST_SLOWEST: readonly (UpstreamCase & { roles: Record<string, [number, number]>; upstream: [string, string] })[] = [
  { test: 'Test_getFastestAndSlowestRole', name: 'two roles with different ratios', roles: { role1: [100, 50], role2: [100, 10] }, upstream: ['role1', 'role2'] },
  { test: 'Test_getFastestAndSlowestRole', name: 'two roles with same ratio, different desired', roles: { role1: [200, 100], role2: [100, 50] }, upstream: ['role2', 'role1'] },
  { test: 'Test_getFastestAndSlowestRole', name: 'three roles with different ratios', roles: { role1: [100, 80], role2: [100, 50], role3: [100, 20] }, upstream: ['role1', 'role3'] },
  { test: 'Test_getFastestAndSlowestRole', name: 'small replicas with different ratios', roles: { role1: [10, 7], role2: [10, 3] }, upstream: ['role1', 'role2'] },
  { test: 'Test_getFastestAndSlowestRole', name: 'unequal desired replicas', roles: { role1: [200, 20], role2: [100, 15] }, upstream: ['role2', 'role1'] },
  { test: 'Test_getFastestAndSlowestRole_EdgeCases', name: 'single role', roles: { role1: [100, 50] }, upstream: ['', ''] },
  { test: 'Test_getFastestAndSlowestRole_EdgeCases', name: 'empty roles', roles: {}, upstream: ['', ''] },
];

/** `Test_calculateCoordinationUpdatedReplicasBound`: maxSkew %, refUpdated, refDesired, requestDesired → [lower, upper]. */
export const BOUNDS: readonly (UpstreamCase & { args: [number, number, number, number]; upstream: [number, number] })[] = [
  ['normal case with 10% maxSkew', [10, 50, 100, 100], [40, 60]],
  ['normal case with 1% maxSkew', [1, 20, 200, 100], [9, 11]],
  ['different desired replicas', [5, 50, 100, 200], [90, 110]],
  ['zero refDesired', [10, 0, 0, 100], [0, 0]],
  ['small values', [10, 1, 10, 10], [0, 2]],
  ['large maxSkew', [50, 50, 100, 100], [0, 100]],
  ['refUpdated equals refDesired', [10, 100, 100, 100], [90, 110]],
  ['zero refUpdated', [10, 0, 100, 100], [0, 10]],
].map(([name, args, upstream]) => ({ test: 'Test_calculateCoordinationUpdatedReplicasBound', name: name as string, args: args as [number, number, number, number], upstream: upstream as [number, number] }));

const { partitionKeepsAll, rbgOutOfRange, roleInTwoRules } = DIFFERENCES;

/**
 * `TestCalculatePartitionReplicas`: a role's `partition` (absent: nil) and `replicas` (absent: nil,
 * RBG's default 1) → the replicas RBG keeps on the old revision, or 'error'. rayshift validates the
 * role and resolves the partition with `resolvePartition`; a role it rejects is 'rejected'.
 */
type PartitionCase = Omit<UpstreamCase, 'test'> & { partition?: number | string; replicas?: number; upstream: number | 'error' };
export const PARTITIONS: readonly (UpstreamCase & PartitionCase)[] = (<PartitionCase[]>[
  { name: 'nil partition', replicas: 10, upstream: 0 },
  { name: 'absolute partition value', partition: 5, replicas: 10, upstream: 5 },
  { name: 'percentage partition 50%', partition: '50%', replicas: 10, upstream: 5 },
  { name: 'percentage partition 10%', partition: '10%', replicas: 10, upstream: 1 },
  { name: 'percentage partition 1%', partition: '1%', replicas: 100, upstream: 1 },
  { name: 'percentage partition 99%', partition: '99%', replicas: 10, upstream: 9 },
  { name: 'percentage partition 100%', partition: '100%', replicas: 10, upstream: 10, difference: partitionKeepsAll },
  { name: 'partition equals replicas with percentage < 100%', partition: '50%', replicas: 2, upstream: 1 },
  { name: 'partition 0%', partition: '0%', replicas: 10, upstream: 0 },
  { name: 'partition exceeds replicas', partition: 15, replicas: 10, upstream: 10, difference: partitionKeepsAll },
  { name: 'negative partition', partition: -5, replicas: 10, upstream: 0, difference: rbgOutOfRange },
  { name: 'nil replicas with absolute partition', partition: 5, upstream: 1, difference: partitionKeepsAll },
  { name: 'nil replicas with percentage partition', partition: '50%', upstream: 0 },
  { name: 'zero replicas', partition: 5, replicas: 0, upstream: 0 },
  { name: 'small replicas with percentage', partition: '30%', replicas: 3, upstream: 1 },
  { name: 'large replicas with percentage', partition: '25%', replicas: 1000, upstream: 250 },
  { name: 'invalid percentage format', partition: 'invalid', replicas: 10, upstream: 'error' },
  { name: 'percentage over 100%', partition: '150%', replicas: 10, upstream: 10, difference: rbgOutOfRange },
]).map((c) => ({ test: 'TestCalculatePartitionReplicas', ...c }));

type Strategy = { maxUnavailable: number | string; partition?: number };

/**
 * `Test_mergeStrategyRollingUpdate`: the per-role settings of two rules (A and B). RBG merges the
 * settings of a role in both (smaller maxUnavailable, larger partition); rayshift refuses a role in
 * two rules. Ported as a CoordinatedPolicy with one rule per role entry (`a-role1`, `b-role1`, …).
 */
type MergeCase = Omit<UpstreamCase, 'test'> & { a: Record<string, Strategy>; b: Record<string, Strategy> };
export const MERGES: readonly (UpstreamCase & MergeCase)[] = (<MergeCase[]>[
  { name: 'merge empty maps', a: {}, b: {} },
  { name: 'merge with no overlap', a: { role1: { maxUnavailable: 5, partition: 10 } }, b: { role2: { maxUnavailable: 3, partition: 5 } } },
  { name: 'merge with overlap, B has smaller maxUnavailable', a: { role1: { maxUnavailable: 10, partition: 5 } }, b: { role1: { maxUnavailable: 5, partition: 3 } }, difference: roleInTwoRules },
  { name: 'merge with overlap, B has larger partition', a: { role1: { maxUnavailable: 5, partition: 3 } }, b: { role1: { maxUnavailable: 5, partition: 10 } }, difference: roleInTwoRules },
  { name: 'merge with percentage maxUnavailable', a: { role1: { maxUnavailable: '20%', partition: 5 } }, b: { role1: { maxUnavailable: '10%', partition: 3 } }, difference: roleInTwoRules },
  { name: 'merge with nil partition', a: { role1: { maxUnavailable: 5 } }, b: { role1: { maxUnavailable: 3, partition: 10 } }, difference: roleInTwoRules },
  {
    name: 'merge multiple roles', a: { role1: { maxUnavailable: 10, partition: 5 }, role2: { maxUnavailable: 5, partition: 3 } },
    b: { role2: { maxUnavailable: 3, partition: 10 }, role3: { maxUnavailable: 7, partition: 8 } }, difference: roleInTwoRules,
  },
]).map((c) => ({ test: 'Test_mergeStrategyRollingUpdate', ...c }));
