/** How `rayshift plan` shows the warmup stage of a RoleBasedGroup rollout (RBG v0.8's RoleBasedGroupWarmup), before its rounds. */
import type { RbgWarmupStage } from '../engine/rbg-warmup';
import { formatDuration } from '../engine/plan-text';
import { Style } from './style';

/** The stage as text lines: what is warmed where, within which limits, and what a failure does. */
export function renderWarmupStage(group: string, stage: RbgWarmupStage, style: Style): string[] {
  const out = [style.bold(`RoleBasedGroup ${group}: stage 1, warm the new images on the roles' nodes ${stage.gated ? 'before the first round' : 'alongside the rollout'}`)];
  for (const [role, images] of Object.entries(stage.images)) out.push(`  ${role}: ${images.join(', ')}`);
  const parallel = stage.parallelism === undefined ? 'every node at once' : `${stage.parallelism} node(s) at a time`;
  out.push(`  ${parallel}; ${stage.backoffLimitPerNode} retr${stage.backoffLimitPerNode === 1 ? 'y' : 'ies'} per node; fails beyond ${stage.maxFailedNodes} failed node(s) or after ${formatDuration(stage.timeoutSeconds)}`);
  if (!stage.gated) {
    out.push(style.yellow("  RBG v0.8 does not wait for it: the rounds below start at once (use executor operator or pulumi to wait)"));
  } else {
    out.push(`  on failure: ${stage.onFailure === 'Fail' ? 'the rollout stops before any partition moves (every replica stays on the old revision)' : 'the rounds below run on cold nodes'}`);
    out.push(style.dim('  stage 2, the rounds, starts when the warmup completes'));
  }
  return out;
}
