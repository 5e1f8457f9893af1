/**
 * What one RayService status write costs the real kube-apiserver + etcd, in CPU and wall time, for
 * each way of writing it (server-side apply, RFC 6902 JSON patch, RFC 7386 merge patch). It bounds
 * what a 2-core machine can sustain: `bench/operator-scale.bench.ts` needs this cost times the
 * writes of every traffic step (the operator's and the Gateway's), times the steps per second.
 * Prints figures; never asserts.
 *
 *   npx tsx bench/apiserver-write-cost.bench.ts [--writes 1000]
 */
import { RAYSHIFT_RAYSERVICE, createNamespace, rayService, startOperatorEnv } from '../test/support/operator-env';
import { cpuSecondsOf, fmt, printTable } from './operator-harness';

const NS = 'write-cost';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** A status of the shape and size the operator writes during a traffic step. */
function stepStatus(i: number): Record<string, unknown> {
  const now = Date.now();
  return {
    observedGeneration: 1,
    conditions: [{ type: 'Ready', status: 'True', reason: 'Upgrading', message: `traffic step ${i}`, lastTransitionTime: new Date(now).toISOString() }],
    engineState: { phase: 'Upgrading', reason: 'Migrating', activeClusterName: 'svc-a', pendingClusterName: 'svc-b', activeWeight: 100 - (i % 100), pendingWeight: i % 100, lastTrafficMigratedTime: now, lastProgressTime: now, trafficConfirmed: false, deletions: [] },
    lastUpdateTime: new Date(now).toISOString(),
  };
}

async function main(): Promise<void> {
  const writes = arg('writes', 1000);
  const env = await startOperatorEnv();
  const c = env.admin;
  await createNamespace(c, NS);
  const styles: [string, (name: string, i: number) => Promise<unknown>][] = [
    ['server-side apply (force)', (name, i) => c.applyStatus({ apiVersion: RAYSHIFT_RAYSERVICE.apiVersion, kind: RAYSHIFT_RAYSERVICE.kind, metadata: { name, namespace: NS }, status: stepStatus(i) }, { force: true })],
    ['JSON patch (add /status)', (name, i) => c.patchJson(RAYSHIFT_RAYSERVICE, name, NS, [{ op: 'add', path: '/status', value: stepStatus(i) }], { subresource: 'status' })],
    ['merge patch ({status})', (name, i) => c.patchMerge(RAYSHIFT_RAYSERVICE, name, NS, { status: stepStatus(i) }, { subresource: 'status' })],
  ];
  const rows: (string | number)[][] = [['write style', 'round', 'CPU ms / write (apiserver + etcd)', 'wall ms / write']];
  for (let s = 0; s < styles.length; s++) await c.create(rayService(NS, `svc-${s}`, { maxSurge: 50, step: 25, interval: 5 }));
  for (let round = 1; round <= 2; round++) {
    for (let s = 0; s < styles.length; s++) {
      const [label, write] = styles[s];
      const cpu0 = cpuSecondsOf(env.cp.dir);
      const t0 = performance.now();
      for (let i = 0; i < writes; i++) await write(`svc-${s}`, i);
      rows.push([label, round, fmt(((cpuSecondsOf(env.cp.dir) - cpu0) * 1000) / writes), fmt((performance.now() - t0) / writes)]);
    }
  }
  console.log(`${writes} sequential status writes per style and round, one RayService each, simulators idle`);
  printTable(rows);
  await env.stop();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
