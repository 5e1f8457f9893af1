/**
 * What the rollout page shows of the metric analysis, as pure functions of the upgrade status's
 * typed `analysis` (the step gate, the background run, the verdicts): the runs in flight, each
 * metric's counts and last measurement as words, the verdicts newest first, and where on the chart
 * each verdict happened.
 */
import type { AnalysisMetricStatusJson, AnalysisRunJson, AnalysisVerdictJson, UpgradeAnalysisJson } from './api-types';
import { timeOf } from './model';

/** A run in flight with the heading the page gives it. */
export interface TitledRun {
  readonly title: string;
  readonly run: AnalysisRunJson;
}

/** The runs in flight, the step gate first; empty without an analysis. */
export function analysisRuns(a: UpgradeAnalysisJson | undefined): TitledRun[] {
  const runs: TitledRun[] = [];
  if (a?.step) runs.push({ title: 'Step gate', run: a.step });
  if (a?.background) runs.push({ title: 'Background run', run: a.background });
  return runs;
}

/** A measured value as the page writes it: four significant digits, `—` when there is none. */
export function formatValue(v: number | string | undefined): string {
  if (v === undefined) return '—';
  // The JSON mapping of a double writes NaN and the infinities as strings.
  if (typeof v === 'string') return v;
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
}

/** A metric's counts in words: `3 taken: 1 successful, 2 failed, 0 inconclusive`. */
export function countsText(m: AnalysisMetricStatusJson): string {
  return `${m.taken ?? 0} taken: ${m.successes ?? 0} successful, ${m.failures ?? 0} failed, ${m.inconclusives ?? 0} inconclusive`;
}

/**
 * A metric's last measurement: the message, which names the value and the bound that decided
 * (`0.2 > maximum 0.05`) or why there is no value, preceded by the values when it does not already
 * start with them; `none yet` before the first.
 */
export function lastMeasurementText(m: AnalysisMetricStatusJson): string {
  const last = m.last;
  if (!last?.time && !last?.message) return 'none yet';
  const value = formatValue(last.value);
  const values = `${value}${last.activeValue !== undefined ? ` (old cluster ${formatValue(last.activeValue)})` : ''}`;
  if (!last.message) return values;
  return last.value !== undefined && last.activeValue === undefined && last.message.startsWith(value) ? last.message : `${values}: ${last.message}`;
}

/** True for a verdict or run phase that stops the upgrade (one home: the engine's analysis status). */
export { isFailedPhase } from '../../lib/engine/analysis-status';

/** The verdicts newest first (the status keeps them oldest first). */
export function verdictsNewestFirst(a: UpgradeAnalysisJson | undefined): AnalysisVerdictJson[] {
  return [...(a?.verdicts ?? [])].sort((x, y) => (timeOf(y.time) ?? 0) - (timeOf(x.time) ?? 0));
}

/** A verdict on the chart: at its time, on the new cluster's weight its run measured. */
export interface VerdictMark {
  readonly at: number;
  readonly weight: number;
  readonly phase: string;
  /** What the marker's tooltip says. */
  readonly label: string;
}

/** A run's kind as the page names it. */
export function kindLabel(kind: string | undefined): string {
  return kind === 'background' ? 'Background run' : 'Step gate';
}

/** One mark per verdict that has a time, oldest first. */
export function verdictMarks(a: UpgradeAnalysisJson | undefined): VerdictMark[] {
  return (a?.verdicts ?? []).flatMap((v) => {
    const at = timeOf(v.time);
    if (at === undefined) return [];
    const phase = v.phase ?? 'Unknown';
    const weight = v.pendingWeight ?? 0;
    return [{ at, weight, phase, label: `${kindLabel(v.kind)} at ${weight}%: ${phase}${v.dryRun ? ' (dry run)' : ''}` }];
  });
}
