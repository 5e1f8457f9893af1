/**
 * rayshift's capacity rounding (`lib/runtime/serve/capacity.ts`) and the Serve simulator's own
 * rendering of it (`test/support/serve-simulator-capacity.ts`) against Ray's values. The two are
 * written independently, so each can be wrong on its own; both are held to Ray's table here.
 */
import { capacityAdjustedReplicas } from '../../lib/runtime/serve/capacity';
import { simulatedCapacityAdjusted } from '../support/serve-simulator-capacity';

/**
 * Ray's own cases: `TestTargetCapacity.test_get_capacity_adjusted_num_replicas` in
 * ray-project/ray python/ray/serve/tests/unit/test_deployment_state.py (commit 0076a4ad6ffc),
 * as (num_replicas, target_capacity, expected).
 */
const RAY_TEST_TABLE: readonly [number, number | null, number][] = [
  [10, null, 10],
  [10, 100, 10],
  [10, 99, 10],
  [10, 50, 5],
  [10, 1, 1],
  [10, 0, 0],
  [10, 25, 3],
  [1, null, 1],
  [1, 100, 1],
  [1, 1, 1],
  [1, 0, 0],
  [1, 23, 1],
  [3, 20, 1],
  [3, 40, 1],
  [3, 70, 2],
  [3, 90, 3],
  [0, null, 0],
  [0, 1, 0],
  [0, 99, 0],
  [0, 100, 0],
];

/**
 * Fractional capacities (Ray's field is a float), as Ray 2.60.0's
 * `ray.serve._private.utils.get_capacity_adjusted_num_replicas` answered them in this repository's
 * `.venv-ray` (halves that round up, products just either side of a half, thirds and sevenths).
 */
const RAY_COMPUTED: readonly [number, number, number][] = [
  [1000, 0.1, 1],
  [1000, 0.5, 5],
  [100, 1.5, 2],
  [1000, 1.5, 15],
  [100, 12.5, 13],
  [1000, 12.5, 125],
  [12, 12.5, 2],
  [33, 12.5, 4],
  [100, 14.285714285714286, 14],
  [1000, 14.285714285714286, 143],
  [7, 33.3, 2],
  [1000, 33.333333333333336, 333],
  [7, 49.99, 3],
  [7, 50.01, 4],
  [33, 49.99, 16],
  [33, 50.01, 17],
  [100, 49.99, 50],
  [1000, 50.01, 500],
  [3, 50.01, 2],
  [10, 66.7, 7],
  [1000, 66.7, 667],
  [2, 99.9, 2],
  [1000, 99.9, 999],
  [1000, 99.99, 1000],
  [3, 0.30000000000000004, 1],
  [7, 50, 4],
  [9, 50, 5],
];

describe.each([
  ['lib/runtime/serve/capacity.ts', capacityAdjustedReplicas],
  ['the Serve simulator', simulatedCapacityAdjusted],
] as const)('%s agrees with Ray', (_name, adjust) => {
  test.each(RAY_TEST_TABLE)("Ray's test table: n=%p at tc=%p -> %p", (n, tc, want) => {
    expect(adjust(n, tc)).toBe(want);
  });

  test.each(RAY_COMPUTED)('Ray 2.60.0 computed: n=%p at tc=%p -> %p', (n, tc, want) => {
    expect(adjust(n, tc)).toBe(want);
  });
});

test('the two renderings agree on every count 0-150 at every capacity in steps of 0.05 % and of 1/8 %', () => {
  const capacities = new Set<number>();
  for (let k = 0; k <= 2000; k++) capacities.add(k / 20);
  for (let k = 0; k <= 800; k++) capacities.add(k / 8);
  const disagreements: string[] = [];
  for (let n = 0; n <= 150; n++) {
    for (const tc of capacities) {
      const a = capacityAdjustedReplicas(n, tc);
      const b = simulatedCapacityAdjusted(n, tc);
      if (a !== b) disagreements.push(`n=${n} tc=${tc}: capacity.ts ${a}, simulator ${b}`);
    }
  }
  expect(disagreements.slice(0, 10)).toEqual([]);
});
