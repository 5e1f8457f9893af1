/**
 * A RayService plan's wording that more than one view shows, written once: durations and the dip of
 * a `capacityPolicy: shrinkFirst` plan. `rayshift plan` (lib/cli/render-plan.ts) and the dashboard
 * (ui/src/model.ts, from the API's `UpgradePlan.dip`) both import it, so they word the dip alike.
 */
import type { RayServicePlanDip } from './plan-rayservice';

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

/** The dip of a shrinkFirst plan: `dip to 75% served 4 times, 1m30s in all (0s to 2m00s): capacityPolicy shrinkFirst, if the surge does not fit`. */
export function dipText(dip: RayServicePlanDip): string {
  return `dip to ${dip.value}% served ${dip.times} time${dip.times === 1 ? '' : 's'}, ${formatDuration(dip.lasts)} in all (${formatDuration(dip.from)} to ${formatDuration(dip.until)}): capacityPolicy shrinkFirst, if the surge does not fit`;
}
