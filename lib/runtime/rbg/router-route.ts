/**
 * The router routes of a RoleBasedGroup's routed rules (version-matched routing): read for the
 * engine's route step (`routerStep`), and written as it decides (`setRouterWeights`) through the one
 * route weight writer (`writeRouteWeights`: a JSON patch of backend weights guarded by `test` ops,
 * re-read and re-planned when the server refuses it as a conflict), each write followed by its Event.
 * The rule's router Deployments (labelled with its group and rule) are listed with the route, for the
 * engine's scale step (`routerScaleStep`), and scaled through the `scale` subresource
 * (`scaleRouter`), so a GitOps tool can ignore `/spec/replicas` of the rendered Deployment. The
 * routed roles' ready Pods are counted by release too, from the pass's one list of the group's Pods
 * (`group-pods.ts`): the weight rule never gives a release's router more than its ready Pods can
 * serve, whatever the workload's counts say.
 */
import type { ExecutorRule } from '../../engine/rbg-coordination-types';
import type { ObservedRouterDeployment, ScaleRouterAction } from '../../engine/rbg-router-scale';
import { routerRouteName, type ObservedRouterRoute, type SetRouterWeightsAction } from '../../engine/rbg-router-step';
import { DEPLOYMENT_TYPE, HTTPROUTE, ROUTER_FOR_LABEL, ROUTER_REVISION_LABEL, ROUTER_RULE_LABEL, rbgPodLabels } from '../../spec/object-names';
import type { JsonObject } from '../../spec/read';
import type { KubeClient } from '../kube/client';
import { isNotFound, isPatchConflict } from '../kube/errors';
import type { JsonPatchOp } from '../kube/request-options';
import { recordEvents, type EventSource } from '../kube/events';
import type { KubeObject } from '../kube/types';
import { podReady } from '../kube/pod-ready';
import { kubeRouteClient, writeRouteWeights } from '../route/weight-patch';
import type { GroupPods } from './group-pods';

/** Each routed rule's router route (`<group>-<rule>-router` in the group's namespace) as read, by rule name; `pods`, the pass's list of the group's Pods. */
export async function observeRouterRoutes(client: KubeClient, group: KubeObject, rules: readonly ExecutorRule[], pods: GroupPods): Promise<Map<string, ObservedRouterRoute>> {
  const out = new Map<string, ObservedRouterRoute>();
  let readyPods: ReadonlyMap<string, ReadonlyMap<string, number>> | undefined;
  for (const rule of rules) {
    if (!rule.router) continue;
    const name = routerRouteName(String(group.metadata.name), rule.name);
    const namespace = String(group.metadata.namespace);
    const route = await client.tryGet(HTTPROUTE, name, namespace);
    if (!route) {
      out.set(rule.name, { name });
      continue;
    }
    const list = await client.list(DEPLOYMENT_TYPE, { namespace, labelSelector: { [ROUTER_FOR_LABEL]: String(group.metadata.name), [ROUTER_RULE_LABEL]: rule.name } });
    const deployments = new Map(list.items.map((d) => [String(d.metadata.name), routerDeployment(d)] as const));
    // One count of the group's Pods serves every routed rule of the pass.
    readyPods ??= readyGroupPods(group, await pods());
    out.set(rule.name, { name, route: route as unknown as JsonObject, deployments, readyPods });
  }
  return out;
}

/**
 * The Pods of `group` (`pods`, listed by RBG's group label) that a release's router can reach, per
 * role and release: ready and not terminating, by RBG's role label and their
 * `rayshift.dev/router-revision` label ('' when absent).
 */
function readyGroupPods(group: KubeObject, pods: readonly KubeObject[]): ReadonlyMap<string, ReadonlyMap<string, number>> {
  const roleLabel = rbgPodLabels(group).role;
  const out = new Map<string, Map<string, number>>();
  for (const pod of pods) {
    const role = pod.metadata.labels?.[roleLabel];
    if (role === undefined || pod.metadata.deletionTimestamp || !podReady(pod)) continue;
    const byRelease = out.get(role) ?? new Map<string, number>();
    const revision = pod.metadata.labels?.[ROUTER_REVISION_LABEL] ?? '';
    byRelease.set(revision, (byRelease.get(revision) ?? 0) + 1);
    out.set(role, byRelease);
  }
  return out;
}

/** A router Deployment as the scale step reads it. */
function routerDeployment(d: KubeObject): ObservedRouterDeployment {
  const spec = (d.spec ?? {}) as { replicas?: number };
  const status = (d.status ?? {}) as { readyReplicas?: number; observedGeneration?: number };
  return {
    name: String(d.metadata.name),
    // The API server defaults an absent replicas to 1.
    replicas: typeof spec.replicas === 'number' ? spec.replicas : 1,
    readyReplicas: status.readyReplicas ?? 0,
    observed: (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0),
  };
}

/**
 * Writes one `scaleRouter` through the Deployment's `scale` subresource, guarded by a `test` of the
 * replicas read (but from 0), then records its Event. Returns the API writes made: 0 when the Deployment is gone
 * or its replicas changed since the pass read them (the next pass decides again).
 */
export async function scaleRouter(client: KubeClient, group: KubeObject, action: ScaleRouterAction, now: number, events: EventSource, warn: (err: unknown) => void): Promise<number> {
  try {
    // A Scale omits replicas 0 (`omitempty`): from 0 there is no field to test, and restoring it is safe.
    const ops: JsonPatchOp[] = action.from === 0
      ? [{ op: 'add', path: '/spec/replicas', value: action.replicas }]
      : [{ op: 'test', path: '/spec/replicas', value: action.from }, { op: 'replace', path: '/spec/replicas', value: action.replicas }];
    await client.patchJson(DEPLOYMENT_TYPE, action.deployment, String(group.metadata.namespace), ops, { subresource: 'scale' });
  } catch (err) {
    if (isNotFound(err) || isPatchConflict(err)) return 0;
    throw err;
  }
  return 1 + (await recordEvents(client, group, [action.event], now, events, warn));
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
