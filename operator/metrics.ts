/** Prometheus metrics of the operator (prom-client), in their own registry. */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RayServicePhase, RayServiceStatus } from '../lib/engine/status';
import { AnalysisVerdictMetric } from '../lib/runtime/analysis-verdict-metric';
import { SecondsSinceGauge } from '../lib/runtime/seconds-since-gauge';

/** Every phase, each a series of the phase gauge. */
const RAYSERVICE_PHASES: readonly RayServicePhase[] = ['Initializing', 'Running', 'Upgrading', 'Paused', 'RollingBack', 'Failed'];

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
  /** Finished analysis runs (`rayshift_analysis_verdicts_total`), shared with the RoleBasedGroup controller's metrics. */
  readonly verdicts = new AnalysisVerdictMetric(this.registry);
  /** The last value each analysis metric measured for the new cluster. */
  readonly measured = new Gauge({ name: 'rayshift_analysis_measured_value', help: 'Last value an analysis metric measured for the new cluster of a RayService', labelNames: ['namespace', 'name', 'kind', 'metric'], registers: [this.registry] });
  /** The `measured` series set per service, to drop with it. */
  private readonly measuredSeries = new Map<string, Set<string>>();
  /** Seconds the surge of each service has been Unschedulable (0 when it is not), computed at scrape time. */
  readonly surgeUnschedulable: SecondsSinceGauge<'namespace' | 'name'>;

  /** `now`: the clock the surge gauge is computed with at each scrape. */
  constructor(now: () => number = Date.now) {
    this.surgeUnschedulable = new SecondsSinceGauge(
      'rayshift_surge_unschedulable_seconds',
      'Seconds the new cluster of a RayService upgrade has had Pods the scheduler marks Unschedulable (0: none)',
      ['namespace', 'name'],
      this.registry,
      now,
    );
  }

  /** Records a service's status after a pass. */
  observe(namespace: string, name: string, s: RayServiceStatus): void {
    this.weight.set({ namespace, name, side: 'active' }, s.activeWeight);
    this.weight.set({ namespace, name, side: 'pending' }, s.pendingWeight);
    this.capacity.set({ namespace, name, side: 'active' }, s.activeTargetCapacity);
    this.capacity.set({ namespace, name, side: 'pending' }, s.pendingTargetCapacity);
    for (const p of RAYSERVICE_PHASES) this.phase.set({ namespace, name, phase: p }, p === s.phase ? 1 : 0);
    this.surgeUnschedulable.record({ namespace, name }, s.surgeUnschedulable?.since);
    this.observeAnalysis(namespace, name, s);
  }

  private observeAnalysis(namespace: string, name: string, s: RayServiceStatus): void {
    const key = `${namespace}/${name}`;
    this.verdicts.observe(`RayService/${key}`, { resource: 'RayService', namespace, name }, s.analysis?.verdicts ?? []);
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
    for (const p of RAYSERVICE_PHASES) this.phase.remove({ namespace, name, phase: p });
    const key = `${namespace}/${name}`;
    this.surgeUnschedulable.remove({ namespace, name });
    this.verdicts.forget(`RayService/${key}`);
    for (const series of this.measuredSeries.get(key) ?? []) {
      const [kind, metric] = series.split('\n');
      this.measured.remove({ namespace, name, kind, metric });
    }
    this.measuredSeries.delete(key);
  }
}
