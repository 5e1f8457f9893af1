/**
 * Carries out a `measureAnalysis` action, for every executor that runs an analysis (RayService
 * upgrades, RoleBasedGroup rollouts): the metric's query for the new version (and for the old one
 * when the condition compares them) against the configured Prometheus, at once, each within the
 * action's timeout. A query that fails becomes the measurement's `error`, which the engine counts
 * as inconclusive.
 */
import type { MeasureAnalysisAction } from '../../engine/actions';
import type { AnalysisMeasurement } from '../../engine/observation';
import { queryPrometheus } from './client';

/** The measurement of `action`, stamped with `now()` when its queries were sent. */
export async function measureAnalysis(action: MeasureAnalysisAction, now: () => number): Promise<AnalysisMeasurement> {
  const at = now();
  const base = { runId: action.runId, metric: action.metric, seq: action.seq, at };
  const timeoutMs = action.timeoutSeconds * 1000;
  try {
    const [value, activeValue] = await Promise.all([
      queryPrometheus(action.prometheusUrl, action.query, timeoutMs),
      action.activeQuery === undefined ? Promise.resolve(undefined) : queryPrometheus(action.prometheusUrl, action.activeQuery, timeoutMs),
    ]);
    return { ...base, ...(value !== undefined ? { value } : {}), ...(activeValue !== undefined ? { activeValue } : {}) };
  } catch (err) {
    return { ...base, error: err instanceof Error ? err.message : String(err) };
  }
}
