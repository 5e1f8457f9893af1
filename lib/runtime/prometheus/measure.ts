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

/**
 * The measurements an executor took for each resource's next pass, keyed by resource: a pass asks
 * for them (`measureAnalysis` actions), the executor takes them after the pass, and the next pass
 * of the same resource receives them once (`takeAll`). A failed query is a measurement too.
 */
export class PendingMeasurements {
  private readonly byKey = new Map<string, AnalysisMeasurement[]>();

  /** `onError` hears each query that failed (for the executor's log). */
  constructor(
    private readonly now: () => number,
    private readonly onError: (key: string, action: MeasureAnalysisAction, error: string) => void,
  ) {}

  /** Takes the measurements of `actions` for `key`'s next pass, one after the other. */
  async measure(key: string, actions: readonly MeasureAnalysisAction[]): Promise<void> {
    const list = this.byKey.get(key) ?? [];
    for (const action of actions) {
      const m = await measureAnalysis(action, this.now);
      if (m.error !== undefined) this.onError(key, action, m.error);
      list.push(m);
    }
    this.byKey.set(key, list);
  }

  /** The measurements taken for `key` since the last call, handed over once. */
  takeAll(key: string): AnalysisMeasurement[] | undefined {
    const list = this.byKey.get(key);
    this.byKey.delete(key);
    return list;
  }
}
