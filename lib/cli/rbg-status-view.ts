/**
 * What `rayshift status rbg/NAME` shows of a RoleBasedGroup whose coordinated rollout rayshift
 * executes: per coordination its phase, rounds, skew against maxSkew, the blocking role and the
 * deadline; per role bars of updated and ready replicas; the router route's weight per release; the
 * first round's capacity preflight when it did not fit; its analysis as a RayService's
 * (`analysis-view.ts`). Pure functions of the group object.
 */
import type { WarmupGateStatus } from '../engine/rbg-warmup';
import type { CoordinationStatus } from '../engine/rbg-coordination-status';
import { describeOwner, type ObjectOwner } from '../engine/shards';
import { describeCapacity, describeCoordination, describeRouter, describeSurge, describeWarmup, readRolloutStatus } from '../runtime/rbg/status';
import { analysisLines, analysisSummary } from './analysis-view';
import { bar } from './status-view';
import { Style } from './style';

/** The parts of a RoleBasedGroup the view reads. */
export interface GroupView {
  readonly namespace: string;
  readonly name: string;
  readonly generation?: number;
  readonly observedGeneration?: number;
  readonly invalid?: string;
  readonly coordinations: readonly CoordinationStatus[];
  /** The warmup of the latest warmed revision (RBG v0.8). */
  readonly warmup?: WarmupGateStatus;
  /** The operator replica working on the group, when one recorded itself. */
  readonly owner?: ObjectOwner;
}

/** Reads the view from a RoleBasedGroup object (its `rayshift.dev/rollout-status` annotation). */
export function groupView(obj: { metadata: { namespace?: string; name?: string; generation?: number; annotations?: Record<string, string> } }): GroupView {
  const doc = readRolloutStatus(obj);
  return {
    namespace: String(obj.metadata.namespace ?? ''),
    name: String(obj.metadata.name ?? ''),
    generation: obj.metadata.generation,
    observedGeneration: doc?.observedGeneration,
    ...(doc?.invalid !== undefined ? { invalid: doc.invalid } : {}),
    coordinations: doc?.coordinations ?? [],
    ...(doc?.warmup ? { warmup: doc.warmup } : {}),
    ...(doc?.owner ? { owner: doc.owner } : {}),
  };
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** The full screen for a terminal, one string per line. */
export function renderGroupScreen(v: GroupView, now: number, style: Style, barWidth = 30): string[] {
  const lines = [`${style.bold(`RoleBasedGroup ${v.namespace}/${v.name}`)}${v.owner ? style.dim(`  (${describeOwner(v.owner)})`) : ''}`];
  if (v.invalid !== undefined) lines.push(style.red(`  coordination not run: ${v.invalid}`));
  if (v.coordinations.length === 0 && v.invalid === undefined) lines.push('  no rollout status yet (is the group labelled for the rayshift executor?)');
  if (v.warmup) {
    const w = v.warmup;
    const left = Date.parse(w.deadlineAt) - now;
    const text = `  warmup ${w.name}  ${w.phase} (${w.reason})  ${w.message}${w.phase === 'Warming' ? `  timeout ${left > 0 ? `in ${Math.ceil(left / 1000)}s` : 'passed'}` : ''}`;
    lines.push(w.phase === 'Failed' ? style.red(text) : w.phase === 'Proceeded' ? style.yellow(text) : text);
  }
  for (const c of v.coordinations) {
    const skew = `skew ${c.skewPercent.toFixed(1)}% of max ${c.maxSkewPercent}%`;
    const back = c.rollback !== undefined ? `  rollback round ${c.rollback.rounds}` : '';
    lines.push(`  ${style.bold(c.name)}  ${c.phase} (${c.reason})  round ${c.rounds}${back}  ${c.skewPercent > c.maxSkewPercent ? style.yellow(skew) : skew}${c.wave ? `  batch wave ${c.wave.current}/${c.wave.total}` : ''}`);
    if (c.rollback !== undefined) lines.push(`    ${c.message}`);
    for (const r of c.roles) {
      if (r.replicasByRevision !== undefined) {
        const { abandoned, previous } = r.replicasByRevision;
        lines.push(`    ${pad(r.name, 12)} previous revision ${style.green(bar((previous / Math.max(1, r.desired)) * 100, barWidth))} ${String(previous).padStart(4)}/${r.desired}   abandoned ${String(abandoned).padStart(4)}   ready ${String(r.ready).padStart(4)}   partition ${r.partition}  ${r.phase}`);
        continue;
      }
      lines.push(`    ${pad(r.name, 12)} updated ${style.green(bar((r.updated / Math.max(1, r.desired)) * 100, barWidth))} ${String(r.updated).padStart(4)}/${r.desired}   ready ${bar((r.ready / Math.max(1, r.desired)) * 100, barWidth / 2)} ${String(r.ready).padStart(4)}   partition ${r.partition}  ${r.phase}`);
    }
    if (c.blockingRole !== undefined) lines.push(style.yellow(`    blocked by ${c.blockingRole}: ${c.message}`));
    if (c.router !== undefined) lines.push(c.router.problem !== undefined ? style.yellow(`    ${describeRouter(c.router)}`) : `    ${describeRouter(c.router)}`);
    if (c.capacity !== undefined) {
      const text = `    ${describeCapacity(c.capacity)}`;
      lines.push(c.phase === 'Failed' ? style.red(text) : style.yellow(text));
    }
    if (c.surgeUnschedulable !== undefined) lines.push(style.yellow(`    ${describeSurge(c.surgeUnschedulable)}: ${c.surgeUnschedulable.message}`));
    if (c.deadlineAt !== undefined && c.phase === 'Progressing') {
      const left = Date.parse(c.deadlineAt) - now;
      lines.push(`    progress deadline ${left > 0 ? `in ${Math.ceil(left / 1000)}s` : 'passed'} (${c.deadlineAt})`);
    }
    if (c.analysis !== undefined) lines.push(...analysisLines(c.analysis, now, style, '    '));
  }
  return lines;
}

/** One line per coordination, for logs (with its analysis, as a RayService's line). */
export function renderGroupLines(v: GroupView, now: number): string[] {
  const time = new Date(now).toISOString().slice(11, 23);
  if (v.invalid !== undefined) return [`${time} ${v.namespace}/${v.name} invalid: ${v.invalid}`];
  if (v.coordinations.length === 0) return [`${time} ${v.namespace}/${v.name} no rollout status yet`];
  const warmup = v.warmup?.phase === 'Warming' || v.coordinations.some((c) => c.reason.startsWith('Warm')) ? [`${time} ${v.namespace}/${v.name} ${describeWarmup(v.warmup!)}`] : [];
  return [...warmup, ...v.coordinations.map((c) => `${time} ${v.namespace}/${v.name} ${describeCoordination(c)}${analysisSummary(c.analysis)}`)];
}

/** True once every coordination has finished (complete, failed or rolled back) for the current generation. */
export function rolloutFinished(v: GroupView): { done: boolean; failed: boolean } {
  const current = v.generation === undefined || v.observedGeneration === v.generation;
  const done = current && v.coordinations.length > 0 && v.coordinations.every((c) => c.phase !== 'Progressing' && c.phase !== 'RollingBack');
  return { done, failed: done && v.coordinations.some((c) => c.phase !== 'Complete') };
}
