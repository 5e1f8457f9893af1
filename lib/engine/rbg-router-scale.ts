/**
 * The old release's router after a routed rollout (pure): once the coordination is Complete, the
 * route step says the old routers may go (`removeOld`) and the route AS READ sends such a router 0,
 * its Deployment (`<group>-<rule>-router-<release>`, the route's backend Service's name, rendered by
 * `RoleBasedGroupRouters`) is scaled to 0 replicas; the replicas it had are kept in the rule's router
 * status (`scaledDown`), so it can be restored. Before any weight moves to a router that is scaled
 * down or not ready (a new rollout back to that release), its Deployment is scaled back first and
 * the route is held as read until the Deployment reports its replicas ready. Only a Deployment the
 * executor found with the router's labels under the backend's name is ever scaled.
 */
import type { JsonObject } from '../spec/read';
import type { RolloutEvent } from './rbg-coordination-types';
import type { CoordinationStatus } from './rbg-coordination-status';
import { routerBackends, type RouterStatus, type RouterStep } from './rbg-router-step';

/** Reason of the Event recorded for every scale of a router Deployment. */
export const ROUTER_SCALED_EVENT = 'RouterScaled';

/** A release's router Deployment as the executor read it (labelled `rayshift.dev/router-for` and `…/router-rule`). */
export interface ObservedRouterDeployment {
  /** Its name: the route's backend Service's (`routerName(group, rule, release)`). */
  readonly name: string;
  /** `spec.replicas`. */
  readonly replicas: number;
  /** `status.readyReplicas`. */
  readonly readyReplicas: number;
  /** The Deployment controller has observed its latest spec (`status.observedGeneration ≥ metadata.generation`). */
  readonly observed: boolean;
}

/** A router Deployment this executor scaled to 0, and the replicas to restore. */
export interface ScaledDownRouter {
  readonly deployment: string;
  readonly replicas: number;
}

/** Set a router Deployment's replicas (the `scale` subresource), guarded by the replicas read. */
export interface ScaleRouterAction {
  readonly type: 'scaleRouter';
  /** The coordination rule. */
  readonly rule: string;
  /** The Deployment, in the group's namespace. */
  readonly deployment: string;
  /** Its replicas as read: the write is refused if they changed since. */
  readonly from: number;
  readonly replicas: number;
  /** The Event to record once the scale is written. */
  readonly event: RolloutEvent;
}

/** What the scale step decides for one routed coordination. */
export interface RouterScaleStep {
  /** The route step's status with `scaledDown` and, while held, the weights as read and `waitingForRouter`. */
  readonly status: RouterStatus;
  /** The route step's action, unless the route is held for a router to become ready. */
  readonly routeAction?: RouterStep['action'];
  /** Scale-backs, written before the route. */
  readonly before: readonly ScaleRouterAction[];
  /** Scale-downs, written once the status recording their replicas has landed. */
  readonly after: readonly ScaleRouterAction[];
}

/**
 * The scale step of `rule` after its coordination step (`status`) and route step (`routed`), over
 * the route as read and the rule's router Deployments (by name); `previous` is what the last pass
 * recorded as scaled down.
 */
export function routerScaleStep(
  rule: string,
  status: CoordinationStatus,
  routed: RouterStep,
  route: JsonObject | undefined,
  deployments: ReadonlyMap<string, ObservedRouterDeployment>,
  previous: readonly ScaledDownRouter[] = [],
): RouterScaleStep {
  const releases = routed.status.releases;
  if (!route || releases.length === 0) return { status: routed.status, ...(routed.action ? { routeAction: routed.action } : {}), before: [], after: [] };
  const read = new Map(routerBackends(route, routed.status.route).map((b) => [b.service, b.weight]));
  // A record is kept while its router is on the route and still at 0 replicas.
  let scaledDown = previous.filter((r) => releases.some((x) => x.service === r.deployment) && deployments.get(r.deployment)?.replicas === 0);
  const before: ScaleRouterAction[] = [];
  const after: ScaleRouterAction[] = [];
  const waiting: string[] = [];
  for (const r of releases) {
    const d = deployments.get(r.service);
    if (!d) continue;
    const was = read.get(r.service) ?? 0;
    if (r.weight > was && !(d.observed && d.replicas > 0 && d.readyReplicas >= d.replicas)) {
      // Weight is to move to this router: it must run first.
      waiting.push(d.name);
      if (d.replicas === 0) {
        const replicas = scaledDown.find((s) => s.deployment === d.name)?.replicas ?? 1;
        before.push(scale(rule, d, replicas, `${rule}: router ${d.name} scaled back to ${replicas} before the route sends release ${r.revision} traffic`));
        scaledDown = scaledDown.filter((s) => s.deployment !== d.name);
      }
    } else if (status.phase === 'Complete' && routed.status.removeOld && !r.current && r.weight === 0 && was === 0 && d.replicas > 0) {
      scaledDown = [...scaledDown.filter((s) => s.deployment !== d.name), { deployment: d.name, replicas: d.replicas }];
      after.push(scale(rule, d, 0, `${rule}: router ${d.name} of old release ${r.revision} scaled to 0 (was ${d.replicas}): the rollout is complete and the route sends it nothing`));
    }
  }
  const base: RouterStatus = { ...routed.status, ...(scaledDown.length > 0 ? { scaledDown } : {}) };
  if (waiting.length === 0) return { status: base, ...(routed.action ? { routeAction: routed.action } : {}), before, after };
  // Held: the route keeps what it carries until every router that is to gain weight is ready.
  const held = releases.map((r) => ({ ...r, weight: read.get(r.service) ?? r.weight }));
  return { status: { ...base, releases: held, waitingForRouter: waiting }, before, after };
}

function scale(rule: string, d: ObservedRouterDeployment, replicas: number, message: string): ScaleRouterAction {
  return { type: 'scaleRouter', rule, deployment: d.name, from: d.replicas, replicas, event: { type: 'Normal', reason: ROUTER_SCALED_EVENT, message } };
}
