/** `rayshift_surge_unschedulable_seconds`: seconds since the surge's first Unschedulable Pod, computed at scrape time from the status, 0 without one, dropped with the service. */
import { OperatorMetrics } from '../../operator/metrics';
import type { RayServiceStatus } from '../../lib/engine/status';

const base: RayServiceStatus = {
  phase: 'Upgrading', reason: 'WaitingForHead', activeClusterName: 'svc-aaaaa', pendingClusterName: 'svc-bbbbb', activeTargetCapacity: 100, pendingTargetCapacity: 0,
  activeWeight: 100, pendingWeight: 0, trafficConfirmed: true, deletions: [],
};

async function values(m: OperatorMetrics): Promise<{ labels: Record<string, unknown>; value: number }[]> {
  return (await m.registry.getSingleMetric('rayshift_surge_unschedulable_seconds')!.get()).values as { labels: Record<string, unknown>; value: number }[];
}

test('the gauge grows with the clock between passes, reads 0 once the Pods are scheduled, and goes with the service', async () => {
  let now = 50_000;
  const m = new OperatorMetrics(() => now);
  m.observe('ml', 'svc', base);
  expect(await values(m)).toEqual([{ labels: { namespace: 'ml', name: 'svc' }, value: 0 }]);
  m.observe('ml', 'svc', { ...base, surgeUnschedulable: { pods: 2, since: 20_000, message: '0/1 nodes are available', boundExceeded: false } });
  expect(await values(m)).toEqual([{ labels: { namespace: 'ml', name: 'svc' }, value: 30 }]);
  // No pass in between: the scrape still tells how long.
  now = 140_500;
  expect(await values(m)).toEqual([{ labels: { namespace: 'ml', name: 'svc' }, value: 120.5 }]);
  m.observe('ml', 'svc', base);
  expect(await values(m)).toEqual([{ labels: { namespace: 'ml', name: 'svc' }, value: 0 }]);
  m.forget('ml', 'svc');
  expect(await values(m)).toEqual([]);
});
