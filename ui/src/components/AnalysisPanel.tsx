/**
 * The metric analysis of a rollout: the step gate and the background run in flight (weight, phase,
 * hold, each metric's counts and last measurement) and the verdict history, newest first, the
 * runs that did not pass highlighted. The same for a RayService's rollout and for each coordination
 * of a RoleBasedGroup (where the percent is the new revision's share of the replicas).
 */
import type { AnalysisRunJson, UpgradeAnalysisJson } from '../api';
import { analysisRuns, countsText, isFailedPhase, kindLabel, lastMeasurementText, verdictsNewestFirst } from '../analysis';
import { clockOf } from '../model';
import { ColumnHeadings } from './small';

function phaseClass(phase: string | undefined): string {
  return isFailedPhase(phase) ? 'error' : phase === 'Successful' ? 'ok' : '';
}

/** Where the panel sits on its page: a prefix of its element ids, unique on the page, and the level of its headings. */
interface Placement {
  readonly scope: string;
  readonly Heading: 'h3' | 'h4';
}

function Run({ title, run, at: { scope, Heading } }: { title: string; run: AnalysisRunJson; at: Placement }) {
  const id = `${scope}run-${run.kind ?? 'step'}`;
  return (
    <div class={`run${isFailedPhase(run.phase) ? ' run-failed' : ''}`} data-testid={`run-${run.kind ?? 'step'}`} data-phase={run.phase} data-weight={run.pendingWeight ?? 0}>
      <Heading id={`${id}-heading`}>
        {title} at {run.pendingWeight ?? 0}%: <span class={phaseClass(run.phase)}>{run.phase ?? 'Unknown'}</span>
        {run.skipped ? ' (skipped)' : ''}
      </Heading>
      <p class="muted small">
        {run.startTime ? `Weights took effect at ${clockOf(run.startTime)}.` : ''}
        {run.holdUntilTime ? ` Held until ${clockOf(run.holdUntilTime)}.` : ''}
      </p>
      <table class="metrics" aria-labelledby={`${id}-heading`}>
        <ColumnHeadings names={['Metric', 'Phase', 'Measurements', 'Last measurement']} />
        <tbody>
          {(run.metrics ?? []).map((m) => (
            <tr key={m.name} data-metric={m.name} data-phase={m.phase}>
              <th scope="row">{m.name}</th>
              <td class={phaseClass(m.phase)}>{m.phase}</td>
              <td>{countsText(m)}</td>
              <td>{lastMeasurementText(m)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The analysis panel's content (the page gives it its section and heading). For a page that shows
 * several panels (one per coordination of a RoleBasedGroup), `scope` prefixes its element ids and
 * `headingLevel` puts its headings under the page's.
 */
export function AnalysisPanel({ analysis, scope = '', headingLevel = 3 }: { analysis: UpgradeAnalysisJson; scope?: string; headingLevel?: 3 | 4 }) {
  const runs = analysisRuns(analysis);
  const verdicts = verdictsNewestFirst(analysis);
  const at: Placement = { scope, Heading: headingLevel === 4 ? 'h4' : 'h3' };
  return (
    <div data-testid="analysis">
      {runs.length === 0 ? <p class="muted">No run is measuring now.</p> : runs.map((r) => <Run key={r.title} title={r.title} run={r.run} at={at} />)}
      <at.Heading id={`${scope}verdicts-heading`}>Verdicts</at.Heading>
      {verdicts.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <table class="verdicts" aria-labelledby={`${scope}verdicts-heading`} data-testid="verdicts">
          <ColumnHeadings names={['Time', 'Run', 'Verdict', 'Why']} />
          <tbody>
            {verdicts.map((v) => (
              <tr key={v.id} class={isFailedPhase(v.phase) ? 'failed' : ''} data-phase={v.phase} data-dry-run={v.dryRun ? 'true' : undefined}>
                <th scope="row">{clockOf(v.time)}</th>
                <td>
                  {kindLabel(v.kind)} at {v.pendingWeight ?? 0}%
                </td>
                <td class={phaseClass(v.phase)}>
                  {v.phase}
                  {v.dryRun && <span class="tag">dry run</span>}
                </td>
                <td>{v.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
