/**
 * What `rayshift status` shows of an analysis (lib/engine/analysis-status.ts), the same for a
 * RayService and for each coordination of a RoleBasedGroup: screen lines (the runs measuring with
 * their metrics' counts, then the newest verdict) and the part of a log line that changes with it.
 */
import type { AnalysisRunStatus, AnalysisStatus } from '../engine/analysis-status';
import { formatDuration } from '../engine/plan-text';
import type { Style } from './style';

/** The analysis on the screen, each line starting with `indent`: each run in flight with its metrics' counts and last measurement, then the newest verdict. */
export function analysisLines(a: AnalysisStatus, now: number, style: Style, indent = '  '): string[] {
  const lines: string[] = [];
  for (const run of [a.step, a.background]) {
    if (run === undefined || run.phase !== 'Running') continue;
    lines.push(`${indent}analysis ${runName(run)}: measuring`);
    for (const m of run.metrics) {
      const last = m.last === undefined ? 'no measurement yet' : `last ${m.last.result.toLowerCase()}: ${m.last.message}`;
      lines.push(`${indent}  ${m.name.padEnd(16)} ${m.taken} taken, ${m.failures} failed, ${m.inconclusives} inconclusive; ${last}`);
    }
  }
  const v = a.verdicts[a.verdicts.length - 1];
  if (v !== undefined) {
    const ago = formatDuration(Math.max(0, now - v.at) / 1000);
    const text = `${indent}last verdict: ${v.kind} gate at ${v.pendingWeight}% ${v.phase}${v.dryRun ? ' (dry run)' : ''} ${ago} ago: ${v.message}`;
    lines.push(v.phase === 'Successful' ? text : style.yellow(text));
  }
  return lines;
}

function runName(run: AnalysisRunStatus): string {
  return run.kind === 'step' ? `step gate at ${run.pendingWeight}%` : 'background';
}

/** The analysis in a log line (` analysis=step@25:2 verdict=step@25:Successful`): the runs measuring and the newest verdict, so a change prints a line. */
export function analysisSummary(a: AnalysisStatus | undefined): string {
  if (a === undefined) return '';
  const measuring = [a.step, a.background].filter((r) => r !== undefined && r.phase === 'Running').map((r) => `${r!.kind}@${r!.pendingWeight}:${r!.metrics.reduce((n, m) => n + m.taken, 0)}`);
  const v = a.verdicts[a.verdicts.length - 1];
  return `${measuring.length > 0 ? ` analysis=${measuring.join(',')}` : ''}${v !== undefined ? ` verdict=${v.kind}@${v.pendingWeight}:${v.phase}` : ''}`;
}
