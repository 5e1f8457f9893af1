/**
 * The route hold of version-matched routing (pure; issue 35). Each release's router discovers its
 * prefill and decode Pods and drops one the moment it turns unready, but the route's weights move
 * only after RBG counts the replicas, the executor writes the route and the Gateway reads it. In that
 * window the old release's router still gets traffic with no complete prefill+decode pair left
 * (a 503), so rolling forward each routed role of two replicas or more keeps its LAST old replica
 * (partition capped at 1, coordination reason `WaitingForRoute`) while the route, as read, still
 * sends the old release a share — or does not list the new release's router yet. The weight rule
 * (`routerWeights`) sends the old release 0 once a role is down to that replica with every other one
 * new and ready and every routed role has a ready new replica; the pass that reads the route at old
 * 0 lets the held replicas go. Rolling back it is mirrored: no rollback round and no replica returned
 * while the route, as read, sends the new release a share (`rbg-rollback.ts`).
 *
 * A role of one replica is not held: it cannot have a ready new replica while it keeps an old one.
 */
import type { Member } from './rbg-members';
import type { ExecutorRule, ObservedRole } from './rbg-coordination-types';
import { routedRelease, routerBackends, type ObservedRouterRoute } from './rbg-router-step';

/** What the route, as read, holds back for one coordination. */
export interface RouteHold {
  /** The route's name. */
  readonly route: string;
  /** The routed roles that keep their last old replica while `old` (those of two replicas or more). */
  readonly roles: readonly string[];
  /** The route sends the old release(s) a share, or lists no router of the new release. */
  readonly old: boolean;
  /** The route sends the new release (the one the templates make now) a share. */
  readonly new: boolean;
}

/**
 * The hold of `rule` (which has a `router`) from its route as read: undefined when the route does not
 * exist or the prefill and decode templates name no common release (`routerStep` reports why).
 */
export function routeHoldOf(rule: ExecutorRule, roles: ReadonlyMap<string, ObservedRole>, observed: ObservedRouterRoute): RouteHold | undefined {
  const release = routedRelease(rule, roles);
  if ('problem' in release || !observed.route) return undefined;
  const backends = routerBackends(observed.route, observed.name);
  const current = backends.filter((b) => b.revision === release.current);
  const old = current.length === 0 || backends.some((b) => b.revision !== release.current && b.weight > 0);
  return {
    route: observed.name,
    roles: [release.prefill, release.decode].filter((r) => r.desired >= 2).map((r) => r.name),
    old,
    new: current.some((b) => b.weight > 0),
  };
}

/**
 * Caps at 1 the decided partition of every role `hold` keeps (rolling forward, the route still
 * sending the old release a share) whose round would release its last old replica; returns their
 * names. Like the rollback's last-replica hold this only slows a role down, so the skew bound holds.
 */
export function holdLastForRoute<D extends { readonly partition: number; readonly target: number }>(decided: Map<string, D>, released: readonly Member[], hold: RouteHold | undefined): string[] {
  if (!hold?.old) return [];
  const held: string[] = [];
  for (const m of released) {
    const d = decided.get(m.state.name)!;
    if (!hold.roles.includes(m.state.name) || d.partition !== 0 || (m.state.currentPartition ?? m.state.desired) === 0) continue;
    decided.set(m.state.name, { ...d, partition: 1, target: m.state.desired - 1 });
    held.push(m.state.name);
  }
  return held;
}

/** Why a held role waits, in words (its status reason). */
export function routeHoldReason(hold: RouteHold): string {
  return `keeps its last replica on the old release until route ${hold.route} sends the old release nothing`;
}
