/**
 * Issue 31 item 7: `rayshift api-server` stays within the chart's memory limit under load. The
 * chart's container (its arguments, its `NODE_OPTIONS` heap sizing, its RBAC and ServiceAccount) runs
 * as its own process against the real kube-apiserver (so it needs `npm run build`) and takes 2,000
 * authorized calls at concurrency 50: REST and gRPC reads and lists, `validate_only` creates with
 * 60 KB Serve configs and upgrade watches (test/apiserver/support/load-burst.ts). Its peak RSS is the
 * kernel's high-water mark (`VmHWM`), a count rather than a sample, so no timing window decides it.
 * Before the heap was sized from the limit the peak was 332-390 MiB (limit 256 Mi); after, 192-207
 * (bench/apiserver-memory.bench.ts, docs/api-server.md).
 */
import { ApiEnv, startApiEnv } from '../apiserver/support/api-env';
import { ChildApiServer, chartApiServerObjects, spawnChartApiServer } from '../apiserver/support/chart-server';
import { BURST_MIX, burstCallers, runBurst, seedBurst } from '../apiserver/support/load-burst';
import { quantityMiB } from '../../operator/chart/node-heap';

let env: ApiEnv;
let server: ChildApiServer;

beforeAll(async () => {
  env = await startApiEnv();
  server = await spawnChartApiServer(env);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await env?.stop();
});

test("2,000 calls at concurrency 50: every one answered, the peak RSS at most 90% of the chart's memory limit", async () => {
  const deployment = chartApiServerObjects().find((o) => o.kind === 'Deployment')!;
  const limitMiB = quantityMiB(String((deployment.spec as any).template.spec.containers[0].resources.limits.memory))!;
  const callers = burstCallers(env.tokens);
  await seedBurst(server.url, env.cp.ca, callers);
  const started = server.memory();
  const answers = await runBurst(server.url, env.cp.ca, callers, 2000, 50);
  const { peakMiB } = server.memory();
  console.log(`chart limit ${limitMiB} MiB; RSS after seeding ${started.rssMiB.toFixed(0)} MiB, peak during the burst ${peakMiB.toFixed(0)} MiB; answers ${JSON.stringify(answers)}`);
  // Every call answered OK (HTTP 200, grpc-status 0): a server that refuses or fails calls could hold less memory.
  const calls = BURST_MIX.filter((k, i) => BURST_MIX.indexOf(k) === i);
  expect(Object.fromEntries(calls.map((k) => [k, Object.keys(answers[k])]))).toEqual(Object.fromEntries(calls.map((k) => [k, [k === 'grpc-get' ? '0' : '200']])));
  expect(peakMiB).toBeLessThan(limitMiB * 0.9);
}, 600_000);
