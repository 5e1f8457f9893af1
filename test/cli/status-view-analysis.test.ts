/** `rayshift status` shows the analysis: the gate measuring (counts, last measurement) and the newest verdict, on the screen and in log lines. */
import { renderServiceLine, renderServiceScreen, type ServiceView } from '../../lib/cli/status-view';
import { resolveUpgradeAnalysis } from '../../lib/spec/analysis';
import type { RayServiceStatus } from '../../lib/engine/status';
import { fixedTiming, incremental, Simulation } from '../engine/harness';
import { plain } from './cli-io';

/** An upgrade whose new version fails 30 % of its requests from 50 % on, paused by its analysis. */
function pausedByAnalysis(): Simulation {
  const options = {
    ...incremental({ maxSurge: 50, step: 25, interval: 30, deadline: 3600 }),
    analysis: resolveUpgradeAnalysis({
      prometheusUrl: 'http://prometheus:9090',
      metrics: [{ name: 'errors', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.05 }, intervalSeconds: 10, count: 2 }],
      onFailure: 'pause',
    }),
  };
  const sim = new Simulation(options, fixedTiming(), {
    goal: 'B',
    activeSpec: 'A',
    measure: (a, _t, s) => {
      const pending = s.routeBackends()[1];
      return { value: pending !== undefined && pending.weight >= 50 && a.query.includes(`"${pending.cluster}"`) ? 0.3 : 0.01 };
    },
  });
  sim.runUntilIdle(3600_000);
  return sim;
}

const view = (engine: RayServiceStatus): ServiceView => ({ namespace: 'ml', name: 'svc', engine, conditions: [] });

test('a gate measuring shows its metrics; a failed verdict shows what decided', () => {
  const sim = pausedByAnalysis();
  const measuring = sim.trace.find((e) => e.status.analysis?.step?.phase === 'Running' && e.status.analysis.step.metrics[0].taken === 1)!;
  const screen = renderServiceScreen(view(measuring.status), measuring.t, plain).join('\n');
  expect(screen).toContain(`  analysis step gate at ${measuring.status.pendingWeight}%: measuring`);
  expect(screen).toContain('    errors           1 taken, 0 failed, 0 inconclusive; last successful: 0.01');

  const end = sim.lastStatus;
  expect(end).toMatchObject({ phase: 'Paused', reason: 'AnalysisFailed', pendingWeight: 50 });
  const last = renderServiceScreen(view(end), end.analysis!.verdicts.at(-1)!.at + 12_000, plain);
  expect(last).toContain('  last verdict: step gate at 50% Failed 12s ago: errors failed (1 failed, 0 inconclusive of 1; last: 0.3 > maximum 0.05)');
  expect(renderServiceLine(view(end), 0)).toMatch(/ Paused\/AnalysisFailed .* verdict=step@50:Failed$/);
  // The first gate (at 25 %) measuring, before any verdict.
  expect(renderServiceLine(view(measuring.status), 0)).toMatch(/ analysis=step@25:1$/);
});
