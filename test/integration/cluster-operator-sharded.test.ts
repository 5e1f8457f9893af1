/**
 * A sharded operator on the test cluster (test/support/operator-env.ts: the real KubeRay; TEST-ONLY
 * Gateway status writer and Serve fleet): three `rayshift operator --shards 8` child processes share
 * six services upgrading at once, and one of them is SIGKILLed while its services are mid-upgrade.
 * Every upgrade completes with exactly the traffic steps the rules give (none skipped, none
 * repeated), each replica stepped only the services of the shards it held, and the killed replica's
 * shards moved to the replicas the hashing names once their Leases expired; each service's
 * `status.owner` names the replica that holds its shard at the end.
 *
 * Needs `npm run build` (the children run build/).
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { LEASE_OF_LABEL, SHARD_LABEL } from '../../lib/spec/object-names';
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

/** The services each replica's log says it stepped, in order. */
function stepped(child: ChildOperator): string[] {
  return child.lines.flatMap((l) => {
    try {
      const o = JSON.parse(l) as { msg?: string; rayservice?: string };
      return o.msg === 'step' && o.rayservice?.startsWith(`${NS}/`) ? [o.rayservice.slice(NS.length + 1)] : [];
    } catch {
      return [];
    }
  });
}

test('three replicas share six upgrades; one is SIGKILLed mid-upgrade and its services finish on the others, no step skipped or repeated', async () => {
  await createNamespace(env.admin, NS);
  for (const r of ['a', 'b', 'c']) children.set(r, spawnOperatorChild(env.cp.kubeconfigPath, env.fleet.template, ['--shards', '8'], { POD_NAME: `replica-${r}` }));
  const explain = () => [...children].map(([r, c]) => `replica-${r}:\n${c.lines.slice(-15).join('\n')}`).join('\n');
  const three = { 0: 'replica-c', 1: 'replica-c', 2: 'replica-c', 3: 'replica-b', 4: 'replica-b', 5: 'replica-b', 6: 'replica-a', 7: 'replica-c' };
  await waitFor(async () => JSON.stringify(await shardHolders(env.admin)) === JSON.stringify(three) || JSON.stringify(await shardHolders(env.admin)), 'the three shares', { timeoutMs: 120_000, explain });

  for (const name of SERVICES) await env.admin.create(rayService(NS, name, { maxSurge: 50, step: 25, interval: 1 }));
  const state = async (name: string) => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, NS));
  await waitFor(async () => {
    const waiting = [];
    for (const name of SERVICES) if ((await state(name)).phase !== 'Running') waiting.push(name);
    return waiting.length === 0 || `not running: ${waiting.join(', ')}`;
  }, 'every first cluster to serve', { timeoutMs: 180_000, explain });
  const first = Object.fromEntries(await Promise.all(SERVICES.map(async (n) => [n, (await state(n)).activeClusterName as string] as const)));
  const recorders = Object.fromEntries(await Promise.all(SERVICES.map(async (n) => [n, await recordRouteWeights(env.admin, NS, `${n}-httproute`)] as const)));
  for (const n of SERVICES) await waitFor(() => recorders[n].history.length > 0, `the route of ${n} to be watched`);

  for (const n of SERVICES) await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, n, NS, { spec: { rayClusterConfig: rayClusterConfig('2') } });
  // Mid-step for b: one of its services has moved traffic and is not done.
  await waitFor(async () => {
    const s = await state('svc-1');
    return (s.pendingWeight ?? 0) > 0 || `svc-1: ${s.phase}/${s.reason}, pending weight ${s.pendingWeight}`;
  }, "traffic on svc-1's new cluster", { timeoutMs: 120_000, explain });
  const b = children.get('b')!;
  const bSteppedBeforeKill = stepped(b).length;
  b.proc.kill('SIGKILL');
  await b.exited;

  await waitFor(async () => {
    const waiting = [];
    for (const n of SERVICES) {
      const s = await state(n);
      if (!(s.phase === 'Running' && s.activeClusterName !== first[n] && s.pendingClusterName === undefined)) waiting.push(`${n} ${s.phase}/${s.reason}`);
    }
    return waiting.length === 0 || `not done: ${waiting.join(', ')}`;
  }, 'every upgrade to complete', { timeoutMs: 240_000, explain });
  for (const n of SERVICES) await waitFor(() => recorders[n].history[recorders[n].history.length - 1].weights.length === 1, `the route of ${n} to drop the old backend`);
  for (const r of Object.values(recorders)) r.stop();

  // maxSurge 50, step 25 from the rules: 25 and 50 onto the new cluster's half, 75 and 100 after the old one gave up its half.
  for (const n of SERVICES) expect({ n, weights: recordedPendingWeights(recorders[n].history, (await state(n)).activeClusterName as string) }).toEqual({ n, weights: [0, 25, 50, 75, 100] });
  expect(await shardHolders(env.admin)).toEqual({ 0: 'replica-c', 1: 'replica-c', 2: 'replica-c', 3: 'replica-c', 4: 'replica-a', 5: 'replica-c', 6: 'replica-a', 7: 'replica-c' });
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
