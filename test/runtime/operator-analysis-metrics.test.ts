/** The operator's analysis metrics: each verdict counted once (none recounted after a restart), the last measured value per metric, and both dropped with the service. */
import { OperatorMetrics } from '../../operator/metrics';
import { resolveUpgradeAnalysis } from '../../lib/spec/analysis';
import { fixedTiming, incremental, Simulation } from '../engine/harness';

function upgradeWithGates(): Simulation {
  const sim = new Simulation(
    {
      ...incremental({ maxSurge: 50, step: 25, interval: 30, deadline: 3600 }),
      analysis: resolveUpgradeAnalysis({ prometheusUrl: 'http://prometheus:9090', metrics: [{ name: 'errors', query: 'x{c="{{cluster}}"}', successCondition: { maximum: 0.05 }, intervalSeconds: 10 }] }),
    },
    fixedTiming(),
    { goal: 'B', activeSpec: 'A', measure: () => ({ value: 0.01 }) },
  );
  sim.runUntilIdle();
  return sim;
}

async function sample(m: OperatorMetrics, metric: string): Promise<{ labels: Record<string, unknown>; value: number }[]> {
  return ((await m.registry.getSingleMetric(metric)!.get()).values as { labels: Record<string, unknown>; value: number }[]).filter((v) => v.value !== 0 || metric.endsWith('_value'));
}

test('every verdict is counted once, in order, whatever the number of passes that saw it', async () => {
  const sim = upgradeWithGates();
  const m = new OperatorMetrics();
  for (const e of sim.trace) {
    m.observe('ml', 'svc', e.status);
    m.observe('ml', 'svc', e.status);
    // A stale read in between (an older status) recounts nothing.
    m.observe('ml', 'svc', sim.trace[0].status);
  }
  expect(sim.lastStatus.analysis!.verdicts).toHaveLength(4);
  expect(await sample(m, 'rayshift_analysis_verdicts_total')).toEqual([{ labels: { namespace: 'ml', name: 'svc', kind: 'step', phase: 'Successful' }, value: 4 }]);
  const measuring = sim.trace.find((e) => e.status.analysis?.step?.metrics[0].last !== undefined)!;
  m.observe('ml', 'svc', measuring.status);
  expect(await sample(m, 'rayshift_analysis_measured_value')).toEqual([{ labels: { namespace: 'ml', name: 'svc', kind: 'step', metric: 'errors' }, value: 0.01 }]);
  m.forget('ml', 'svc');
  expect(await sample(m, 'rayshift_analysis_measured_value')).toEqual([]);
});

test('a restarted operator counts none of the verdicts already in the status', async () => {
  const sim = upgradeWithGates();
  const m = new OperatorMetrics();
  m.observe('ml', 'svc', sim.lastStatus);
  m.observe('ml', 'svc', sim.lastStatus);
  expect(await sample(m, 'rayshift_analysis_verdicts_total')).toEqual([]);
});
