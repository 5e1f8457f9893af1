/**
 * What `rayshift status` shows of a RayService (`rayshift.dev`, or KubeRay's `ray.io/v1`), as pure functions of the object and
 * the time: a screen (redrawn in place on a terminal: bars for both weights and both target
 * capacities, the countdown to the next traffic step, conditions) and a one-line summary (printed
 * once per change when the output is a log). The object's fields and the next step's due time come
 * from `lib/runtime/rayservice/progress`, shared with the API server.
 */
import { nextTrafficStepAt, type ServiceView } from '../runtime/rayservice/progress';
import { analysisLines, analysisSummary } from './analysis-view';
import { formatDuration } from '../engine/plan-text';
import { describeOwner } from '../engine/shards';
import { Style } from './style';

/** The view's fields of a RayService object (shared with the API server's upgrade status). */
export { serviceView, type ServiceView } from '../runtime/rayservice/progress';

/** A bar of `width` cells filled to `percent`. */
export function bar(percent: number, width: number): string {
  const filled = Math.round((Math.max(0, Math.min(100, percent)) / 100) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** The full screen for a terminal, one string per line. */
export function renderServiceScreen(v: ServiceView, now: number, style: Style, barWidth = 30): string[] {
  const e = v.engine;
  const head = `${style.bold(`RayService ${v.namespace}/${v.name}`)}  ${e ? `${e.phase} (${e.reason})` : 'no status yet'}${v.executor === 'kuberay' ? '  executed by KubeRay' : ''}${v.owner ? style.dim(`  (${describeOwner(v.owner)})`) : ''}`;
  const lines = [head];
  if (v.generation !== undefined && v.observedGeneration !== undefined && v.observedGeneration < v.generation) {
    lines.push(style.yellow(`  spec generation ${v.generation} not observed yet (status is of generation ${v.observedGeneration})`));
  }
  if (!e) return lines;
  const side = (label: string, cluster: string | undefined, weight: number, capacity: number, paint: (s: string) => string) =>
    `  ${pad(label, 8)}${pad(cluster ?? '-', 22)} traffic ${paint(bar(weight, barWidth))} ${String(weight).padStart(3)}%   capacity ${paint(bar(capacity, barWidth / 2))} ${String(capacity).padStart(3)}%`;
  lines.push(side('active', e.activeClusterName, e.activeWeight, e.activeTargetCapacity, (s) => s));
  if (e.pendingClusterName !== undefined) lines.push(side('pending', e.pendingClusterName, e.pendingWeight, e.pendingTargetCapacity, style.green));
  const due = nextTrafficStepAt(v);
  if (due !== undefined) {
    const left = Math.max(0, due - now);
    const countdown = left < 60_000 ? `${(Math.ceil(left / 100) / 10).toFixed(1)}s` : formatDuration(left / 1000);
    lines.push(`  next traffic step ${left === 0 ? 'due now' : `in ${countdown}`} (${new Date(due).toISOString().slice(11, 23)} UTC)`);
  }
  if (e.rollback) lines.push(style.yellow(`  rolling back: ${e.rollback}`));
  if (e.analysis !== undefined) lines.push(...analysisLines(e.analysis, now, style));
  if (v.conditions.length > 0) {
    lines.push(`  ${v.conditions.map((c) => `${c.type}=${c.status === 'True' ? c.status : style.dim(c.status)}${c.reason ? ` (${c.reason})` : ''}`).join('  ')}`);
  }
  return lines;
}

/** One line per change, for logs: time, phase/reason, both clusters with weight and capacity. */
export function renderServiceLine(v: ServiceView, now: number): string {
  const e = v.engine;
  const time = new Date(now).toISOString().slice(11, 23);
  if (!e) return `${time} ${v.namespace}/${v.name} no status yet`;
  const clusters = e.pendingClusterName === undefined
    ? `active ${e.activeClusterName ?? '-'} w${e.activeWeight} cap${e.activeTargetCapacity}`
    : `active ${e.activeClusterName ?? '-'} w${e.activeWeight} cap${e.activeTargetCapacity} | pending ${e.pendingClusterName} w${e.pendingWeight} cap${e.pendingTargetCapacity}`;
  return `${time} ${v.namespace}/${v.name} ${e.phase}/${e.reason} ${clusters}${e.rollback ? ` rollback=${e.rollback}` : ''}${analysisSummary(e.analysis)}${v.executor === 'kuberay' ? ' (KubeRay)' : ''}`;
}

/** A log line without its leading `HH:MM:SS.mmm ` time: what a line-per-change watcher compares. */
export function withoutTime(line: string): string {
  return line.slice(13);
}
