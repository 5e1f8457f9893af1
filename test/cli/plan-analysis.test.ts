/** `rayshift plan` of a RayService with an analysis: each metric's query and where each gate passes. */
import { stringify } from 'yaml';
import { rayshiftService } from '../spec/fixtures';
import { rayshiftIn } from './cli-io';

function serviceWithAnalysis(): string {
  const m = rayshiftService();
  m.spec.upgradeStrategy.clusterUpgradeOptions = { maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 60, gatewayClassName: 'istio' };
  m.spec.rayshift.analysis = {
    prometheusUrl: 'http://prometheus.monitoring:9090',
    metrics: [{ name: 'errors', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.02 }, intervalSeconds: 30, count: 3 }],
  };
  return stringify(m);
}

test('the plan lists the query and each gate; a gate of 3 × 30 s holds every step past the 60 s interval', async () => {
  const r = await rayshiftIn(['plan', '-'], { stdin: serviceWithAnalysis() });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('errors: (sum(rate(ray_serve_num_http_error_requests_total{ray_io_cluster="{{cluster}}",error_code=~"5.."}[30s])) or vector(0)) / sum(rate(');
  const gates = r.stdout.split('\n').filter((l) => l.includes('step gate at'));
  expect(gates.map((l) => l.trim().replace(/\s+/g, ' '))).toEqual([
    expect.stringMatching(/ step gate at 25% passes$/),
    expect.stringMatching(/ step gate at 50% passes$/),
    expect.stringMatching(/ step gate at 75% passes$/),
    expect.stringMatching(/ step gate at 100% passes$/),
  ]);
  const json = JSON.parse((await rayshiftIn(['plan', '--json', '-'], { stdin: serviceWithAnalysis() })).stdout);
  const shifts = json.plans[0].steps.filter((s: { action: string }) => s.action === 'shift-traffic');
  for (let i = 1; i < shifts.length; i++) expect(shifts[i].atSeconds - shifts[i - 1].atSeconds).toBeGreaterThanOrEqual(90);
  expect(json.plans[0].gates).toHaveLength(4);
});
