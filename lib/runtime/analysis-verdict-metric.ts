/**
 * `rayshift_analysis_verdicts_total`, the one counter of finished analysis runs of every resource an
 * executor gates (a RayService, each coordination of a RoleBasedGroup), each verdict counted once.
 */
import { Counter, Registry } from 'prom-client';
import type { AnalysisVerdict } from '../engine/analysis-status';

/** Which resource's analysis a verdict belongs to (the counter's `resource` label). */
export type AnalysisResource = 'RayService' | 'RoleBasedGroup';

/** The verdict counter, registered in a given registry; share one instance between the executors of one registry. */
export class AnalysisVerdictMetric {
  /** Finished analysis runs by resource, kind (step, background) and verdict. */
  readonly verdicts: Counter;
  /** The time of the newest verdict counted per analysis and the ids at that time, so each is counted once; set without counting on first sight (after a restart the status already holds old ones). */
  private readonly counted = new Map<string, { at: number; ids: Set<string> }>();

  constructor(registry: Registry) {
    this.verdicts = new Counter({
      name: 'rayshift_analysis_verdicts_total',
      help: 'Finished analysis runs of a RayService or RoleBasedGroup by kind and verdict (Successful, Failed, Inconclusive, Skipped)',
      labelNames: ['resource', 'namespace', 'name', 'kind', 'phase'],
      registers: [registry],
    });
  }

  /**
   * Counts the verdicts of one analysis (`key` names it: the resource and, for a RoleBasedGroup,
   * the coordination) newer than the newest counted, even when a stale read shows an older status in between.
   */
  observe(key: string, labels: { resource: AnalysisResource; namespace: string; name: string }, verdicts: readonly AnalysisVerdict[]): void {
    const seen = this.counted.get(key);
    // Verdicts are in time order; two may share a time.
    const isNew = (v: AnalysisVerdict) => seen !== undefined && (v.at > seen.at || (v.at === seen.at && !seen.ids.has(v.id)));
    for (const v of verdicts.filter(isNew)) this.verdicts.inc({ ...labels, kind: v.kind, phase: v.phase });
    const newest = verdicts.length > 0 ? verdicts[verdicts.length - 1].at : -Infinity;
    if (seen === undefined || newest > seen.at) this.counted.set(key, { at: newest, ids: new Set(verdicts.filter((v) => v.at === newest).map((v) => v.id)) });
    else if (newest === seen.at) for (const v of verdicts) if (v.at === newest) seen.ids.add(v.id);
  }

  /** Forgets what was counted of the analysis `key` (its resource was deleted). */
  forget(key: string): void {
    this.counted.delete(key);
  }
}
