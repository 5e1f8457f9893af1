/**
 * Issue 35, side by side in one run: the same coordinated prefill/decode rollout (v1 → v2) under
 * steady load from a bounded client, once with ONE sglang-router over every Pod of the group (what
 * RBG users run today) and once with rayshift's version-matched routing (one router per release,
 * the operator moving the route's weights), at 4 prefill / 2 decode and 40 / 20. Prints, per run,
 * requests served, failed and served by a mixed pair (a prefill and a decode of different
 * releases), the rollout's wall time, and the load average; never asserts. See docs/bench.md.
 *
 * REAL: the test cluster (kube-apiserver, etcd, scheduler, controller-manager, kwok Nodes), RBG
 * v0.7.0's controller rolling the roles, rayshift's operator (its RBG controller, in this process)
 * moving partitions and, in the routed runs, the HTTPRoute's weights, and the sglang-router 0.3.2
 * binary in PD mode (policy random). TEST-ONLY simulated: the prefill and decode workers
 * (simulated-pd-worker.ts; kwok's Pods run no process), the routers' Kubernetes discovery of them
 * (simulated-pod-discovery.ts: a Ready Pod's worker is registered through the router's API, under
 * the selectors the rendered router Deployment carries), and the Gateway (the client sends request
 * i to the new release's router when i mod 100 < the route's live weight).
 *
 *   npx tsx bench/rbg-router-mixed.bench.ts [--sizes 4/2,40/20] [--lanes 2]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeClient } from '../lib/runtime/kube/client';
import { RbgRolloutController } from '../operator/rbg-controller';
import { startTestCluster } from '../test/support/cluster';
import { upstreamCrdFiles } from '../test/support/controlplane';
import { Supervisor } from '../test/support/processes';
import { GroupContext } from '../test/support/rbg-operator-group';
import { RoutedGroupShape } from '../test/support/rbg-routed-group';
import { RouterRollout, routerRollout } from '../test/support/rbg-router-rollout';
import { requireSglangRouter } from '../test/support/sglang-router';
import { printTable } from './operator-harness';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const SIZES = arg('sizes', '4/2,40/20').split(',').map((s) => s.split('/').map(Number) as [number, number]);
const LANES = Number(arg('lanes', '2'));
const NS = 'default';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

/** The rule of a size: maxSkew 50 % and one unavailable at 4/2; 25 % and 10 % at larger sizes (40 rounds of one would be a different rollout, not a bigger one). */
function shapeOf(name: string, prefill: number, decode: number): RoutedGroupShape {
  const small = prefill <= 4;
  return { name, namespace: NS, replicas: { prefill, decode }, maxSkew: small ? '50%' : '25%', maxUnavailable: small ? 1 : '10%' };
}

async function main(): Promise<void> {
  requireSglangRouter();
  const gatewayApi = (await upstreamCrdFiles()).filter((f) => f.includes('gateway.networking.k8s.io_'));
  const cluster = await startTestCluster({ rbg: true, nodes: 2, crds: gatewayApi });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  const gitops = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'gitops' });
  const watches: { stop(): void }[] = [];
  const ctx: GroupContext = { cluster, admin, gitops, namespace: NS, watches };
  const controller = new RbgRolloutController({ client: admin, log: SILENT });
  await controller.start();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-router-mixed-'));
  const supervisor = new Supervisor(dir, 'RAYSHIFT_KEEP_SGLANG_ROUTER');
  const rows: RouterRollout[] = [];
  try {
    for (const [prefill, decode] of SIZES) {
      for (const mode of ['one router', 'rayshift'] as const) {
        const name = `pd${prefill}-${mode === 'rayshift' ? 'matched' : 'one'}`;
        const row = await routerRollout(ctx, cluster, supervisor, dir, shapeOf(name, prefill, decode), mode, LANES);
        rows.push(row);
        console.log(`${row.size} ${mode}: ${row.result.statuses.length} requests, ${row.mixed} mixed, rollout ${(row.wallMs / 1000).toFixed(1)} s${row.weights ? `; weights ${row.weights}` : ''}`);
      }
    }
  } finally {
    supervisor.release();
    for (const w of watches) w.stop();
    await controller.stop();
    admin.close();
    gitops.close();
    await cluster.stop();
    if (process.env.RAYSHIFT_KEEP_SGLANG_ROUTER !== '1') fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nsame rollout (v1 → v2), ${LANES} client lanes of one request at a time; mixed = served by a prefill and a decode of different releases;`);
  console.log(`pools' mix = the mixed share random pairing gives on the chosen router's registered workers at each request's send time`);
  printTable([
    ['size', 'routing', 'requests', 'served', 'failed', 'mixed', 'mixed %', 'pools\' mix %', 'rollout s', 'to new release'],
    ...rows.map((r) => {
      const failed = r.result.statuses.filter((s) => s !== 200).length;
      return [`${r.size}`, r.mode, r.result.statuses.length, r.served, failed, r.mixed, r.served ? (100 * r.mixed) / r.served : 0, r.result.statuses.length ? (100 * r.expectedMixed) / r.result.statuses.length : 0, r.wallMs / 1000, r.mode === 'rayshift' ? String(r.result.sent.v2 ?? 0) : '-'];
    }),
  ]);
  for (const r of rows.filter((x) => x.weights)) console.log(`${r.size} rayshift: new-release weights ${r.weights}`);
  for (const r of rows.filter((x) => Object.keys(x.result.failed).length)) console.log(`${r.size} ${r.mode}: failed ${JSON.stringify(r.result.failed)}`);
  console.log(`load average (1/5/15 min) at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} on ${os.cpus().length} cores`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
