/** Reading a routed rule's route, router Deployments and routed Pods (lib/runtime/rbg/router-route.ts `observeRouterRoutes`). */
import type { KubeClient } from '../../../lib/runtime/kube/client';
import type { KubeObject } from '../../../lib/runtime/kube/types';
import { groupPodsOnce } from '../../../lib/runtime/rbg/group-pods';
import { observeRouterRoutes } from '../../../lib/runtime/rbg/router-route';
import { resolveRouter } from '../../../lib/spec/rbg-router';
import { prefillDecodeRule } from '../../support/rbg-rules';

const rule = prefillDecodeRule({ maxSkewPercent: 50, progressDeadlineSeconds: 600, router: resolveRouter({ kind: 'sglang', image: 'router:test', gateway: { name: 'gw' } }) });

const V1ALPHA2_ROLE = 'rbg.workloads.x-k8s.io/role-name';

/** A Pod of `role` (by RBG v1alpha2's role label, none when undefined) on router release `rev` (no label when undefined), ready or not, terminating or not. */
const pod = (role: string | undefined, rev: string | undefined, ready: boolean, terminating = false): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `${role}-${rev}`,
    labels: { ...(role === undefined ? {} : { [V1ALPHA2_ROLE]: role }), ...(rev === undefined ? {} : { 'rayshift.dev/router-revision': rev }) },
    ...(terminating ? { deletionTimestamp: '2026-11-30T00:00:00Z' } : {}),
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

/** A client stub: every route exists, no router Deployment, and these Pods in the group. */
function client(pods: KubeObject[]): { client: KubeClient; lists: string[] } {
  const lists: string[] = [];
  const stub = {
    tryGet: async (type: { kind: string }, name: string) => ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: type.kind, metadata: { name }, spec: { rules: [] } }),
    list: async (type: { kind: string }, opts: { labelSelector?: Record<string, string> }) => {
      lists.push(`${type.kind} ${JSON.stringify(opts.labelSelector)}`);
      return { items: type.kind === 'Pod' ? pods : [] };
    },
  };
  return { client: stub as unknown as KubeClient, lists };
}

test('counts each routed role\'s ready Pods by release, leaving out unready, terminating and role-less ones, from one list by RBG\'s v1alpha2 group label', async () => {
  const { client: c, lists } = client([
    pod('prefill', 'new', true), pod('prefill', 'old', true), pod('prefill', 'old', true), pod('prefill', 'new', false), pod('prefill', 'old', true, true),
    pod('decode', undefined, true), pod('decode', 'new', true), pod(undefined, 'new', true),
  ]);
  const group = { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroup', metadata: { name: 'g', namespace: 'ns' } } as KubeObject;
  // Two routed rules over the same roles: the Pods are listed once for both.
  const routes = await observeRouterRoutes(c, group, [rule, { ...rule, name: 'pd2' }], groupPodsOnce(c, group));
  const readyPods = routes.get('pd')!.readyPods!;
  expect(Object.fromEntries([...readyPods].map(([role, byRelease]) => [role, Object.fromEntries(byRelease)]))).toEqual({ prefill: { new: 1, old: 2 }, decode: { '': 1, new: 1 } });
  expect(routes.get('pd2')!.readyPods).toBe(readyPods);
  expect(lists.filter((l) => l.startsWith('Pod'))).toEqual(['Pod {"rbg.workloads.x-k8s.io/group-name":"g"}']);
});

test('a v1alpha1 group\'s Pods are listed by its own group label', async () => {
  const { client: c, lists } = client([]);
  const group = { apiVersion: 'workloads.x-k8s.io/v1alpha1', kind: 'RoleBasedGroup', metadata: { name: 'g', namespace: 'ns' } } as KubeObject;
  const routes = await observeRouterRoutes(c, group, [rule], groupPodsOnce(c, group));
  expect(lists.filter((l) => l.startsWith('Pod'))).toEqual(['Pod {"rolebasedgroup.workloads.x-k8s.io/name":"g"}']);
  expect(routes.get('pd')!.readyPods!.size).toBe(0);
});
