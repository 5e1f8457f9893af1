/** Prometheus metrics of the operator (prom-client), in their own registry. */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RayServiceStatus } from '../lib/engine/status';

/** The operator's metrics. */
export class OperatorMetrics {
  /** The registry `/metrics` serves. */
  readonly registry = new Registry();
  /** Route weight per service and side. */
  readonly weight = new Gauge({ name: 'rayshift_traffic_weight_percent', help: 'Route weight of each cluster of a RayService', labelNames: ['namespace', 'name', 'side'], registers: [this.registry] });
  /** Serve target_capacity per service and side. */
  readonly capacity = new Gauge({ name: 'rayshift_target_capacity_percent', help: 'Serve target_capacity of each cluster of a RayService', labelNames: ['namespace', 'name', 'side'], registers: [this.registry] });
  /** 1 for the current phase of each service. */
  readonly phase = new Gauge({ name: 'rayshift_phase', help: 'Current phase of a RayService (1 = in this phase)', labelNames: ['namespace', 'name', 'phase'], registers: [this.registry] });
  /** Reconcile durations. */
  readonly reconcileSeconds = new Histogram({
    name: 'rayshift_reconcile_duration_seconds',
    help: 'Duration of one reconcile pass',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  /** How late each traffic step was written after its due time. */
  readonly stepLateness = new Histogram({
    name: 'rayshift_step_lateness_seconds',
    help: 'Time from a traffic step being due to its route write',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  /** Traffic steps written before their due time (the engine never decides one early; this would show a clock or cache bug). */
  readonly stepsEarly = new Counter({ name: 'rayshift_steps_early_total', help: 'Traffic steps whose route write preceded their due time', registers: [this.registry] });
  /** Reconcile failures (each retried with backoff). */
  readonly errors = new Counter({ name: 'rayshift_reconcile_errors_total', help: 'Failed reconcile passes', registers: [this.registry] });
  /** API writes made. */
  readonly writes = new Counter({ name: 'rayshift_api_writes_total', help: 'Kubernetes API writes made by reconciles', registers: [this.registry] });
  /** Finished analysis runs by kind (step, background) and verdict. */
  readonly verdicts = new Counter({ name: 'rayshift_analysis_verdicts_total', help: 'Finished analysis runs of a RayService by kind and verdict (Successful, Failed, Inconclusive, Skipped)', labelNames: ['namespace', 'name', 'kind', 'phase'], registers: [this.registry] });
  /** The last value each analysis metric measured for the new cluster. */
  readonly measured = new Gauge({ name: 'rayshift_analysis_measured_value', help: 'Last value an analysis metric measured for the new cluster of a RayService', labelNames: ['namespace', 'name', 'kind', 'metric'], registers: [this.registry] });
  /** The `measured` series set per service, to drop with it. */
  private readonly measuredSeries = new Map<string, Set<string>>();
  /** The time of the newest verdict counted per service and the ids at that time, so each is counted once; set without counting on first sight (after a restart the status already holds old ones). */
  private readonly countedVerdict = new Map<string, { at: number; ids: Set<string> }>();

  /** Records a service's status after a pass. */
  observe(namespace: string, name: string, s: RayServiceStatus): void {
    this.weight.set({ namespace, name, side: 'active' }, s.activeWeight);
    this.weight.set({ namespace, name, side: 'pending' }, s.pendingWeight);
    this.capacity.set({ namespace, name, side: 'active' }, s.activeTargetCapacity);
    this.capacity.set({ namespace, name, side: 'pending' }, s.pendingTargetCapacity);
    for (const p of ['Initializing', 'Running', 'Upgrading', 'Paused', 'RollingBack']) this.phase.set({ namespace, name, phase: p }, p === s.phase ? 1 : 0);
    this.observeAnalysis(namespace, name, s);
  }

  private observeAnalysis(namespace: string, name: string, s: RayServiceStatus): void {
    const key = `${namespace}/${name}`;
    const verdicts = s.analysis?.verdicts ?? [];
    const seen = this.countedVerdict.get(key);
    // Newer than the newest counted (verdicts are in time order; two may share a time): counted once,
    // even when a stale read shows an older status in between.
    const isNew = (v: { at: number; id: string }) => seen !== undefined && (v.at > seen.at || (v.at === seen.at && !seen.ids.has(v.id)));
    for (const v of verdicts.filter(isNew)) this.verdicts.inc({ namespace, name, kind: v.kind, phase: v.phase });
    const newest = verdicts.length > 0 ? verdicts[verdicts.length - 1].at : -Infinity;
    if (seen === undefined || newest > seen.at) this.countedVerdict.set(key, { at: newest, ids: new Set(verdicts.filter((v) => v.at === newest).map((v) => v.id)) });
    else if (newest === seen.at) for (const v of verdicts) if (v.at === newest) seen.ids.add(v.id);
    for (const run of [s.analysis?.step, s.analysis?.background]) {
      if (run === undefined) continue;
      for (const m of run.metrics) {
        if (m.last?.value === undefined) continue;
        this.measured.set({ namespace, name, kind: run.kind, metric: m.name }, m.last.value);
        this.measuredSeries.set(key, (this.measuredSeries.get(key) ?? new Set()).add(`${run.kind}\n${m.name}`));
      }
    }
  }

  /** Drops a deleted service's series. */
  forget(namespace: string, name: string): void {
    for (const side of ['active', 'pending']) {
      this.weight.remove({ namespace, name, side });
      this.capacity.remove({ namespace, name, side });
    }
    for (const p of ['Initializing', 'Running', 'Upgrading', 'Paused', 'RollingBack']) this.phase.remove({ namespace, name, phase: p });
    const key = `${namespace}/${name}`;
    this.countedVerdict.delete(key);
    for (const series of this.measuredSeries.get(key) ?? []) {
      const [kind, metric] = series.split('\n');
      this.measured.remove({ namespace, name, kind, metric });
    }
    this.measuredSeries.delete(key);
  }
}
