/**
 * The check the RBG rollback cluster tests make of every state a watch saw on the way out and back:
 * the roles' shares on the new release within maxSkew plus one replica of the smallest role (the
 * bound of RBG's skew check, here in exact integer arithmetic: Go's float64 check puts a state
 * exactly at the bound, such as 8/40 and 1/20 at 10% + 5%, 1 basis point over on the way out and
 * within it on the way back, where the old-version shares are compared), at most `maxUnavailable`
 * replicas down per role. A workload still on the first release's template has none on the new
 * release (RBG writes the template into one workload after the other); a state where a workload has
 * not observed its latest spec counts against its previous template and is left out. Test support,
 * not the package's API.
 */
import type { GroupState } from './rbg-workload-recorder';

/** The states checked and every one over a bound, in words (`over` empty when all hold). */
export interface RolloutStatesCheck {
  readonly states: readonly GroupState[];
  readonly over: readonly string[];
  /** Every state checked, one line each, for a failure's log. */
  readonly lines: string;
}

/** Checks `recorded` from the first state with a workload off `firstRevision` (per role) on; `maxUnavailable` is one count for every role, or one per role. */
export function checkRolloutStates(recorded: readonly GroupState[], roles: readonly string[], firstRevision: Readonly<Record<string, string>>, maxSkewPercent: number, maxUnavailable: number | Readonly<Record<string, number>>): RolloutStatesCheck {
  const budget = (r: string) => (typeof maxUnavailable === 'number' ? maxUnavailable : maxUnavailable[r]);
  const from = recorded.findIndex((st) => roles.some((r) => st[r] !== undefined && st[r].updateRevision !== firstRevision[r]));
  const states = recorded
    .slice(Math.max(0, from))
    .filter((st) => roles.every((r) => st[r] !== undefined && st[r].observed))
    .map((st) => Object.fromEntries(roles.map((r) => [r, { ...st[r], updated: st[r].updateRevision === firstRevision[r] ? 0 : st[r].updated }])) as GroupState);
  const brief = (st: GroupState) => roles.map((r) => `${r} p${st[r].partition}${st[r].paused ? 'P' : ''} u${st[r].updated} r${st[r].ready}/${st[r].replicas}`).join(', ');
  const over = states.flatMap((st, i) => {
    const skew = withinSkew(maxSkewPercent, roles.map((r) => ({ desired: st[r].replicas, updated: st[r].updated }))) ? [] : [`state ${i} over the skew bound: ${brief(st)}`];
    const down = roles.filter((r) => st[r].replicas - st[r].ready > budget(r)).map((r) => `state ${i}: ${r} has ${st[r].replicas - st[r].ready} down: ${brief(st)}`);
    return [...skew, ...down];
  });
  return { states, over, lines: states.map((st, i) => `  ${i} ${brief(st)}`).join('\n') };
}

/**
 * Whether every two roles' updated shares differ by at most maxSkew plus one replica of the smallest
 * role, in basis points as RBG counts them (`ceil(10000 / replicas)` for the replica): with
 * `allowed` an integer, `ceil(10000 · (a/b − c/d)) ≤ allowed` is `10000 · (a·d − c·b) ≤ allowed · b · d`.
 */
export function withinSkew(maxSkewPercent: number, roles: readonly { readonly desired: number; readonly updated: number }[]): boolean {
  const sized = roles.filter((r) => r.desired > 0);
  if (sized.length === 0) return true;
  const allowed = Math.max(...sized.map((r) => Math.ceil(10000 / r.desired))) + Math.max(1, Math.ceil(maxSkewPercent * 100));
  return sized.every((f) => sized.every((s) => 10000 * (f.updated * s.desired - s.updated * f.desired) <= allowed * f.desired * s.desired));
}
