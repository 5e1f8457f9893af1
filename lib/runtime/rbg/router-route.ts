/**
 * The router routes of a RoleBasedGroup's routed rules (version-matched routing): read for the
 * engine's route step (`routerStep`), and written as it decides (`setRouterWeights`) through the one
 * route weight writer (`writeRouteWeights`: a JSON patch of backend weights guarded by `test` ops,
 * re-read and re-planned when the server refuses it as a conflict), each write followed by its Event.
 */
import type { ExecutorRule } from '../../engine/rbg-coordination-types';
import { routerRouteName, type ObservedRouterRoute, type SetRouterWeightsAction } from '../../engine/rbg-router-step';
import { HTTPROUTE } from '../../spec/object-names';
import type { JsonObject } from '../../spec/read';
import type { KubeClient } from '../kube/client';
import { recordEvents, type EventSource } from '../kube/events';
import type { KubeObject } from '../kube/types';
import { kubeRouteClient, writeRouteWeights } from '../route/weight-patch';

/** Each routed rule's router route (`<group>-<rule>-router` in the group's namespace) as read, by rule name. */
export async function observeRouterRoutes(client: KubeClient, group: KubeObject, rules: readonly ExecutorRule[]): Promise<Map<string, ObservedRouterRoute>> {
  const out = new Map<string, ObservedRouterRoute>();
  for (const rule of rules) {
    if (!rule.router) continue;
    const name = routerRouteName(String(group.metadata.name), rule.name);
    const route = await client.tryGet(HTTPROUTE, name, String(group.metadata.namespace));
    out.set(rule.name, { name, ...(route ? { route: route as unknown as JsonObject } : {}) });
  }
  return out;
}

/**
 * Writes one `setRouterWeights` (planning first against the route the pass read, re-reading only
 * after a refused patch), then records its Event on the group. Returns the API writes made: 0 when
 * the route already carried the weights.
 */
export async function writeRouterWeights(client: KubeClient, group: KubeObject, action: SetRouterWeightsAction, observed: ObservedRouterRoute | undefined, now: number, events: EventSource, warn: (err: unknown) => void): Promise<number> {
  const namespace = String(group.metadata.namespace);
  const result = await writeRouteWeights(
    kubeRouteClient(client, observed?.route),
    { kind: 'HTTPRoute', namespace, name: action.route },
    action.backends,
  );
  if (result.ops.length === 0) return 0;
  return 1 + (await recordEvents(client, group, [action.event], now, events, warn));
}
