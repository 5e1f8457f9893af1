/**
 * The route step of version-matched routing (pure): after a coordination's step, which weights the
 * rule's router route (`<group>-<rule>-router`, rendered by `RoleBasedGroupRouters`) should carry
 * between the releases' routers, by `routerWeights` over the observed prefill and decode roles, and
 * the action that writes them when the route as read differs. The release a router serves is the
 * suffix of its Service's name (`routerName`); the new release is the one the group's prefill and
 * decode templates carry now (`rayshift.dev/router-revision`), every other router on the route is
 * an older one. The runtime reads the route and writes the action before the round it goes with,
 * so on the way back the new release's weight is 0 before any of its replicas is returned.
 */
import { asArray, asObject, isInteger, type JsonObject } from '../spec/read';
import { routerName } from '../spec/rbg-router';
import { routerWeights, type RoutedRole } from './rbg-router-weight';
import type { ExecutorRule, ObservedRole, RolloutEvent } from './rbg-coordination-types';
import type { CoordinationStatus } from './rbg-coordination-status';
import type { ObservedRouterDeployment, ScaledDownRouter } from './rbg-router-scale';

/** Reason of the Event recorded for every change of a router route's weights. */
export const ROUTER_WEIGHTS_EVENT = 'RouterWeights';

/** The name of rule `rule`'s router route in group `group` (`routerName`), for the executor to read. */
export function routerRouteName(group: string, rule: string): string {
  return routerName(group, rule);
}

/** A rule's router route as the executor read it. */
export interface ObservedRouterRoute {
  /** The route's name (`routerName(group, rule)`); each release's router Service is `<name>-<revision>`. */
  readonly name: string;
  /** The route object as read; undefined when it does not exist. */
  readonly route?: JsonObject;
  /** The rule's router Deployments as read, by name (`rbg-router-scale.ts`). @default none read: none is scaled */
  readonly deployments?: ReadonlyMap<string, ObservedRouterDeployment>;
  /**
   * The routed roles' Pods as the releases' routers discover them: per role, the Pods that are ready
   * and not terminating, by their `rayshift.dev/router-revision`. A workload's counts can run ahead
   * of its Pods: RBG v0.7.0 counts a RoleInstance updated and ready as soon as its template is, while
   * its Pod still runs the old release until it is replaced. A role absent from the map has no ready
   * Pod. @default none read: the counts alone
   */
  readonly readyPods?: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/** A role with no ready Pod, in `readyPods`. */
const NO_PODS: ReadonlyMap<string, number> = new Map();

/** One release's router on the route. */
export interface RouterReleaseWeight {
  /** The release (`routerRevision`). */
  readonly revision: string;
  /** Its router Service, the route's backend. */
  readonly service: string;
  /** Its weight, percent: what this pass leaves on the route. */
  readonly weight: number;
  /** The release the group's templates make now. */
  readonly current: boolean;
}

/** The router part of a coordination's status. */
export interface RouterStatus {
  /** The route between the releases' routers. */
  readonly route: string;
  /** Each release's router and weight, in the route's order; empty when nothing could be written. */
  readonly releases: readonly RouterReleaseWeight[];
  /** Every routed replica runs the new release and is ready: the older releases' routers carry nothing and may go. */
  readonly removeOld: boolean;
  /** Why no weight was written, when none could be. */
  readonly problem?: string;
  /** Old releases' router Deployments scaled to 0 after the rollout, and the replicas to restore (`rbg-router-scale.ts`). */
  readonly scaledDown?: readonly ScaledDownRouter[];
  /** Router Deployments the route waits for (scaled back, not yet ready): the weights shown are the route's as read. */
  readonly waitingForRouter?: readonly string[];
}

/** Give the route's router backends these weights (only backends already on the route). */
export interface SetRouterWeightsAction {
  readonly type: 'setRouterWeights';
  /** The coordination rule. */
  readonly rule: string;
  /** The route (an HTTPRoute in the group's namespace). */
  readonly route: string;
  /** Each router Service and its weight. */
  readonly backends: readonly { readonly name: string; readonly weight: number }[];
  /** The Event to record once the weights are written. */
  readonly event: RolloutEvent;
}

/** What the route step decides for one coordination. */
export interface RouterStep {
  readonly status: RouterStatus;
  /** Present when the route as read carries other weights. */
  readonly action?: SetRouterWeightsAction;
}

/**
 * The route step of `rule` (which has a `router`) after its coordination step reported `status`
 * (and `lastRound`, the roles whose round releases their last old replica, or would but for a hold).
 * The new release's weight follows `routerWeights` over the prefill and decode roles (rolling back
 * from the moment a rollback started, or when it ended); with no older router on the route the one
 * router takes everything.
 */
export function routerStep(rule: ExecutorRule, roles: ReadonlyMap<string, ObservedRole>, status: CoordinationStatus, observed: ObservedRouterRoute, lastRound: readonly string[] = []): RouterStep {
  const none = (problem: string): RouterStep => ({ status: { route: observed.name, releases: [], removeOld: false, problem } });
  const release = routedRelease(rule, roles);
  if ('problem' in release) return none(release.problem);
  const { prefill, decode, current } = release;
  if (!observed.route) return none(`route ${observed.name} not found: render the rule's routers`);
  const onRoute = routerBackends(observed.route, observed.name);
  if (!onRoute.some((b) => b.revision === current)) {
    return none(`route ${observed.name} has no backend ${observed.name}-${current} for the current release: render the routers with previousRevision set to the release rolled from`);
  }
  const rollingBack = status.rollback !== undefined || status.phase === 'RollingBack' || status.phase === 'RolledBack';
  // A workload that has not observed its latest spec reports no counts: keep the route as it is
  // (0 new ready would send everything to an old release that may have no replica left), and keep
  // what the last counts said of the old router for this release (a final partition write leaves the
  // workloads unobserved for a pass: "old router may go" must not flicker off and on).
  if (!rollingBack && (!prefill.progress || !decode.progress)) {
    const last = status.router;
    const removeOld = last?.releases.find((r) => r.current)?.revision === current && last.removeOld;
    return { status: { route: observed.name, releases: onRoute.map((b) => ({ revision: b.revision, service: b.service, weight: b.weight, current: b.revision === current })), removeOld } };
  }
  const weights = routerWeights([prefill, decode].map((r) => routedRole(r, lastRound.includes(r.name), current, observed.readyPods && (observed.readyPods.get(r.name) ?? NO_PODS))), rollingBack);
  const older = onRoute.filter((b) => b.revision !== current);
  // The first older router takes the old release's share; any further one (a rollout replaced mid-way) none.
  const releases = onRoute.map((b): RouterReleaseWeight => {
    const weight = b.revision === current ? (older.length === 0 ? 100 : weights.newWeight) : b === older[0] ? weights.oldWeight : 0;
    return { revision: b.revision, service: b.service, weight, current: b.revision === current };
  });
  const out: RouterStatus = { route: observed.name, releases, removeOld: older.length > 0 && weights.removeOld };
  if (releases.every((r, i) => r.weight === onRoute[i].weight)) return { status: out };
  const split = releases.map((r) => `${r.current ? 'new' : 'old'} release ${r.revision} ${r.weight}%`).join(', ');
  return {
    status: out,
    action: {
      type: 'setRouterWeights',
      rule: rule.name,
      route: observed.name,
      backends: releases.map((r) => ({ name: r.service, weight: r.weight })),
      event: { type: 'Normal', reason: ROUTER_WEIGHTS_EVENT, message: `${rule.name}: route ${observed.name}: ${split}${rollingBack ? ' (rolling back)' : ''}` },
    },
  };
}

/**
 * The routed roles of `rule` (which has a `router`: its prefill and decode) and the release their
 * templates make now (`rayshift.dev/router-revision`, common to both), or why there is none.
 */
export function routedRelease(rule: ExecutorRule, roles: ReadonlyMap<string, ObservedRole>): { readonly prefill: ObservedRole; readonly decode: ObservedRole; readonly current: string } | { readonly problem: string } {
  const router = rule.router!;
  const prefill = roles.get(router.prefill);
  const decode = roles.get(router.decode);
  if (!prefill || !decode) return { problem: `the group has no role ${!prefill ? router.prefill : router.decode} (the router's ${!prefill ? 'prefill' : 'decode'})` };
  const current = prefill.routerRevision;
  if (current === undefined || current !== decode.routerRevision) {
    return { problem: `the prefill and decode templates carry no common rayshift.dev/router-revision label (prefill ${String(current)}, decode ${String(decode.routerRevision)}): render the group with its routers` };
  }
  return { prefill, decode, current };
}

/**
 * A role as the weight rule counts it: the replicas on the new template that are ready, from the
 * workload's count when it reports one, else the fewest the counts allow (ready replicas beyond the
 * old ones' number), and no more than the ready Pods of the current release (`pods`, when read), so
 * the weight never runs ahead of what the new router can reach; the replicas on the new template,
 * ready or not (none left on the old one: the old router has no worker); and the ready replicas the
 * old router can reach: the ready Pods of any other release when read, else what the counts leave.
 */
function routedRole(role: ObservedRole, lastRound: boolean, current: string, pods: ReadonlyMap<string, number> | undefined): RoutedRole {
  const p = role.progress;
  if (!p) return { name: role.name, desired: role.desired, readyUpdated: 0 };
  const readyUpdated = p.updatedReadyReplicas ?? Math.max(0, p.readyReplicas - Math.max(0, role.desired - p.updatedReplicas));
  const counted = Math.min(readyUpdated, p.updatedReplicas);
  const ready = pods ? Math.min(counted, pods.get(current) ?? 0) : counted;
  // Ready replicas the new release does not account for, but no more than the old release still has.
  const readyOld = pods
    ? [...pods].reduce((n, [revision, count]) => (revision === current ? n : n + count), 0)
    : Math.max(0, Math.min(p.readyReplicas - ready, role.desired - p.updatedReplicas));
  return { name: role.name, desired: role.desired, readyUpdated: ready, updated: p.updatedReplicas, readyOld, ...(lastRound ? { lastRound } : {}) };
}

/** The route's backends that are this rule's routers (`<route>-<revision>` core Services), first occurrence each, with their weights as read. */
export function routerBackends(route: JsonObject, routeName: string): { revision: string; service: string; weight: number }[] {
  const prefix = `${routeName}-`;
  const out: { revision: string; service: string; weight: number }[] = [];
  for (const rule of asArray(asObject(route.spec).rules)) {
    for (const raw of asArray(asObject(rule).backendRefs)) {
      const ref = asObject(raw);
      const core = (ref.group === undefined || ref.group === '') && (ref.kind === undefined || ref.kind === 'Service');
      if (!core || typeof ref.name !== 'string' || !ref.name.startsWith(prefix) || out.some((b) => b.service === ref.name)) continue;
      // Gateway API: a backendRef without weight has weight 1.
      out.push({ revision: ref.name.slice(prefix.length), service: ref.name, weight: isInteger(ref.weight) ? ref.weight : 1 });
    }
  }
  return out;
}
