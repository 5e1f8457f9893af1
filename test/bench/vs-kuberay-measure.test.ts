import { moveLateness, TrafficMove } from '../../bench/vs-kuberay-measure';

// The bench's helpers import the Kubernetes client (ESM, which ts-jest does not load); none runs here.
jest.mock('@kubernetes/client-node', () => ({}));

/** One route's moves at the given seconds, with the new backend `b` at the given weights. */
function route(name: string, at: readonly number[], pending: readonly number[]): TrafficMove[] {
  return at.map((s, i) => ({
    route: name,
    at: s * 1000,
    weights: pending[i] === 100 ? 'b=100' : `a=${100 - pending[i]},b=${pending[i]}`,
  }));
}

describe('moveLateness', () => {
  test('interval-bound moves and moves after a capacity step are told apart by the pending weight before them', () => {
    // step 25, maxSurge 50: 25 → 50 waits for the clock, 50 → 75 for capacity too, 75 → 100 for the clock.
    const l = moveLateness(route('ns/r', [0, 5.1, 11, 16.2], [25, 50, 75, 100]), 5, 50);
    expect(l).toMatchObject({ moves: 4, timed: 2, capacityBound: 1 });
    expect(l.p50).toBeCloseTo(100);
    expect(l.p99).toBeCloseTo(200);
    expect(l.capacityP50).toBeCloseTo(900);
    expect(l.earliest).toBeCloseTo(100);
  });

  test('a move before its due time shows as a negative earliest; each route has its own due times', () => {
    const l = moveLateness([...route('ns/r', [0, 4.2], [25, 50]), ...route('ns/s', [1, 6.5], [25, 50])], 5, 50);
    expect(l.timed).toBe(2);
    expect(l.earliest).toBeCloseTo(-800);
    expect(l.p99).toBeCloseTo(500);
  });
});
