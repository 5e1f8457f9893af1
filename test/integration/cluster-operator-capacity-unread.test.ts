/**
 * The capacity preflight when the operator may not read the cluster's Nodes, on the test cluster:
 * the operator runs in-process with the install chart's ServiceAccount token
 * (test/support/operator-chart-install.ts), and the chart's ClusterRole loses its `list nodes` rule,
 * as on a cluster whose administrator trimmed it. The real kube-apiserver's RBAC refuses the
 * preflight's Node list; the capacity policy decides (lib/engine/capacity-policy.ts): `wait` starts
 * the upgrade with one CapacityUnknown Event and an `unknown` record, `fail` holds it (phase Running,
 * reason CapacityUnknown, no pending RayCluster) until the rule is given back, when the next read
 * places the surge and the upgrade runs to the end.
 *
 * Needs `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok kuberay`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { Operator } from '../../operator/operator';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes, type KubeObject } from '../../lib/runtime/kube/types';
import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { gpuConfig } from '../support/gpu-capacity';
import { installOperatorChart } from '../support/operator-chart-install';
import { OperatorEnv, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayService, startOperatorEnv, waitFor } from '../support/operator-env';

const EVENT = KnownTypes.Event;
const CLUSTER_ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false };
/** The API server's words for the refused list, in the record and the Event. */
const REFUSED = /^the cluster could not be read: .*cannot list resource "nodes" in API group "" at the cluster scope/;

let env: OperatorEnv;
let dir: string;
let client: KubeClient;
let operator: Operator;
let roleName: string;
let nodesRule: unknown;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-capacity-unread-'));
  env = await startOperatorEnv({ nodes: 1 });
  const installed = await installOperatorChart(env, dir);
  const role = installed.objects.find((o) => o.kind === 'ClusterRole');
  roleName = role.metadata.name;
  nodesRule = role.rules.find((r: any) => r.resources.includes('nodes'));
  expect(nodesRule).toEqual({ apiGroups: [''], resources: ['nodes'], verbs: ['list'] });
  await setNodesRule(false);
  client = KubeClient.fromKubeconfig(installed.kubeconfig);
  // The operator's own identity: refused the Node list from here on.
  await waitFor(async () => (await client.list(KnownTypes.Node).then(() => false, () => true)), 'RBAC to refuse the operator the Node list');
  operator = new Operator({ client, resolver: templateDashboardResolver(env.fleet.template), log: pino({ level: 'silent' }), capacityPollMs: 50 });
  await operator.start();
}, 300_000);

afterAll(async () => {
  await operator?.stop();
  client?.close();
  await env?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Gives the chart's ClusterRole its `list nodes` rule back (`true`) or takes it away. */
async function setNodesRule(granted: boolean): Promise<void> {
  const role = (await env.admin.tryGet(CLUSTER_ROLE, roleName))! as any;
  const others = role.rules.filter((r: any) => !r.resources.includes('nodes'));
  await env.admin.update({ ...role, rules: granted ? [...others, nodesRule] : others });
}

function gpuService(ns: string, policy: 'wait' | 'fail'): KubeObject {
  const svc = rayService(ns, 'llm', { maxSurge: 100, step: 50, extensions: { capacityPolicy: policy } });
  (svc.spec as Record<string, unknown>).rayClusterConfig = gpuConfig('1');
  return svc;
}

async function status(ns: string): Promise<any> {
  return (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!.status;
}

/** Creates service `llm` in a new namespace, waits for it to serve, and changes its cluster spec; returns the serving cluster. */
async function serveThenUpgrade(ns: string, policy: 'wait' | 'fail'): Promise<string> {
  await createNamespace(env.admin, ns);
  await env.admin.create(gpuService(ns, policy));
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns)).phase === 'Running', 'the first cluster to serve');
  const current = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns))!;
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: gpuConfig('2') } });
  return engineState(current).activeClusterName as string;
}

async function unknownEvents(ns: string): Promise<any[]> {
  return (await env.admin.list(EVENT, { namespace: ns })).items.filter((e: any) => e.reason === 'CapacityUnknown');
}

async function upgradeDone(ns: string, first: string): Promise<true | string> {
  const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns));
  return s.phase === 'Running' && s.activeClusterName !== first && s.pendingClusterName === undefined ? true : `${s.phase}/${s.reason}`;
}

test('wait: the upgrade starts with an unknown record, CapacityFits Unknown and one CapacityUnknown Event, and runs to the end', () => env.cluster.printLogsOnFailure(async () => {
  const ns = 'unread-wait';
  const first = await serveThenUpgrade(ns, 'wait');
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'llm', ns)).pendingClusterName !== undefined, 'the pending cluster to be created');
  const s = await status(ns);
  expect(s.phase).toBe('Upgrading');
  expect(s.capacity.outcome).toBe('unknown');
  expect(s.capacity.message).toMatch(REFUSED);
  expect(s.conditions.find((c: any) => c.type === 'CapacityFits')).toMatchObject({ status: 'Unknown', reason: 'ClusterUnread' });
  await waitFor(async () => upgradeDone(ns, first), 'the upgrade to complete', 120_000);
  const events = await unknownEvents(ns);
  expect(events.map((e) => [e.type, e.action])).toEqual([['Warning', 'CapacityPreflight']]);
  expect(events[0].note).toMatch(/^upgrade started without a capacity preflight \(capacityPolicy wait\): the cluster could not be read: .*cannot list resource "nodes"/);
}), 240_000);

test('fail: the upgrade is held with no pending RayCluster and one Event while the Nodes cannot be read, and runs to the end once the rule is given back', () => env.cluster.printLogsOnFailure(async () => {
  const ns = 'unread-fail';
  const first = await serveThenUpgrade(ns, 'fail');
  await waitFor(async () => ((await status(ns))?.reason === 'CapacityUnknown' ? true : String((await status(ns))?.reason)), 'the upgrade to be held');
  const held = await status(ns);
  expect(held.phase).toBe('Running');
  expect(held.capacity.outcome).toBe('unknown');
  expect(held.capacity.message).toMatch(REFUSED);
  expect(held.conditions.find((c: any) => c.type === 'CapacityFits')).toMatchObject({ status: 'Unknown', reason: 'ClusterUnread' });
  expect((await env.admin.list(RAYCLUSTER, { namespace: ns })).items.map((c) => c.metadata.name)).toEqual([first]);
  expect((await unknownEvents(ns)).length).toBe(1);
  await setNodesRule(true);
  await waitFor(async () => upgradeDone(ns, first), 'the upgrade to complete once the Nodes can be read', 120_000);
  const events = await unknownEvents(ns);
  expect(events.map((e) => [e.type, e.action])).toEqual([['Warning', 'CapacityPreflight']]);
  expect(events[0].note).toMatch(/^upgrade held \(capacityPolicy fail starts no surge it has not placed; the preflight reads the cluster again every 10 s\): the cluster could not be read: .*cannot list resource "nodes"/);
  const done = await status(ns);
  expect(done.capacity).toBeUndefined();
  expect(done.conditions.find((c: any) => c.type === 'CapacityFits')).toBeUndefined();
}), 240_000);
