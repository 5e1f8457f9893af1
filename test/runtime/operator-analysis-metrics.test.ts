/** The operator's analysis metrics: each verdict counted once (none recounted after a restart), of RayServices and RoleBasedGroups alike, the last measured value per metric, and both dropped with the service. */
import { OperatorMetrics } from '../../operator/metrics';
import type { AnalysisVerdict } from '../../lib/engine/analysis-status';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { RbgRolloutMetrics } from '../../lib/runtime/rbg/metrics';
import type { RolloutStatusDocument } from '../../lib/runtime/rbg/status';
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
  expect(await sample(m, 'rayshift_analysis_verdicts_total')).toEqual([{ labels: { resource: 'RayService', namespace: 'ml', name: 'svc', kind: 'step', phase: 'Successful' }, value: 4 }]);
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

/** A group's status whose coordinations carry these verdicts. */
function groupStatus(verdicts: Record<string, AnalysisVerdict[]>): RolloutStatusDocument {
  const coordination = (name: string, vs: AnalysisVerdict[]) => ({ name, phase: 'Progressing', skewPercent: 0, roles: [], analysis: { newReplicas: 3, verdicts: vs } }) as unknown as CoordinationStatus;
  return { observedGeneration: 2, coordinations: Object.entries(verdicts).map(([name, vs]) => coordination(name, vs)) };
}

const verdict = (id: string, at: number, phase: AnalysisVerdict['phase'] = 'Successful'): AnalysisVerdict => ({ id, kind: 'step', pendingWeight: 25, phase, at, dryRun: false, message: '' });

test("a RoleBasedGroup's verdicts are counted once per coordination in the same counter, told apart by resource", async () => {
  const m = new OperatorMetrics();
  const rbg = new RbgRolloutMetrics(m.registry, m.verdicts);
  const pass = { rounds: 0, deadlines: 0 };
  const a = verdict('step/r/25/1', 1000);
  const b = verdict('step/r/50/2', 2000, 'Failed');
  const c = verdict('step/r/25/3', 1000);
  rbg.observe('llm', 'pd', groupStatus({ pd: [], other: [] }), pass);
  rbg.observe('llm', 'pd', groupStatus({ pd: [a], other: [] }), pass);
  rbg.observe('llm', 'pd', groupStatus({ pd: [a, b], other: [c] }), pass);
  // Seen again, and a stale read in between: nothing recounted.
  rbg.observe('llm', 'pd', groupStatus({ pd: [a], other: [] }), pass);
  rbg.observe('llm', 'pd', groupStatus({ pd: [a, b], other: [c] }), pass);
  // A RayService of the same name counts apart.
  const sim = upgradeWithGates();
  for (const e of sim.trace) m.observe('llm', 'pd', e.status);
  expect(await sample(m, 'rayshift_analysis_verdicts_total')).toEqual([
    { labels: { resource: 'RoleBasedGroup', namespace: 'llm', name: 'pd', kind: 'step', phase: 'Successful' }, value: 2 },
    { labels: { resource: 'RoleBasedGroup', namespace: 'llm', name: 'pd', kind: 'step', phase: 'Failed' }, value: 1 },
    { labels: { resource: 'RayService', namespace: 'llm', name: 'pd', kind: 'step', phase: 'Successful' }, value: 4 },
  ]);
});

test('a restarted operator counts none of the verdicts already in a group\'s status', async () => {
  const m = new OperatorMetrics();
  const rbg = new RbgRolloutMetrics(m.registry, m.verdicts);
  const doc = groupStatus({ pd: [verdict('step/r/25/1', 1000)] });
  rbg.observe('llm', 'pd', doc, { rounds: 0, deadlines: 0 });
  rbg.observe('llm', 'pd', doc, { rounds: 0, deadlines: 0 });
  expect(await sample(m, 'rayshift_analysis_verdicts_total')).toEqual([]);
});
