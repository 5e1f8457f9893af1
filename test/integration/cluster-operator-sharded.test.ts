/**
 * A sharded operator on the test cluster (test/support/operator-env.ts: the real KubeRay; TEST-ONLY
 * Gateway status writer and Serve fleet): three `rayshift operator --shards 8` child processes share
 * six services upgrading at once, and one of them is SIGKILLed while its services are mid-upgrade.
 * Every upgrade completes with exactly the traffic steps the rules give (none skipped, none
 * repeated), each replica stepped only the services of the shards it held, and the killed replica's
 * shards moved to the replicas the hashing names once their Leases expired; each service's
 * `status.owner` names the replica that holds its shard at the end. Then, in another namespace, a
 * replica is cut off from the API server mid-upgrade by a TEST-ONLY TCP proxy: the others take
 * its shards over, it takes them back when the network heals, and again every upgrade takes
 * exactly the rules' weights.
 *
 * Needs `npm run build` (the children run build/).
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { LEASE_OF_LABEL, SHARD_LABEL, memberLeaseName, shardLeaseName } from '../../lib/spec/object-names';
import * as path from 'node:path';
import { writeAdminKubeconfig } from '../support/controlplane-files';
import { CuttableProxy } from '../support/cuttable-proxy';
import { ChildOperator, spawnOperatorChild } from '../support/operator-child';
import { OperatorEnv, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, recordRouteWeights, recordedPendingWeights, startOperatorEnv, waitFor } from '../support/operator-env';

const NS = 'sharded';
const PREFIX = 'rayshift-operator-leader'; // the operator's default Lease name
const SERVICES = ['svc-0', 'svc-1', 'svc-2', 'svc-3', 'svc-4', 'svc-5'];
// Written from the hashes (FNV-1a of namespace/name modulo 8; the rendezvous shares of these
// identities, test/engine/shards.test.ts), computed apart from the code under test:
// shards a: [6], b: [3, 4, 5], c: [0, 1, 2, 7]; without b: a: [4, 6], c: [0, 1, 2, 3, 5, 7].
const OWNER = { 'svc-0': 'c', 'svc-1': 'b', 'svc-2': 'b', 'svc-3': 'c', 'svc-4': 'a', 'svc-5': 'c' } as Record<string, string>;
const OWNER_WITHOUT_B: Record<string, string> = { ...OWNER, 'svc-1': 'c', 'svc-2': 'a' };
// Each service's shard, FNV-1a of namespace/name modulo 8 (the same Python).
const SHARD: Record<string, number> = { 'svc-0': 2, 'svc-1': 5, 'svc-2': 4, 'svc-3': 7, 'svc-4': 6, 'svc-5': 1 };
// The same for namespace `partitioned`: shards 0, 3, 6, 1, 4, 7; b's services are svc-1 (3) and svc-4 (4).
const PARTITIONED = 'partitioned';
const SHARD_PARTITIONED: Record<string, number> = { 'svc-0': 0, 'svc-1': 3, 'svc-2': 6, 'svc-3': 1, 'svc-4': 4, 'svc-5': 7 };
const OWNER_PARTITIONED: Record<string, string> = { 'svc-0': 'c', 'svc-1': 'b', 'svc-2': 'a', 'svc-3': 'c', 'svc-4': 'b', 'svc-5': 'c' };
/** The shares of replica-a, b and c, and without b (rendezvous hashing of the identities, test/engine/shards.test.ts). */
const THREE = { 0: 'replica-c', 1: 'replica-c', 2: 'replica-c', 3: 'replica-b', 4: 'replica-b', 5: 'replica-b', 6: 'replica-a', 7: 'replica-c' };
const WITHOUT_B = { 0: 'replica-c', 1: 'replica-c', 2: 'replica-c', 3: 'replica-c', 4: 'replica-a', 5: 'replica-c', 6: 'replica-a', 7: 'replica-c' };

let env: OperatorEnv;
const children = new Map<string, ChildOperator>();

beforeAll(async () => {
  env = await startOperatorEnv({ nodes: 4 });
}, 300_000);

afterAll(async () => {
  for (const c of children.values()) c.proc.kill('SIGKILL');
  await Promise.all([...children.values()].map((c) => c.exited));
  await env?.stop();
}, 60_000);

/** Holder of each shard Lease, by shard. */
async function shardHolders(admin: KubeClient): Promise<Record<number, string>> {
  const leases = await admin.list(KnownTypes.Lease, { namespace: 'default', labelSelector: { [LEASE_OF_LABEL]: PREFIX } });
  const out: Record<number, string> = {};
  for (const l of leases.items) {
    const shard = l.metadata.labels?.[SHARD_LABEL];
    const holder = (l.spec as { holderIdentity?: string }).holderIdentity;
    if (shard !== undefined && holder) out[Number(shard)] = holder;
  }
  return out;
}

/** The engine state of the service `name` in `namespace`. */
async function stateOf(namespace: string, name: string) {
  return engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, namespace));
}

/** Creates SERVICES in `namespace`, waits until each serves, watches their routes, then upgrades them all at once. */
async function serveThenUpgrade(namespace: string, explain: () => string): Promise<{ first: Record<string, string>; recorders: Record<string, Awaited<ReturnType<typeof recordRouteWeights>>> }> {
  await createNamespace(env.admin, namespace);
  for (const name of SERVICES) await env.admin.create(rayService(namespace, name, { maxSurge: 50, step: 25, interval: 1 }));
  await waitFor(async () => {
    const waiting = [];
    for (const name of SERVICES) if ((await stateOf(namespace, name)).phase !== 'Running') waiting.push(name);
    return waiting.length === 0 || `not running: ${waiting.join(', ')}`;
  }, 'every first cluster to serve', { timeoutMs: 180_000, explain });
  const first = Object.fromEntries(await Promise.all(SERVICES.map(async (n) => [n, (await stateOf(namespace, n)).activeClusterName as string] as const)));
  const recorders = Object.fromEntries(await Promise.all(SERVICES.map(async (n) => [n, await recordRouteWeights(env.admin, namespace, `${n}-httproute`)] as const)));
  for (const n of SERVICES) await waitFor(() => recorders[n].history.length > 0, `the route of ${n} to be watched`);
  for (const n of SERVICES) await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, n, namespace, { spec: { rayClusterConfig: rayClusterConfig('2') } });
  return { first, recorders };
}

/**
 * Waits until every upgrade has completed and its route dropped the old backend, then checks each
 * new cluster took exactly the weights the rules give (maxSurge 50, step 25: 25 and 50 onto the new
 * cluster's half, 75 and 100 after the old one gave up its half): none skipped, none repeated.
 */
async function everyUpgradeDone(namespace: string, first: Record<string, string>, recorders: Record<string, Awaited<ReturnType<typeof recordRouteWeights>>>, explain: () => string): Promise<void> {
  await waitFor(async () => {
    const waiting = [];
    for (const n of SERVICES) {
      const s = await stateOf(namespace, n);
      if (!(s.phase === 'Running' && s.activeClusterName !== first[n] && s.pendingClusterName === undefined)) waiting.push(`${n} ${s.phase}/${s.reason}`);
    }
    return waiting.length === 0 || `not done: ${waiting.join(', ')}`;
  }, 'every upgrade to complete', { timeoutMs: 240_000, explain });
  for (const n of SERVICES) await waitFor(() => recorders[n].history[recorders[n].history.length - 1].weights.length === 1, `the route of ${n} to drop the old backend`);
  for (const r of Object.values(recorders)) r.stop();
  for (const n of SERVICES) expect({ n, weights: recordedPendingWeights(recorders[n].history, (await stateOf(namespace, n)).activeClusterName as string) }).toEqual({ n, weights: [0, 25, 50, 75, 100] });
}

/** Waits until the shard Leases are held as `holders` says. */
async function waitForHolders(holders: Record<number, string>, what: string, explain: () => string): Promise<void> {
  await waitFor(async () => {
    const now = await shardHolders(env.admin);
    return JSON.stringify(now) === JSON.stringify(holders) || JSON.stringify(now);
  }, what, { timeoutMs: 120_000, explain });
}

/**
 * Seconds from `identity`'s last renewal of its member Lease (it renews no more once cut off) to the
 * latest acquisition of `shards` by their new holders, from the times the replicas wrote in the
 * Leases: the takeover as the Leases record it.
 */
async function takeoverAfterLastRenewal(identity: string, shards: readonly number[]): Promise<number> {
  const ms = (t: unknown) => Date.parse(String(t));
  const member = await env.admin.tryGet(KnownTypes.Lease, memberLeaseName(PREFIX, identity), 'default');
  const lastRenewal = ms((member?.spec as { renewTime?: string }).renewTime);
  const acquired = await Promise.all(shards.map(async (s) => ms(((await env.admin.tryGet(KnownTypes.Lease, shardLeaseName(PREFIX, s), 'default'))?.spec as { acquireTime?: string }).acquireTime)));
  return (Math.max(...acquired) - lastRenewal) / 1000;
}

/** The services of `namespace` each replica's log says it stepped, in order. */
function stepped(child: ChildOperator, namespace = NS): string[] {
  return child.lines.flatMap((l) => {
    try {
      const o = JSON.parse(l) as { msg?: string; rayservice?: string };
      return o.msg === 'step' && o.rayservice?.startsWith(`${namespace}/`) ? [o.rayservice.slice(namespace.length + 1)] : [];
    } catch {
      return [];
    }
  });
}

test('three replicas share six upgrades; one is SIGKILLed mid-upgrade and its services finish on the others, no step skipped or repeated', async () => {
  for (const r of ['a', 'b', 'c']) children.set(r, spawnOperatorChild(env.cp.kubeconfigPath, env.fleet.template, ['--shards', '8'], { POD_NAME: `replica-${r}` }));
  const explain = () => [...children].map(([r, c]) => `replica-${r}:\n${c.lines.slice(-15).join('\n')}`).join('\n');
  await waitForHolders(THREE, 'the three shares', explain);

  const { first, recorders } = await serveThenUpgrade(NS, explain);
  const state = (name: string) => stateOf(NS, name);
  // Mid-step for b: one of its services has moved traffic and is not done.
  await waitFor(async () => {
    const s = await state('svc-1');
    return (s.pendingWeight ?? 0) > 0 || `svc-1: ${s.phase}/${s.reason}, pending weight ${s.pendingWeight}`;
  }, "traffic on svc-1's new cluster", { timeoutMs: 120_000, explain });
  const b = children.get('b')!;
  const bSteppedBeforeKill = stepped(b).length;
  b.proc.kill('SIGKILL');
  await b.exited;

  await everyUpgradeDone(NS, first, recorders, explain);
  expect(await shardHolders(env.admin)).toEqual(WITHOUT_B);
  // status.owner names the replica holding each service's shard now (b's services: their new
  // holders, which rewrote the status at their first pass), and the shard.
  for (const n of SERVICES) {
    const status = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, n, NS))?.status as { owner?: unknown } | undefined;
    expect({ n, owner: status?.owner }).toEqual({ n, owner: { replica: `replica-${OWNER_WITHOUT_B[n]}`, shard: SHARD[n] } });
  }

  // Each replica stepped only services of its shards: b before it died, a and c theirs and, after,
  // b's (svc-1 was mid-upgrade when b died, so c finished it; svc-2 goes to a if it had steps left).
  const byReplica = (r: string) => [...new Set(stepped(children.get(r)!))].sort();
  expect(bSteppedBeforeKill).toBeGreaterThan(0);
  expect(byReplica('b')).toEqual(SERVICES.filter((n) => OWNER[n] === 'b'));
  expect(byReplica('a').filter((n) => n !== 'svc-2')).toEqual(['svc-4']);
  expect(byReplica('a').every((n) => OWNER_WITHOUT_B[n] === 'a')).toBe(true);
  expect(byReplica('c')).toEqual(SERVICES.filter((n) => OWNER_WITHOUT_B[n] === 'c'));

  for (const r of ['a', 'c']) children.get(r)!.proc.kill('SIGTERM');
  await Promise.all(['a', 'c'].map((r) => children.get(r)!.exited));
  expect(await shardHolders(env.admin)).toEqual({}); // a clean stop releases every shard
}, 600_000);

test('a replica cut off from the API server mid-upgrade: the others take its shards over, it takes them back when the network heals, and no step is skipped or repeated', async () => {
  // replica-b reaches the API server through a TEST-ONLY cuttable TCP proxy; a and c directly.
  const proxy = await CuttableProxy.start(env.cp.url);
  const throughProxy = path.join(env.cp.dir, 'kubeconfig-replica-b-partitioned');
  writeAdminKubeconfig(throughProxy, proxy.url, env.cp.caFile, 'admin', env.cp.adminToken);
  const replicas = new Map<string, ChildOperator>();
  for (const r of ['a', 'b', 'c']) {
    const child = spawnOperatorChild(r === 'b' ? throughProxy : env.cp.kubeconfigPath, env.fleet.template, ['--shards', '8'], { POD_NAME: `replica-${r}` });
    replicas.set(r, child);
    children.set(`partitioned-${r}`, child);
  }
  const explain = () => [...replicas].map(([r, c]) => `replica-${r}:\n${c.lines.slice(-15).join('\n')}`).join('\n');
  try {
    await waitForHolders(THREE, 'the three shares', explain);
    const { first, recorders } = await serveThenUpgrade(PARTITIONED, explain);
    await waitFor(async () => {
      const s = await stateOf(PARTITIONED, 'svc-1');
      return (s.pendingWeight ?? 0) > 0 || `svc-1: ${s.phase}/${s.reason}, pending weight ${s.pendingWeight}`;
    }, "traffic on svc-1's new cluster", { timeoutMs: 120_000, explain });

    proxy.cut();
    await waitForHolders(WITHOUT_B, "b's shards taken over by a and c", explain);
    const takeoverSeconds = await takeoverAfterLastRenewal('replica-b', [3, 4, 5]);
    proxy.heal();
    await waitForHolders(THREE, 'b holding its shards again', explain);
    await everyUpgradeDone(PARTITIONED, first, recorders, explain);

    // Every service's status names the replica that holds its shard now (b's again after the heal).
    await waitFor(async () => {
      const wrong = [];
      for (const n of SERVICES) {
        const owner = ((await env.admin.tryGet(RAYSHIFT_RAYSERVICE, n, PARTITIONED))?.status as { owner?: { replica?: string; shard?: number } } | undefined)?.owner;
        if (owner?.replica !== `replica-${OWNER_PARTITIONED[n]}` || owner?.shard !== SHARD_PARTITIONED[n]) wrong.push(`${n}: ${JSON.stringify(owner)}`);
      }
      return wrong.length === 0 || wrong.join(', ');
    }, 'each status to name the holder of its shard', { timeoutMs: 60_000, explain });
    // The lease duration (15 s) plus one renewal period (5 s) bounds the takeover; printed, not asserted (a loaded machine stretches it).
    const steppedBy = Object.fromEntries([...replicas].map(([r, c]) => [r, [...new Set(stepped(c, PARTITIONED))].sort().join(' ')]));
    process.stdout.write(`partition: b's shards taken over ${takeoverSeconds.toFixed(1)} s after its last renewal (as the Leases record it); services stepped by a: ${steppedBy.a}; b: ${steppedBy.b}; c: ${steppedBy.c}\n`);
  } finally {
    for (const c of replicas.values()) c.proc.kill('SIGTERM');
    await Promise.all([...replicas.values()].map((c) => c.exited));
    await proxy.close();
  }
  expect(await shardHolders(env.admin)).toEqual({});
}, 600_000);
