/** The dashboard's view of the metric analysis (pure, DOM-free): runs, counts, measurements, verdicts and their chart marks. */
import type { AnalysisMetricStatusJson, UpgradeAnalysisJson } from '../../ui/src/api-types';
import { analysisRuns, countsText, formatValue, isFailedPhase, lastMeasurementText, verdictMarks, verdictsNewestFirst } from '../../ui/src/analysis';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const failing: AnalysisMetricStatusJson = {
  name: 'error-ratio',
  phase: 'Failed',
  taken: 2,
  successes: 0,
  failures: 2,
  inconclusives: 0,
  last: { time: iso(T0), result: 'Failed', value: 0.2, message: '0.2 > maximum 0.05' },
};

const analysis: UpgradeAnalysisJson = {
  step: { id: 'step/llm-b/25/1', kind: 'step', pendingWeight: 25, phase: 'Failed', metrics: [failing] },
  verdicts: [
    { id: 'step/llm-b/10/1', kind: 'step', pendingWeight: 10, phase: 'Successful', time: iso(T0 - 60_000) },
    { id: 'background/llm-b/0/1', kind: 'background', pendingWeight: 10, phase: 'Inconclusive', time: iso(T0 - 30_000), dryRun: true },
    { id: 'step/llm-b/25/1', kind: 'step', pendingWeight: 25, phase: 'Failed', time: iso(T0), message: 'error-ratio failed (0.2 > maximum 0.05)' },
  ],
};

test('the runs in flight, the step gate first; none without an analysis', () => {
  expect(analysisRuns({ ...analysis, background: { id: 'bg', kind: 'background' } }).map((r) => [r.title, r.run.id])).toEqual([
    ['Step gate', 'step/llm-b/25/1'],
    ['Background run', 'bg'],
  ]);
  expect(analysisRuns(undefined)).toEqual([]);
});

test('counts and the last measurement in words: the value and the message naming the bound', () => {
  expect(countsText(failing)).toBe('2 taken: 0 successful, 2 failed, 0 inconclusive');
  expect(countsText({ name: 'p99' })).toBe('0 taken: 0 successful, 0 failed, 0 inconclusive');
  expect(lastMeasurementText(failing)).toBe('0.2 > maximum 0.05');
  expect(lastMeasurementText({ name: 'p99', last: { time: iso(T0), value: 0.2, message: '0.2' } })).toBe('0.2');
  expect(lastMeasurementText({ name: 'p99', last: { time: iso(T0), value: 0.123456, message: 'within maximum 1' } })).toBe('0.1235: within maximum 1');
  expect(lastMeasurementText({ name: 'p99', last: { time: iso(T0), value: 250.123456, activeValue: 40, message: '250.1 > 40 + maxAboveActive 200' } })).toBe('250.1 (old cluster 40): 250.1 > 40 + maxAboveActive 200');
  expect(lastMeasurementText({ name: 'p99', last: { time: iso(T0), result: 'Inconclusive', message: 'Prometheus at http://p:9090: connection refused' } })).toBe('—: Prometheus at http://p:9090: connection refused');
  expect(lastMeasurementText({ name: 'p99' })).toBe('none yet');
});

test('values: four significant digits, integers whole, NaN and infinities as the JSON writes them', () => {
  expect(formatValue(0.0123456)).toBe('0.01235');
  expect(formatValue(1200)).toBe('1200');
  expect(formatValue('NaN')).toBe('NaN');
  expect(formatValue('Infinity')).toBe('Infinity');
  expect(formatValue(undefined)).toBe('—');
});

test('an inconclusive run counts as failed; successful and skipped ones do not', () => {
  expect(['Failed', 'Inconclusive', 'Successful', 'Skipped', 'Running', undefined].map(isFailedPhase)).toEqual([true, true, false, false, false, false]);
});

test('verdicts newest first; a mark per verdict at its time on the weight its run measured', () => {
  expect(verdictsNewestFirst(analysis).map((v) => v.phase)).toEqual(['Failed', 'Inconclusive', 'Successful']);
  expect(analysis.verdicts![0].phase).toBe('Successful');
  expect(verdictMarks(analysis)).toEqual([
    { at: T0 - 60_000, weight: 10, phase: 'Successful', label: 'Step gate at 10%: Successful' },
    { at: T0 - 30_000, weight: 10, phase: 'Inconclusive', label: 'Background run at 10%: Inconclusive (dry run)' },
    { at: T0, weight: 25, phase: 'Failed', label: 'Step gate at 25%: Failed' },
  ]);
  expect(verdictMarks({ verdicts: [{ id: 'x', phase: 'Failed' }] })).toEqual([]);
});
