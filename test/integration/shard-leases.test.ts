/**
 * The Leases of a sharded operator on a real kube-apiserver (etcd + kube-apiserver,
 * test/support/controlplane.ts): three replicas share 8 shards, one crashes and its shards move
 * once their Leases expire, one stops cleanly and hands its shards over after draining them, one
 * joins and takes its part from the others, and one is cut off from the API server (TEST-ONLY TCP
 * proxy) and stops working on its shards before the others may take them. Whatever a replica's
 * Leases say, two replicas never work on one shard at once (`owns`, sampled at every check of every wait).
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { ShardLeases } from '../../lib/runtime/kube/shard-leases';
import { KnownTypes } from '../../lib/runtime/kube/types';
import * as path from 'node:path';
import { ControlPlane, startControlPlane } from '../support/controlplane';
import { writeAdminKubeconfig } from '../support/controlplane-files';
import { CuttableProxy } from '../support/cuttable-proxy';
import { waitFor } from '../support/wait-at-most';

const NS = 'operator';
const SHARDS = 8;
let cp: ControlPlane;
let kube: KubeClient;

beforeAll(async () => {
  cp = await startControlPlane();
  kube = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
}, 300_000);

afterAll(async () => {
  kube?.close();
  await cp?.stop();
});

interface Replica {
  readonly name: string;
  readonly leases: ShardLeases;
  /** What happened to its shards, in order: `+3` acquired, `drain 3` (with whether the Lease was still its own then). */
  readonly log: string[];
}

function replica(name: string, prefix: string, client = kube): Replica {
  const log: string[] = [];
  const leases: ShardLeases = new ShardLeases(client, {
    namespace: NS,
    prefix,
    identity: name,
    shards: SHARDS,
    leaseDurationSeconds: 2,
    renewMs: 500,
    onAcquired: (shard) => log.push(`+${shard}`),
    drain: async (shard) => {
      // The Lease is still this replica's while it drains, and it already works on nothing of the shard.
      const lease = await kube.get(KnownTypes.Lease, `${prefix}-shard-${shard}`, NS);
      log.push(`drain ${shard}: holder ${(lease.spec as { holderIdentity?: string }).holderIdentity}, owns ${leases.owns(shard)}`);
    },
    onError: (err) => log.push(`error ${(err as Error).message}`),
  });
  return { name, leases, log };
}

/** An admin client that reaches the API server through `proxy`. */
function clientThrough(proxy: CuttableProxy): KubeClient {
  const file = path.join(cp.dir, `kubeconfig-${path.basename(proxy.url).replace(/\W/g, '-')}`);
  writeAdminKubeconfig(file, proxy.url, cp.caFile, 'admin', cp.adminToken);
  return KubeClient.fromKubeconfig(file);
}

/** Waits until each replica owns exactly `expected[name]`, failing the test if two replicas ever own one shard. */
async function waitForShares(replicas: readonly Replica[], expected: Record<string, number[]>, what: string): Promise<void> {
  await waitFor(() => {
    const owners = new Map<number, string[]>();
    for (const r of replicas) for (const s of r.leases.held()) owners.set(s, [...(owners.get(s) ?? []), r.name]);
    for (const [s, who] of owners) if (who.length > 1) throw new Error(`shard ${s} owned by ${who.join(' and ')} at once`);
    const actual = Object.fromEntries(replicas.map((r) => [r.name, r.leases.held()]));
    return JSON.stringify(actual) === JSON.stringify(expected) || `held: ${JSON.stringify(actual)}`;
  }, what, { timeoutMs: 60_000 });
}

test('three replicas share the shards; a crashed one\'s move on expiry, a stopped one\'s after draining', async () => {
  const [a, b, c] = ['replica-a', 'replica-b', 'replica-c'].map((n) => replica(n, 'crash'));
  // The shares are the engine's rendezvous hashing of these names (test/engine/shards.test.ts).
  await Promise.all([a, b, c].map((r) => r.leases.start()));
  await waitForShares([a, b, c], { 'replica-a': [6], 'replica-b': [3, 4, 5], 'replica-c': [0, 1, 2, 7] }, 'the three shares');

  const bMark = b.log.length;
  b.leases.abandon(); // a crash: no release, no renewal
  await waitForShares([a, c], { 'replica-a': [4, 6], 'replica-c': [0, 1, 2, 3, 5, 7] }, "b's shards taken over after their Leases expired");
  expect(b.log.slice(bMark)).toEqual([]);

  const cMark = c.log.length;
  await c.leases.stop(); // a clean stop: drained, then released, so a need not wait for expiry
  expect(c.log.slice(cMark).filter((l) => l.startsWith('drain'))).toEqual([0, 1, 2, 3, 5, 7].map((s) => `drain ${s}: holder replica-c, owns false`));
  await waitForShares([a], { 'replica-a': [0, 1, 2, 3, 4, 5, 6, 7] }, "c's shards taken by a");
  await a.leases.stop();
  expect([a, c].flatMap((r) => r.log.filter((l) => l.startsWith('error')))).toEqual([]);
}, 120_000);

test('a replica that joins takes its share from the holders, each shard drained before it moves', async () => {
  const [a, c] = ['replica-a', 'replica-c'].map((n) => replica(n, 'join'));
  await Promise.all([a, c].map((r) => r.leases.start()));
  await waitForShares([a, c], { 'replica-a': [4, 6], 'replica-c': [0, 1, 2, 3, 5, 7] }, 'the two shares');
  const [aMark, cMark] = [a.log.length, c.log.length];
  const b = replica('replica-b', 'join');
  await b.leases.start();
  await waitForShares([a, b, c], { 'replica-a': [6], 'replica-b': [3, 4, 5], 'replica-c': [0, 1, 2, 7] }, 'b takes its share');
  expect(a.log.slice(aMark)).toEqual(['drain 4: holder replica-a, owns false']);
  expect(c.log.slice(cMark)).toEqual(['drain 3: holder replica-c, owns false', 'drain 5: holder replica-c, owns false']);
  expect(b.log.filter((l) => l.startsWith('+')).sort()).toEqual(['+3', '+4', '+5']);
  await Promise.all([a, b, c].map((r) => r.leases.stop()));
}, 120_000);

test('a replica cut off from the API server stops working on its shards before the others take them, and gets its share back', async () => {
  const proxy = await CuttableProxy.start(cp.url);
  const bClient = clientThrough(proxy);
  try {
    const [a, c] = ['replica-a', 'replica-c'].map((n) => replica(n, 'partition'));
    const b = replica('replica-b', 'partition', bClient);
    await Promise.all([a, b, c].map((r) => r.leases.start()));
    const three = { 'replica-a': [6], 'replica-b': [3, 4, 5], 'replica-c': [0, 1, 2, 7] };
    await waitForShares([a, b, c], three, 'the three shares');

    proxy.cut(); // b keeps running but no request of its reaches the API server
    await waitForShares([a, b, c], { 'replica-a': [4, 6], 'replica-b': [], 'replica-c': [0, 1, 2, 3, 5, 7] }, "b's shards taken over while b is cut off");
    expect(b.log.filter((l) => l.startsWith('drain'))).toEqual([]); // it gave them up by its clock, not by a release
    expect(b.log.some((l) => l.startsWith('error'))).toBe(true);

    proxy.heal();
    await waitForShares([a, b, c], three, 'b back with its share');
    await Promise.all([a, b, c].map((r) => r.leases.stop()));
  } finally {
    bClient.close();
    await proxy.close();
  }
}, 120_000);
