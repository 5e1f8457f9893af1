/** Prometheus metrics of RoleBasedGroup coordinated rollouts (prom-client), registered in a given registry. */
import { Counter, Gauge, Registry } from 'prom-client';
import { AnalysisVerdictMetric } from '../analysis-verdict-metric';
import { SecondsSinceGauge } from '../seconds-since-gauge';
import type { RolloutStatusDocument } from './status';

const PHASES = ['Progressing', 'Complete', 'Failed', 'RollingBack', 'RolledBack'] as const;

/** The executor's metrics; pass the operator's registry to serve them on its `/metrics`. */
export class RbgRolloutMetrics {
  /** Updated replicas per coordinated role. */
  readonly updated: Gauge;
  /** Ready replicas per coordinated role. */
  readonly ready: Gauge;
  /** Partition written per coordinated role. */
  readonly partition: Gauge;
  /** Current progress skew per coordination, percent. */
  readonly skew: Gauge;
  /** 1 for the current phase of each coordination. */
  readonly phase: Gauge;
  /** Rounds written. */
  readonly rounds: Counter;
  /** Coordinations stopped by their progress deadline. */
  readonly deadlines: Counter;
  /** Failed reconcile passes (each retried with backoff). */
  readonly errors: Counter;
  /** Seconds each coordination's new-revision replicas have been Unschedulable (0 when none are), computed at scrape time. */
  readonly surgeUnschedulable: SecondsSinceGauge<'namespace' | 'name' | 'coordination'>;
  /** The last status recorded per group, to remove exactly its series when it goes. */
  private readonly last = new Map<string, RolloutStatusDocument>();

  /**
   * `registry`: where the series are registered; `verdicts`: the analysis verdict counter, each
   * coordination's verdicts counted once under `resource="RoleBasedGroup"` (pass the operator's, which
   * counts the RayServices' in the same registry); `now`: the clock the surge gauge is computed with
   * at each scrape.
   */
  constructor(
    readonly registry: Registry = new Registry(),
    private readonly verdicts: AnalysisVerdictMetric = new AnalysisVerdictMetric(registry),
    now: () => number = Date.now,
  ) {
    const registers = [registry];
    const roleLabels = ['namespace', 'name', 'coordination', 'role'];
    this.updated = new Gauge({ name: 'rayshift_rbg_role_updated_replicas', help: 'Replicas of a coordinated role on the new revision', labelNames: roleLabels, registers });
    this.ready = new Gauge({ name: 'rayshift_rbg_role_ready_replicas', help: 'Ready replicas of a coordinated role', labelNames: roleLabels, registers });
    this.partition = new Gauge({ name: 'rayshift_rbg_role_partition', help: 'Partition written on a coordinated role (replicas kept on the old revision)', labelNames: roleLabels, registers });
    this.skew = new Gauge({ name: 'rayshift_rbg_skew_percent', help: 'Progress skew between the roles of a coordination', labelNames: ['namespace', 'name', 'coordination'], registers });
    this.phase = new Gauge({ name: 'rayshift_rbg_phase', help: 'Phase of a coordination (1 = in this phase)', labelNames: ['namespace', 'name', 'coordination', 'phase'], registers });
    this.rounds = new Counter({ name: 'rayshift_rbg_rounds_total', help: 'Coordinated rollout rounds written', labelNames: ['namespace', 'name'], registers });
    this.deadlines = new Counter({ name: 'rayshift_rbg_progress_deadline_exceeded_total', help: 'Coordinations stopped by their progress deadline', labelNames: ['namespace', 'name'], registers });
    this.errors = new Counter({ name: 'rayshift_rbg_reconcile_errors_total', help: 'Failed RoleBasedGroup reconcile passes', registers });
    this.surgeUnschedulable = new SecondsSinceGauge(
      'rayshift_rbg_surge_unschedulable_seconds',
      'Seconds the new-revision replicas of a coordinated rollout have had Pods the scheduler marks Unschedulable (0: none)',
      ['namespace', 'name', 'coordination'],
      registry,
      now,
    );
  }

  /** Records a group's status after a pass (each new analysis verdict counted once), and the rounds and deadline Events of the pass. */
  observe(namespace: string, name: string, doc: RolloutStatusDocument, pass: { rounds: number; deadlines: number }): void {
    this.last.set(`${namespace}/${name}`, doc);
    for (const c of doc.coordinations) {
      this.skew.set({ namespace, name, coordination: c.name }, c.skewPercent);
      this.surgeUnschedulable.record({ namespace, name, coordination: c.name }, c.surgeUnschedulable ? Date.parse(c.surgeUnschedulable.since) : undefined);
      if (c.analysis !== undefined) this.verdicts.observe(verdictKey(namespace, name, c.name), { resource: 'RoleBasedGroup', namespace, name }, c.analysis.verdicts);
      for (const p of PHASES) this.phase.set({ namespace, name, coordination: c.name, phase: p }, p === c.phase ? 1 : 0);
      for (const r of c.roles) {
        const labels = { namespace, name, coordination: c.name, role: r.name };
        this.updated.set(labels, r.updated);
        this.ready.set(labels, r.ready);
        this.partition.set(labels, r.partition);
      }
    }
    if (pass.rounds > 0) this.rounds.inc({ namespace, name }, pass.rounds);
    if (pass.deadlines > 0) this.deadlines.inc({ namespace, name }, pass.deadlines);
  }

  /** Drops every series of a deleted group. */
  forget(namespace: string, name: string): void {
    const doc = this.last.get(`${namespace}/${name}`);
    this.last.delete(`${namespace}/${name}`);
    this.rounds.remove({ namespace, name });
    this.deadlines.remove({ namespace, name });
    for (const c of doc?.coordinations ?? []) {
      this.skew.remove({ namespace, name, coordination: c.name });
      this.surgeUnschedulable.remove({ namespace, name, coordination: c.name });
      this.verdicts.forget(verdictKey(namespace, name, c.name));
      for (const p of PHASES) this.phase.remove({ namespace, name, coordination: c.name, phase: p });
      for (const r of c.roles) for (const g of [this.updated, this.ready, this.partition]) g.remove({ namespace, name, coordination: c.name, role: r.name });
    }
  }
}

/** The verdict counter's key of one coordination's analysis. */
function verdictKey(namespace: string, name: string, coordination: string): string {
  return `RoleBasedGroup/${namespace}/${name}/${coordination}`;
}
