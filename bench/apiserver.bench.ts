/**
 * 1,000 concurrent `GetRayService` calls through the rayshift API server over REST and over gRPC,
 * against the same 1,000 reads made directly on the Kubernetes API as the same user (alice, a
 * static-token user with a namespace RoleBinding), on a real kube-apiserver. Each mode runs a warm-up
 * round, then `--rounds` measured rounds (kube-apiserver allows 4,000 reads in flight here, so neither
 * path is throttled); prints p50/p99 per call, wall time per round, and the ratios
 * to the direct reads, all measured in this one run. Never asserts.
 *
 *   npx tsx bench/apiserver.bench.ts [--calls 1000] [--rounds 3]
 */
import * as https from 'node:https';
import { KubeClient } from '../lib/runtime/kube/client';
import { loadClientNode } from '../lib/runtime/kube/client-node';
import { TEAM_A, rayServiceBody, startApiEnv } from '../test/apiserver/support/api-env';
import { RAYSHIFT_RAYSERVICE } from '../test/support/operator-env';
import { printTable, quantile } from './operator-harness';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** Latencies (ms) of `calls` concurrent calls, and the wall time of the round. */
async function round(calls: number, call: (i: number) => Promise<unknown>): Promise<{ latencies: number[]; wallMs: number }> {
  const start = performance.now();
  const latencies = await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      const t = performance.now();
      await call(i);
      return performance.now() - t;
    }),
  );
  return { latencies, wallMs: performance.now() - start };
}

async function main(): Promise<void> {
  const calls = arg('calls', 1000);
  const rounds = arg('rounds', 3);
  const services = 20;
  console.log(`starting the control plane and the API server; ${calls} concurrent Get calls × ${rounds} rounds per mode`);
  // Room for 1,000 concurrent reads (kube-apiserver's default is 400 in flight, then 429).
  const env = await startApiEnv({ apiserverArgs: ['--max-requests-inflight=4000', '--enable-priority-and-fairness=false'] });
  try {
    for (let i = 0; i < services; i++) {
      const r = await env.rest('POST', `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`, rayServiceBody(`bench-${i}`));
      if (r.status !== 200) throw new Error(`creating bench-${i}: HTTP ${r.status} ${r.text}`);
    }
    const kc = new (loadClientNode().KubeConfig)();
    kc.loadFromOptions({
      clusters: [{ name: 'cp', server: env.cp.url, caFile: env.cp.caFile }],
      users: [{ name: 'alice', token: env.tokens.alice }],
      contexts: [{ name: 'alice', cluster: 'cp', user: 'alice' }],
      currentContext: 'alice',
    });
    const direct = KubeClient.fromKubeConfig(kc);
    const grpc = env.client('grpc', env.tokens.alice);
    const agent = new https.Agent({ keepAlive: true, ca: env.cp.ca });
    const restGet = (name: string) =>
      new Promise<void>((resolve, reject) => {
        const req = https.request(`${env.api.url}/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices/${name}`, { agent, headers: { authorization: `Bearer ${env.tokens.alice}` } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        });
        req.on('error', reject);
        req.end();
      });
    const modes: [string, (i: number) => Promise<unknown>][] = [
      ['Kubernetes API (direct)', (i) => direct.get(RAYSHIFT_RAYSERVICE, `bench-${i % services}`, TEAM_A)],
      ['API server, REST', (i) => restGet(`bench-${i % services}`)],
      ['API server, gRPC', (i) => grpc.rayServices.getRayService({ namespace: TEAM_A, name: `bench-${i % services}` })],
    ];
    const results = new Map<string, { p50: number; p99: number; wall: number }>();
    for (const [name, call] of modes) {
      await round(Math.min(calls, 100), call);
      const all: number[] = [];
      const walls: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const { latencies, wallMs } = await round(calls, call);
        all.push(...latencies);
        walls.push(wallMs);
      }
      all.sort((a, b) => a - b);
      walls.sort((a, b) => a - b);
      results.set(name, { p50: quantile(all, 0.5), p99: quantile(all, 0.99), wall: quantile(walls, 0.5) });
    }
    const base = results.get(modes[0][0])!;
    printTable([
      ['mode', 'p50 ms', 'p99 ms', 'round ms (median)', 'p50 ratio', 'p99 ratio', 'round ratio'],
      ...[...results].map(([name, r]) => [name, r.p50, r.p99, r.wall, r.p50 / base.p50, r.p99 / base.p99, r.wall / base.wall] as (string | number)[]),
    ]);
    direct.close();
    agent.destroy();
  } finally {
    await env.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
