/**
 * Traffic waits for the receiving cluster's serve Service to have a ready endpoint
 * (`ObservedCluster.serveEndpoints`, `EngineRun.ready`): Serve reports replicas RUNNING before the
 * Pods' readiness probes put them in the EndpointSlice, and a weight on a Service without endpoints
 * fails every request it gets. Simulated world (test/engine/harness.ts) with the endpoints lagging.
 */
import { fixedTiming, incremental, Simulation } from './harness';

const OPTIONS = incremental({ maxSurge: 50, step: 25, interval: 5 });
const HEAD_READY_MS = 30_000;

/** When the new cluster first got traffic, and the run's end state, with endpoints `lagMs` after its head (undefined: not observed). */
function firstTraffic(lagMs: number | undefined): { at: number; sim: Simulation } {
  const sim = new Simulation(OPTIONS, fixedTiming({ headReadyMs: HEAD_READY_MS, replicaReadyMs: 1_000, ...(lagMs !== undefined ? { endpointsReadyMs: lagMs } : {}) }), { goal: 'B', activeSpec: 'A' });
  sim.runUntilIdle();
  const pending = sim.lastStatus.activeClusterName!;
  const first = sim.trafficChanges.find((c) => (c.weights.get(pending) ?? 0) > 0);
  return { at: first!.t, sim };
}

test('no weight moves onto the new cluster before its serve Service has a ready endpoint; the upgrade then completes as planned', () => {
  const lag = 60_000;
  const { at, sim } = firstTraffic(lag);
  // The new cluster was created at t≈0 (plus one action latency): its endpoints are ready at head + lag.
  expect(at).toBeGreaterThanOrEqual(HEAD_READY_MS + lag);
  expect(sim.lastStatus).toMatchObject({ phase: 'Running', reason: 'Promoted' });
  expect(sim.violations).toEqual([]);
  // While it waited, the status said so: the last run before the endpoints were ready.
  const waiting = sim.trace.filter((e) => e.t < HEAD_READY_MS + lag).pop()!;
  expect([waiting.t > HEAD_READY_MS, waiting.status.reason, waiting.status.pendingTargetCapacity]).toEqual([true, 'WaitingForCapacity', 50]);
  expect(sim.trafficChanges.map((c) => c.weights.get(sim.lastStatus.activeClusterName!) ?? 0)).toEqual([25, 50, 75, 100]);
});

test('without the lag (or with endpoints unobserved) the first weight moves as soon as Serve is ready, long before', () => {
  expect(firstTraffic(undefined).at).toBeLessThan(HEAD_READY_MS + 5_000);
  expect(firstTraffic(0).at).toBe(firstTraffic(undefined).at);
});
