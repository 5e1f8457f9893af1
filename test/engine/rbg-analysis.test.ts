/**
 * The analysis gate of a RoleBasedGroup's coordinated rollout (`analysedCoordinationStep`), pure:
 * a simulated group whose workloads reach every written partition at once, driven pass by pass on
 * a simulated clock, with scripted measurements.
 */
import fc from 'fast-check';
import { resolveUpgradeAnalysis, type UpgradeAnalysis } from '../../lib/spec/analysis';
import { analysedCoordinationStep } from '../../lib/engine/rbg-analysis';
import { coordinationStep } from '../../lib/engine/rbg-coordination';
import type { CoordinationStep, ExecutorRule, ObservedRole } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import type { AnalysisMeasurement, AnalysisOverride } from '../../lib/engine/observation';
import { MAX_ANALYSIS_VERDICTS } from '../../lib/engine/analysis-status';
import { isVerdictEvent } from '../../lib/engine/analysis-gate';

const T0 = Date.parse('2026-11-21T10:00:00Z');

interface Role {
  desired: number;
  updated: number;
  partition?: number;
  maxUnavailable?: number;
  paused: boolean;
  revision: string;
}

/** What a measurement returns: a value, no value (`undefined`) or an error; `percent` is the new revision's share of the replicas now. */
type Metric = (m: { percent: number; seq: number; kind: string }) => number | undefined | Error;

interface Pass {
  readonly now: number;
  readonly step: CoordinationStep;
  /** Replicas on the new revision after the pass's writes took effect, percent of all. */
  readonly newPercent: number;
  /** Σ(desired − partition) the pass left written (the share the partitions allow). */
  readonly allowed: number;
}

function rule(desired: Record<string, number>, maxSkewPercent = 20): ExecutorRule {
  return {
    name: 'pd',
    maxSkewPercent,
    roles: Object.entries(desired).map(([name, replicas]) => ({ name, replicas, partition: 0, maxUnavailable: Math.max(1, Math.floor(replicas / 5)) })),
    progressDeadlineSeconds: 600,
    rollbackOnDeadline: false,
    capacityPolicy: 'wait',
    surgeUnschedulableSeconds: 120,
  };
}

/** A group rolled to v1, then its template changed to v2: runs passes until the rollout ends (or `maxPasses`). */
function simulate(desired: Record<string, number>, analysis: UpgradeAnalysis, metric: Metric, opts: { maxSkewPercent?: number; maxPasses?: number; override?: (p: Pass) => AnalysisOverride | undefined } = {}): Pass[] {
  const r = rule(desired, opts.maxSkewPercent);
  const state = new Map<string, Role>(Object.entries(desired).map(([name, n]) => [name, { desired: n, updated: n, paused: false, revision: 'v1' }]));
  const resolved = resolveUpgradeAnalysis(analysis);
  let now = T0;
  let previous: CoordinationStatus | undefined = apply(coordinationStep({ rule: r, roles: observe(state), controllerCaughtUp: true, now }), state).status;
  for (const role of state.values()) role.revision = 'v2';
  for (const role of state.values()) role.updated = 0;
  let measurements: AnalysisMeasurement[] = [];
  let override: AnalysisOverride | undefined;
  const passes: Pass[] = [];
  for (let i = 0; i < (opts.maxPasses ?? 2000); i++) {
    now += 1000;
    const step = analysedCoordinationStep(
      { rule: r, roles: observe(state), controllerCaughtUp: true, previous, now },
      { analysis: resolved, namespace: 'pd', group: 'g', ...(override ? { override } : {}), ...(measurements.length > 0 ? { measurements } : {}) },
    );
    apply(step, state);
    const total = [...state.values()].reduce((s, x) => s + x.desired, 0);
    const pass: Pass = {
      now,
      step,
      newPercent: (100 * [...state.values()].reduce((s, x) => s + x.updated, 0)) / total,
      allowed: [...state.values()].reduce((s, x) => s + (x.paused ? x.updated : x.desired - (x.partition ?? 0)), 0),
    };
    passes.push(pass);
    measurements = (step.measure ?? []).map((a) => {
      const run = [step.status.analysis?.step, step.status.analysis?.background].find((x) => x?.id === a.runId)!;
      const v = metric({ percent: pass.newPercent, seq: a.seq, kind: run.kind });
      return { runId: a.runId, metric: a.metric, seq: a.seq, at: now, ...(v instanceof Error ? { error: v.message } : v !== undefined ? { value: v } : {}) };
    });
    override = opts.override?.(pass);
    previous = step.status;
    if (step.status.phase !== 'Progressing' && step.writes.length === 0) break;
    if (measurements.length === 0 && step.wakeAt !== undefined && step.writes.length === 0) now = Math.max(now, step.wakeAt - 1000);
  }
  return passes;
}

function observe(state: Map<string, Role>): Map<string, ObservedRole> {
  return new Map(
    [...state].map(([name, r], index) => [
      name,
      { name, index, desired: r.desired, ...(r.partition !== undefined ? { partition: r.partition, maxUnavailable: r.maxUnavailable } : {}), paused: r.paused, revision: r.revision, progress: { updatedReplicas: r.updated, readyReplicas: r.desired, source: 'group' as const } },
    ]),
  );
}

/** Writes the step's role fields; the workloads reach them at once (a raised partition returns replicas to the old revision). */
function apply(step: CoordinationStep, state: Map<string, Role>): CoordinationStep {
  for (const w of step.writes) Object.assign(state.get(w.name)!, { partition: w.partition, maxUnavailable: w.maxUnavailable, paused: w.paused });
  for (const r of state.values()) if (!r.paused || r.updated > r.desired - (r.partition ?? 0)) r.updated = r.desired - Math.min(r.partition ?? 0, r.desired);
  return step;
}

const ok: Metric = () => 0.01;
const badFrom = (percent: number): Metric => (m) => (m.percent >= percent ? 0.5 : 0.01);
const errors = (metrics: Partial<UpgradeAnalysis> = {}): UpgradeAnalysis => ({
  prometheusUrl: 'http://prometheus:9090',
  metrics: [{ name: 'errors', query: 'sum(rate(errors_total{controller_revision_hash=~"{{cluster}}"}[{{window}}]))', successCondition: { maximum: 0.05 }, intervalSeconds: 10 }],
  ...metrics,
});
const last = (passes: Pass[]) => passes[passes.length - 1];
const verdicts = (passes: Pass[]) => last(passes).step.status.analysis?.verdicts ?? [];

describe('the gate of a coordinated rollout', () => {
  test.each([
    { name: 'every gate passes: each round after the first waits for the step gate of the share in effect; the rollout completes', metric: ok, analysis: errors(), phase: 'Complete', reason: 'RolloutComplete', verdict: 'Successful' },
    { name: 'a failing share with onFailure rollback: every partition back to replicas, nothing left on the new revision', metric: badFrom(30), analysis: errors(), phase: 'RolledBack', reason: 'AnalysisFailed', verdict: 'Failed' },
    { name: 'a failing share with onFailure abort: every role stopped (paused) where it stands', metric: badFrom(30), analysis: errors({ onFailure: 'abort' }), phase: 'Failed', reason: 'AnalysisFailed', verdict: 'Failed' },
    { name: 'a failing share with onFailure pause: held paused where it stands until a person decides', metric: badFrom(30), analysis: errors({ onFailure: 'pause' }), phase: 'Progressing', reason: 'AnalysisFailed', verdict: 'Failed' },
    { name: 'a dry run: the rollout completes and the failed verdicts are recorded', metric: badFrom(30), analysis: errors({ dryRun: true }), phase: 'Complete', reason: 'RolloutComplete', verdict: 'Failed' },
    { name: 'no data is inconclusive, counted as a failure', metric: () => undefined, analysis: errors(), phase: 'RolledBack', reason: 'AnalysisFailed', verdict: 'Inconclusive' },
    { name: 'a Prometheus error is inconclusive, counted as a failure', metric: () => new Error('connection refused'), analysis: errors({ onFailure: 'abort' }), phase: 'Failed', reason: 'AnalysisFailed', verdict: 'Inconclusive' },
  ])('$name', ({ metric, analysis, phase, reason, verdict }) => {
    const passes = simulate({ prefill: 10, decode: 5 }, analysis, metric, { maxPasses: 400 });
    const end = last(passes).step.status;
    expect([end.phase, end.reason]).toEqual([phase, reason]);
    const rounds = passes.filter((p) => p.step.events.some((e) => e.reason === 'RolloutRound'));
    // The first round is never gated: it is written before any measurement.
    expect(passes.findIndex((p) => (p.step.measure ?? []).length > 0)).toBeGreaterThan(passes.indexOf(rounds[0]));
    // Every later round is written in the pass that passed (or, in a dry run, finished) the step gate of the share before it.
    for (const round of rounds.slice(1)) {
      const gate = round.step.status.analysis!.verdicts.filter((v) => v.kind === 'step').pop();
      expect(gate).toMatchObject({ at: round.now, phase: analysis.dryRun ? expect.any(String) : 'Successful' });
    }
    const roles = end.roles.map((r) => [r.name, r.updated]);
    if (phase === 'Complete') {
      expect(rounds.length).toBeGreaterThan(1);
      expect(roles).toEqual([['prefill', 10], ['decode', 5]]);
      // …and the completion followed a gate at 100%.
      expect(verdicts(passes).filter((v) => v.kind === 'step').pop()).toMatchObject({ pendingWeight: 100 });
    }
    const events = passes.flatMap((p) => p.step.events.map((e) => e.reason));
    expect(events).toContain(`Analysis${verdict}`);
    // What `pulumi up` prints of the Events (isVerdictEvent): one line per verdict, none for a round, a completion or a rollback.
    expect(passes.flatMap((p) => p.step.events.filter(isVerdictEvent).map((e) => e.reason))).toEqual(verdicts(passes).map((v) => `Analysis${v.phase}`));
    expect(verdicts(passes).some((v) => v.phase === verdict && v.dryRun === (analysis.dryRun === true))).toBe(true);
    if (phase === 'RolledBack') {
      expect(roles).toEqual([['prefill', 0], ['decode', 0]]);
      expect(end.roles.map((r) => r.partition)).toEqual([10, 5]);
      expect(last(passes).step.status.analysis?.step).toBeUndefined();
    }
    if (phase === 'Failed' || phase === 'Progressing') {
      expect(end.roles.some((r) => r.updated > 0)).toBe(true);
      expect(last(passes).step.writes).toEqual([]);
    }
  });

  test('a group seen for the first time, fully on its template, is armed Complete without a measurement', () => {
    const observed = new Map(['prefill', 'decode'].map((name, index) => [name, { name, index, desired: 4, paused: false, revision: 'v1', progress: { updatedReplicas: 4, readyReplicas: 4, source: 'group' as const } }]));
    const step = analysedCoordinationStep({ rule: rule({ prefill: 4, decode: 4 }), roles: observed, controllerCaughtUp: true, now: T0 }, { analysis: resolveUpgradeAnalysis(errors()), namespace: 'pd', group: 'g' });
    expect(step.status).toMatchObject({ phase: 'Complete', rounds: 0, analysis: { verdicts: [] } });
    expect(step.measure).toBeUndefined();
  });

  test('waiting for the gate is reported as WaitingForAnalysis with the share, and a measurement is progress (no deadline while it measures)', () => {
    const passes = simulate({ prefill: 10, decode: 5 }, errors({ metrics: [{ name: 'errors', query: 'x{rev=~"{{cluster}}"}', successCondition: { maximum: 1 }, intervalSeconds: 400, count: 3 }] }), ok, { maxPasses: 4000 });
    const waiting = passes.find((p) => p.step.status.reason === 'WaitingForAnalysis')!;
    expect(waiting.step.status.message).toMatch(/step gate at \d+% \(\d+ of 15 replicas\)|waiting for the new revision's \d+%/);
    expect(last(passes).step.status.phase).toBe('Complete');
  });

  test('the measurement asks for the query with {{service}} the group and {{cluster}} the new revision', () => {
    const passes = simulate({ prefill: 4, decode: 2 }, errors({ metrics: [{ name: 'q', query: 'up{ns="{{namespace}}",g="{{service}}",rev=~"{{cluster}}"}[{{window}}]', successCondition: { maximum: 1 } }] }), ok, { maxPasses: 30 });
    const action = passes.flatMap((p) => p.step.measure ?? [])[0];
    const revision = passes[0].step.status.revision;
    expect(action).toMatchObject({ type: 'measureAnalysis', metric: 'q', seq: 0, prometheusUrl: 'http://prometheus:9090', query: `up{ns="pd",g="g",rev=~"${revision}"}[30s]` });
    expect(action.activeQuery).toBeUndefined();
  });

  test('a hold keeps the share that reaches it for its seconds, measured throughout', () => {
    const passes = simulate({ prefill: 10, decode: 10 }, errors({ holds: [{ weightPercent: 40, seconds: 120 }] }), ok, { maxPasses: 2000, maxSkewPercent: 10 });
    const gates = verdicts(passes).filter((v) => v.kind === 'step');
    const held = gates.find((v) => v.pendingWeight >= 40)!;
    const run = passes.map((p) => p.step.status.analysis?.step).find((s) => s?.id === held.id)!;
    expect(held.at - run.startedAt).toBeGreaterThanOrEqual(120_000);
    expect(last(passes).step.status.phase).toBe('Complete');
  });

  test('a failing background run rolls the rollout back, whatever the step gates say', () => {
    const analysis = errors({ background: true, metrics: [{ name: 'errors', query: 'x{r=~"{{cluster}}"}', successCondition: { maximum: 0.05 }, intervalSeconds: 5, failureLimit: 1, count: 2 }] });
    const passes = simulate({ prefill: 10, decode: 5 }, analysis, (m) => (m.kind === 'background' && m.seq >= 2 ? 0.5 : 0.01), { maxPasses: 400 });
    expect(last(passes).step.status).toMatchObject({ phase: 'RolledBack', reason: 'AnalysisFailed' });
    expect(verdicts(passes).find((v) => v.phase === 'Failed')).toMatchObject({ kind: 'background' });
  });

  test('pause, then a retry of the named run that passes: the rollout goes on and completes', () => {
    let retried = false;
    let bad = true;
    const passes = simulate({ prefill: 10, decode: 5 }, errors({ onFailure: 'pause' }), (m) => (bad && m.percent >= 30 ? 0.5 : 0.01), {
      maxPasses: 600,
      override: (p) => {
        const run = p.step.status.analysis?.step;
        if (retried || p.step.status.reason !== 'AnalysisFailed' || run === undefined) return undefined;
        retried = true;
        bad = false;
        return { action: 'retry', runId: run.id };
      },
    });
    expect(retried).toBe(true);
    expect(last(passes).step.status.phase).toBe('Complete');
  });

  test('the status keeps at most MAX_ANALYSIS_VERDICTS verdicts, the newest', () => {
    const passes = simulate({ prefill: 40, decode: 40 }, errors(), ok, { maxPasses: 6000, maxSkewPercent: 1 });
    expect(last(passes).step.status.phase).toBe('Complete');
    const events = passes.flatMap((p) => p.step.events).filter((e) => e.reason === 'AnalysisSuccessful');
    expect(events.length).toBeGreaterThan(MAX_ANALYSIS_VERDICTS);
    expect(verdicts(passes)).toHaveLength(MAX_ANALYSIS_VERDICTS);
    expect(events[0].message).toMatch(/^pd: step gate at \d+% successful/);
  });
});

describe('property: a failed analysis never lets the new revision gain replicas', () => {
  const scenario = fc.record({
    prefill: fc.integer({ min: 1, max: 30 }),
    decode: fc.integer({ min: 1, max: 30 }),
    maxSkew: fc.integer({ min: 1, max: 100 }),
    count: fc.integer({ min: 1, max: 3 }),
    failureLimit: fc.integer({ min: 0, max: 2 }),
    onFailure: fc.constantFrom('rollback' as const, 'abort' as const, 'pause' as const),
    background: fc.boolean(),
    failFrom: fc.integer({ min: 1, max: 100 }),
    seed: fc.integer(),
  });

  test('after the first failed (or inconclusive) verdict, the replicas the partitions allow on the new revision never increase', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        let noise = sc.seed;
        const metric: Metric = (m) => {
          noise = (noise * 1103515245 + 12345) & 0x7fffffff;
          if (noise % 17 === 0) return undefined;
          return m.percent >= sc.failFrom ? 0.5 : 0.01;
        };
        const analysis = errors({ onFailure: sc.onFailure, background: sc.background, metrics: [{ name: 'errors', query: 'x{r=~"{{cluster}}"}', successCondition: { maximum: 0.05 }, intervalSeconds: 5, count: sc.count, failureLimit: Math.min(sc.failureLimit, sc.count - 1) }] });
        const passes = simulate({ prefill: sc.prefill, decode: sc.decode }, analysis, metric, { maxSkewPercent: sc.maxSkew, maxPasses: 1500 });
        const failedAt = passes.findIndex((p) => (p.step.status.analysis?.verdicts ?? []).some((v) => v.phase === 'Failed' || v.phase === 'Inconclusive'));
        if (failedAt < 0) {
          expect(last(passes).step.status.phase).toBe('Complete');
          return;
        }
        let allowed = passes[failedAt].allowed;
        for (const p of passes.slice(failedAt)) {
          expect(p.allowed).toBeLessThanOrEqual(allowed);
          allowed = p.allowed;
        }
        expect(last(passes).step.status.reason).toBe('AnalysisFailed');
      }),
      { numRuns: 150 },
    );
  });
});
