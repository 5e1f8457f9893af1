import type { RayServicePlan } from '../engine/plan-rayservice';
import type { RoleBasedGroupPlan } from '../engine/plan-rbg';
import { Style } from './style';

/** Formats seconds as `1h02m03s`, `4m05s` or `6s`. */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m${String(r).padStart(2, '0')}s`;
  if (m > 0) return `${m}m${String(r).padStart(2, '0')}s`;
  return `${r}s`;
}

/**
 * A small text chart of the pending weight over time: columns are evenly spaced instants, a
 * filled cell means the new cluster gets at least that row's share, a dot is the old cluster's.
 */
export function weightChart(plan: RayServicePlan, style: Style, width = 60): string[] {
  const duration = Math.max(plan.durationSeconds, 1);
  const pendingAt = (t: number) => {
    let w = 0;
    for (const s of plan.steps) if (s.atSeconds <= t) w = s.action === 'promote' ? 100 : s.pendingWeight;
    return w;
  };
  const columns = Array.from({ length: width }, (_, i) => pendingAt((duration * i) / (width - 1)));
  const lines = [style.dim(`weight %   ${style.green('█')} new cluster   · old cluster`)];
  for (const level of [100, 80, 60, 40, 20]) {
    lines.push(`${String(level).padStart(5)} │${columns.map((w) => (w >= level ? style.green('█') : '·')).join('')}`);
  }
  lines.push(`      └${'─'.repeat(width)}`);
  const end = formatDuration(plan.durationSeconds);
  lines.push(`       0s${' '.repeat(Math.max(1, width - 2 - end.length))}${end}`);
  return lines;
}

/** Human-readable RayService plan: a table of steps, the chart, duration and peak capacity. */
export function renderRayServicePlan(plan: RayServicePlan, style: Style): string {
  const out = [style.bold(`RayService ${plan.name}: ${plan.strategy}`)];
  if (plan.steps.length === 0) {
    out.push('  no upgrade steps: a cluster-spec change is ignored (only the Serve config is applied in place)');
    return out.join('\n');
  }
  out.push(style.dim('      time  action          active cap/weight  pending cap/weight'));
  for (const s of plan.steps) {
    out.push(
      `${formatDuration(s.atSeconds).padStart(10)}  ${s.action.padEnd(14)}  ${`${s.activeTargetCapacity}% / ${s.activeWeight}%`.padStart(17)}  ${style.green(`${s.pendingTargetCapacity}% / ${s.pendingWeight}%`.padStart(18))}`,
    );
  }
  out.push('', ...weightChart(plan, style), '');
  if (plan.analysisQueries.length > 0) out.push(...renderGates(plan, style), '');
  out.push(`duration ${formatDuration(plan.durationSeconds)} (${plan.steps.length} steps), peak capacity ${plan.peakCapacityPercent}%, outcome ${plan.outcome}`);
  return out.join('\n');
}

/** The analysis part of a plan: each metric's query, and when each gate passes if every measurement does. */
function renderGates(plan: RayServicePlan, style: Style): string[] {
  const out = [style.bold('analysis'), ...plan.analysisQueries.map((q) => `  ${q.metric}: ${style.dim(q.query)}`)];
  for (const g of plan.gates) out.push(`${formatDuration(g.passedAtSeconds).padStart(10)}  ${g.kind} gate at ${g.pendingWeight}% passes`);
  return out;
}

/** Human-readable RoleBasedGroup plan: one line per round with updated replicas and partitions. */
export function renderRoleBasedGroupPlan(plan: RoleBasedGroupPlan & { rule?: string }, style: Style): string {
  const roles = Object.keys(plan.rounds[0]?.updated ?? {});
  const heading = (r: string) => `${r} updated/partition`;
  // Each column at least two spaces wider than its heading, so that long role names stay apart.
  const width = (r: string) => Math.max(24, heading(r).length + 2);
  const out = [style.bold(`RoleBasedGroup ${plan.name}${plan.rule ? ` (rule ${plan.rule})` : ''}: coordinated rolling update`)];
  if (plan.coordination === 'controller') {
    // RBG's own controller, which the rounds model (lib/engine/plan-rbg.ts): say what its first round does.
    out.push(style.dim("  run by RBG's controller: its first round releases every replica above the user's partition; each later round follows the workloads' progress of maxUnavailable replicas"));
  }
  out.push(style.dim(`  round  ${roles.map((r) => heading(r).padStart(width(r))).join('')}`));
  plan.rounds.forEach((round, i) => {
    out.push(`  ${String(i + 1).padStart(5)}  ${roles.map((r) => `${round.updated[r]} / ${round.partition[r]}`.padStart(width(r))).join('')}`);
  });
  const incomplete = plan.coordination === 'controller' ? 'stalls: only the slowest role may advance, and it reached its partition' : 'incomplete';
  out.push(`${plan.rounds.length} rounds, largest skew ${plan.maxSkewPercentObserved.toFixed(1)}%, ${plan.complete ? 'complete' : incomplete}`);
  return out.join('\n');
}
