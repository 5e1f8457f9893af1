/**
 * The check the RBG rollback cluster tests make of every state a watch saw on the way out and back:
 * the roles' shares on the new release within RBG's own skew check, at most `maxUnavailable`
 * replicas down per role. A workload still on the first release's template has none on the new
 * release (RBG writes the template into one workload after the other); a state where a workload has
 * not observed its latest spec counts against its previous template and is left out. Test support,
 * not the package's API.
 */
import { rbgSkewCheck } from './rbg-skew-check';
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
    const skew = rbgSkewCheck(maxSkewPercent, roles.map((r) => ({ name: r, desired: st[r].replicas, updatedReplicas: st[r].updated }))).ok ? [] : [`state ${i} over the skew bound: ${brief(st)}`];
    const down = roles.filter((r) => st[r].replicas - st[r].ready > budget(r)).map((r) => `state ${i}: ${r} has ${st[r].replicas - st[r].ready} down: ${brief(st)}`);
    return [...skew, ...down];
  });
  return { states, over, lines: states.map((st, i) => `  ${i} ${brief(st)}`).join('\n') };
}
