import type { PlanPeak, PlanUsage } from '../engine/plan-cost';
import type { RayServicePlan, RayServicePlanCluster, RayServicePlanPeaks } from '../engine/plan-rayservice';
import { dipText, formatDuration } from '../engine/plan-text';
import type { RbgPlanRound, RoleBasedGroupPlan } from '../engine/plan-rbg';
import { exceedsSkew } from '../engine/rbg-bound';
import type { CliRayServicePlan, PlanCapacity, SkippedObject } from './plan-documents';
import { Style } from './style';

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

/** Pods and accelerators as a plan shows them: `10 Pods, 16 nvidia.com/gpu`. */
export function formatUsage(u: PlanUsage): string {
  return [`${u.pods} Pod${u.pods === 1 ? '' : 's'}`, ...Object.entries(u.accelerators).sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => `${n} ${name}`)].join(', ');
}

function formatCluster(c: RayServicePlanCluster | undefined): string {
  if (c === undefined) return '—';
  return c.usage === undefined ? `${c.capacityPercent}%` : `${c.capacityPercent}%: ${formatUsage(c.usage)}`;
}

/** The footprint table: each cluster's capacity, Pods and accelerators after every moment something changes. */
function renderFootprint(plan: RayServicePlan, style: Style): string[] {
  const rows = plan.footprint.map((p) => [formatDuration(p.atSeconds), p.events.join(', '), formatCluster(p.old), formatCluster(p.new), formatCluster(p.total)]);
  const head = ['time', 'what changes', 'old cluster', 'new cluster', 'total'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => (i === 0 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ')}`.trimEnd();
  return [style.dim(line(head)), ...rows.map(line)];
}

/** The peaks, those with the same span together: `peak 200% capacity, 10 Pods for 1m00s (0s to 1m00s)`. */
function renderRayServicePeaks(peak: RayServicePlanPeaks): string {
  const parts: [string, PlanPeak][] = [];
  if (peak.capacityPercent) parts.push([`${peak.capacityPercent.value}% capacity`, peak.capacityPercent]);
  if (peak.pods) parts.push([`${peak.pods.value} Pod${peak.pods.value === 1 ? '' : 's'}`, peak.pods]);
  for (const [name, p] of Object.entries(peak.accelerators)) parts.push([`${p.value} ${name}`, p]);
  const spans = new Map<string, string[]>();
  for (const [what, p] of parts) {
    const span = `for ${formatDuration(p.lasts)} (${formatDuration(p.from)} to ${formatDuration(p.until)})`;
    spans.set(span, [...(spans.get(span) ?? []), what]);
  }
  return `peak ${[...spans].map(([span, what]) => `${what.join(', ')} ${span}`).join('; ')}`;
}

/** Human-readable RayService plan: a table of steps, the chart, the footprint of the clusters, duration and peak. */
export function renderRayServicePlan(plan: CliRayServicePlan, style: Style): string {
  const out = [style.bold(`RayService ${plan.name}: ${plan.strategy}`)];
  if (plan.defaultStrategy) out.push(`  ${plan.defaultStrategy}`);
  if (plan.capacity) out.push(renderCapacity(plan.capacity, style));
  if (plan.outcome === 'refused') {
    out.push('  refused: under capacityPolicy shrinkFirst an upgrade whose new Pods do not fit even once the old cluster is gone does not start');
    return out.join('\n');
  }
  if (plan.steps.length === 0) {
    out.push('  no upgrade: changes to rayClusterConfig are not rolled out (the Serve config is still applied in place)');
    return out.join('\n');
  }
  out.push(style.dim('      time  action          active cap/weight  pending cap/weight'));
  for (const s of plan.steps) {
    out.push(
      `${formatDuration(s.atSeconds).padStart(10)}  ${s.action.padEnd(14)}  ${`${s.activeTargetCapacity}% / ${s.activeWeight}%`.padStart(17)}  ${style.green(`${s.pendingTargetCapacity}% / ${s.pendingWeight}%`.padStart(18))}`,
    );
  }
  // Only the incremental upgrade moves traffic over time; NewCluster switches it all at once.
  out.push('', ...(plan.strategy === 'NewClusterWithIncrementalUpgrade' ? [...weightChart(plan, style), ''] : []));
  if (plan.analysisQueries.length > 0) out.push(...renderGates(plan, style), '');
  out.push(...renderFootprint(plan, style), '');
  out.push(`duration ${formatDuration(plan.durationSeconds)} (${plan.steps.length} steps), outcome ${plan.outcome}`);
  out.push(renderRayServicePeaks(plan.peak));
  if (plan.dip) out.push(style.yellow(dipText(plan.dip)));
  // The simulated clusters are ready at once: every wait for Pods to start adds to the real peak (and dip).
  out.push(style.dim(`  (times assume every cluster is ready at once: the real ${plan.dip ? 'dip and peak also last' : 'peak also lasts'} while the new cluster starts)`));
  return out.join('\n');
}

/** The capacity line of `plan --cluster`: the preflight of an upgrade started now. */
function renderCapacity(c: PlanCapacity, style: Style): string {
  const against = `namespace ${c.namespace}${c.activeCluster ? `, serving ${c.activeCluster}` : ''}`;
  switch (c.outcome) {
    case 'fits': return `  capacity (${against}): ${style.green('fits')}`;
    case 'fitsAfterOldShrinks': return `  capacity (${against}): ${style.yellow('fits after the old cluster shrinks')}: ${c.message ?? ''}`;
    case 'doesNotFit': return `  capacity (${against}): ${style.red('does not fit')}: ${c.message ?? ''}`;
    default: return `  capacity (${against}): ${style.dim(c.message ?? 'not checked')}`;
  }
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
  // With usage each role's cell also holds its Pods, and a last column all roles' Pods and accelerators.
  const costed = plan.rounds.some((round) => round.usage !== undefined);
  const heading = (r: string) => `${r} updated/partition${costed ? ' · Pods' : ''}`;
  // Each column at least two spaces wider than its heading, so that long role names stay apart.
  const width = (r: string) => Math.max(24, heading(r).length + 2);
  const out = [style.bold(`RoleBasedGroup ${plan.name}${plan.rule ? ` (rule ${plan.rule})` : ''}: coordinated rolling update`)];
  if (plan.coordination === 'controller') {
    // RBG's own controller, which the rounds model (lib/engine/plan-rbg.ts): say what its first round does.
    out.push(style.dim("  run by RBG's controller: its first round releases every replica above the user's partition; each later round follows the workloads' progress of maxUnavailable replicas"));
  }
  const totals = plan.rounds.map((round) => (round.usage === undefined ? '' : formatUsage(round.usage.total)));
  const totalWidth = Math.max('all roles'.length, ...totals.map((t) => t.length));
  const last = (text: string) => (costed ? `  ${text.padEnd(totalWidth)}` : '');
  // With a router, a last column: the new release's route weight once the round's replicas are ready.
  const routed = plan.rounds.some((round) => round.weight !== undefined);
  const weight = (round: RbgPlanRound) => (routed ? `${String(round.weight ?? '').padStart(14)}` : '');
  out.push(style.dim(`  round  ${roles.map((r) => heading(r).padStart(width(r))).join('')}${last('all roles')}${routed ? '  new weight %' : ''}`));
  plan.rounds.forEach((round, i) => {
    const pods = (r: string) => (round.usage === undefined ? '' : ` · ${round.usage.roles[r].pods}`);
    const held = round.heldForRoute ? style.dim(`  ${round.heldForRoute.join(', ')} keep their last old replica until the route leaves the old release`) : '';
    out.push(`  ${String(i + 1).padStart(5)}  ${roles.map((r) => `${round.updated[r]} / ${round.partition[r]}${pods(r)}`.padStart(width(r))).join('')}${last(totals[i])}${weight(round)}${held}`);
  });
  const incomplete = plan.coordination === 'controller' ? 'stalls: only the slowest role may advance, and it reached its partition' : 'incomplete';
  out.push(`${plan.rounds.length} rounds, largest skew ${plan.maxSkewPercentObserved.toFixed(1)}%, ${plan.complete ? 'complete' : incomplete}`);
  if (plan.oldRouter === 'scaledToZero') out.push(style.dim("  then the old release's router Deployment is scaled to 0 replicas, once the route sends it 0"));
  if (plan.peak?.pods) {
    const parts: [string, PlanPeak][] = [[`${plan.peak.pods.value} Pods`, plan.peak.pods], ...Object.entries(plan.peak.accelerators).map(([n, p]): [string, PlanPeak] => [`${p.value} ${n}`, p])];
    out.push(`peak ${parts.map(([what, p]) => `${what} in ${p.lasts} of ${plan.rounds.length} rounds (from round ${p.from})`).join('; ')}`);
  }
  if (plan.rollback) {
    out.push(style.bold(`if the gate fails after round ${plan.rollback.afterRound}: rollback rounds back to the previous revision`));
    if (routed) out.push(style.dim('  the route sends the abandoned release nothing (new weight 0) before the first rollback round'));
    out.push(style.dim(`  round  ${roles.map((r) => `${r} abandoned/partition`.padStart(width(r))).join('')}${routed ? '  new weight %' : ''}`));
    plan.rollback.rounds.forEach((round, i) => out.push(`  ${String(i + 1).padStart(5)}  ${roles.map((r) => `${round.updated[r]} / ${round.partition[r]}`.padStart(width(r))).join('')}${weight(round)}`));
    out.push(`${plan.rollback.rounds.length} rollback rounds, no replica left on the abandoned revision`);
  }
  const skewWarning = renderSkewWarning(plan);
  if (skewWarning) out.push(`${style.yellow('warning:')} ${skewWarning}`);
  return out.join('\n');
}

/** Why a plan's largest skew exceeds its maxSkew, with the bound that holds; undefined when maxSkew holds. */
export function renderSkewWarning(plan: RoleBasedGroupPlan): string | undefined {
  const { maxSkewPercent, largestPercent, smallestAchievablePercent } = plan.skew;
  if (!exceedsSkew(largestPercent, maxSkewPercent)) return undefined;
  if (exceedsSkew(smallestAchievablePercent, maxSkewPercent)) {
    return `maxSkew ${maxSkewPercent}% cannot hold for roles of these sizes: updating one replica at a time, no rollout keeps the skew below ${smallestAchievablePercent.toFixed(1)}%; this plan keeps it within ${largestPercent.toFixed(1)}%`;
  }
  return `this plan exceeds maxSkew ${maxSkewPercent}% (largest skew ${largestPercent.toFixed(1)}%), though a rollout of these role sizes could keep ${smallestAchievablePercent.toFixed(1)}%`;
}

/** What `plan` left out, and why. */
export function renderSkipped(skipped: readonly SkippedObject[], style: Style): string {
  const where = (s: SkippedObject) => `${s.kind} ${s.name}${s.namespace ? ` (namespace ${s.namespace})` : ''}${s.rule ? `, rule ${s.rule}` : ''}`;
  return [style.bold('not planned'), ...skipped.map((s) => `  ${where(s)}: ${s.reason}`)].join('\n');
}
