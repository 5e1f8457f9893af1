/**
 * 500 RayServices upgrading at once on one operator process, on the test cluster (real KubeRay,
 * which also makes every cluster's Pods; TEST-ONLY Gateway status writer and Serve fleet in the bench process; the operator runs in
 * a child process so that its CPU and RSS are its own). Prints step lateness (the bench's route
 * watch − due time), API writes per traffic step, reconcile figures and wall time; never asserts.
 *
 *   npx tsx bench/operator-scale.bench.ts [--services 500] [--concurrency N] [--interval 5] [--start-jitter-ms 0]
 *
 * `--concurrency` is passed to the Operator (default: the Operator's own default).
 */
import { ChildProcess, fork } from 'node:child_process';
import { ServeDashboardClient } from '../lib/runtime/serve/client';
import { templateDashboardResolver } from '../lib/runtime/serve/resolver';
import { WorkQueue } from '../lib/runtime/work-queue';
import { Operator } from '../operator/operator';
import { RAYSHIFT_RAYSERVICE, createNamespace, rayClusterConfig, rayService, serveConfig, startOperatorEnv } from '../test/support/operator-env';
import { RequestCounts, StepRecorder, countingClient, cpuSecondsOf, fmt, formatCounts, histogramCountSum, histogramQuantile, latenessStats, mapLimit, printTable, quantile, since, summarizeCounts } from './operator-harness';

const GOAL_P99_MS = 250;
const GOAL_WRITES_PER_STEP = 2;
const NS = 'scale';

function arg(name: string, fallback?: number): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

// --- the operator process ---------------------------------------------------------------------------

interface ChildStats {
  writes: number;
  reconciles: number;
  reconcileSeconds: number;
  reconcileP50: number;
  reconcileP99: number;
  latenessN: number;
  latenessP50: number;
  latenessP99: number;
  errors: number;
  counts: RequestCounts;
  statusReasons: RequestCounts;
  millis: RequestCounts;
  errorKinds: Record<string, number>;
  triggers: Record<string, number>;
  cpuUserMs: number;
  cpuSystemMs: number;
  rssMaxMb: number;
  wallMs: number;
}

async function child(): Promise<void> {
  const [kubeconfig, template, concurrency] = process.argv.slice(3);
  const c = countingClient(kubeconfig);
  const errorKinds: Record<string, number> = {};
  // Dashboard calls are counted and timed like API requests (profiling only; behaviour unchanged).
  for (const method of ['getServeDetails', 'putServeConfig'] as const) {
    const original = ServeDashboardClient.prototype[method] as (...a: unknown[]) => Promise<unknown>;
    (ServeDashboardClient.prototype as unknown as Record<string, unknown>)[method] = async function (this: unknown, ...a: unknown[]) {
      const k = `SERVE ${method}`;
      c.counts[k] = (c.counts[k] ?? 0) + 1;
      const t = performance.now();
      try {
        return await original.apply(this, a);
      } finally {
        c.millis[k] = (c.millis[k] ?? 0) + performance.now() - t;
      }
    };
  }
  const operator = new Operator({
    client: c.client,
    resolver: templateDashboardResolver(template),
    log: { info: () => undefined, debug: () => undefined, error: () => undefined, warn: (o: { err?: string }) => {
      const k = String(o.err ?? '').replace(/s\d{3}/g, 'sNNN').replace(/-[0-9a-z]{5}\b/g, '-xxxxx').slice(0, 300);
      errorKinds[k] = (errorKinds[k] ?? 0) + 1;
    } },
    ...(concurrency !== 'default' ? { concurrency: Number(concurrency) } : {}),
  });
  // What queues reconciles (profiling only): watch events by kind, exact wake-ups, immediate requeues.
  const triggers: Record<string, number> = {};
  const bump = (k: string) => (triggers[k] = (triggers[k] ?? 0) + 1);
  const proto = Operator.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const m of ['onService', 'onOwned', 'onRoute', 'onGateway']) {
    const original = proto[m];
    proto[m] = function (this: unknown, ...a: unknown[]) {
      bump(`event ${m.slice(2).toLowerCase()}${(a[0] as { resync?: boolean }).resync ? ' (resync)' : ''}`);
      return original.apply(this, a);
    };
  }
  const wq = WorkQueue.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const addAt = wq.addAt;
  wq.addAt = function (this: unknown, key: unknown, at: unknown) {
    bump((at as number) <= Date.now() ? 'requeue now (actions taken)' : 'requeue at a time');
    return addAt.call(this, key, at);
  };
  const add = wq.add;
  wq.add = function (this: { active: Set<string>; queued: Set<string> }, key: unknown) {
    if (this.active.has(key as string)) bump('add while running (re-run)');
    else if (this.queued.has(key as string)) bump('add while queued (coalesced)');
    return add.call(this, key);
  };
  await operator.start();
  let rssMax = 0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 500);
  let base = { cpu: process.cpuUsage(), at: Date.now(), writes: 0, reconciles: { count: 0, sum: 0 }, errors: 0 };
  const snapshot = async () => ({
    writes: (await operator.metrics.writes.get()).values[0]?.value ?? 0,
    reconciles: histogramCountSum(await operator.metrics.reconcileSeconds.get()),
    errors: (await operator.metrics.errors.get()).values[0]?.value ?? 0,
  });
  process.on('message', async (m: { type: string }) => {
    if (m.type === 'reset') {
      const s = await snapshot();
      c.reset();
      for (const k of Object.keys(triggers)) delete triggers[k];
      for (const k of Object.keys(errorKinds)) delete errorKinds[k];
      operator.metrics.stepLateness.reset();
      operator.metrics.reconcileSeconds.reset();
      rssMax = process.memoryUsage().rss;
      base = { cpu: process.cpuUsage(), at: Date.now(), ...s, reconciles: { count: 0, sum: 0 } };
      process.send!({ type: 'reset' });
    } else if (m.type === 'stats') {
      const s = await snapshot();
      const cpu = process.cpuUsage(base.cpu);
      const rh = await operator.metrics.reconcileSeconds.get();
      const lh = await operator.metrics.stepLateness.get();
      const stats: ChildStats = {
        writes: s.writes - base.writes,
        reconciles: s.reconciles.count,
        reconcileSeconds: s.reconciles.sum,
        reconcileP50: histogramQuantile(rh, 0.5),
        reconcileP99: histogramQuantile(rh, 0.99),
        latenessN: histogramCountSum(lh).count,
        latenessP50: histogramQuantile(lh, 0.5),
        latenessP99: histogramQuantile(lh, 0.99),
        errors: s.errors - base.errors,
        counts: { ...c.counts },
        statusReasons: { ...c.statusReasons },
        millis: { ...c.millis },
        errorKinds: { ...errorKinds },
        triggers: { ...triggers },
        cpuUserMs: cpu.user / 1000,
        cpuSystemMs: cpu.system / 1000,
        rssMaxMb: Math.max(rssMax, process.memoryUsage().rss) / 2 ** 20,
        wallMs: Date.now() - base.at,
      };
      process.send!({ type: 'stats', stats });
    } else if (m.type === 'stop') {
      clearInterval(sampler);
      await operator.stop();
      c.client.close();
      process.send!({ type: 'stop' });
      setTimeout(() => process.exit(0), 50);
    }
  });
  process.send!({ type: 'ready' });
}

function ask<T = unknown>(p: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string; stats?: unknown }) => {
      if (m.type !== type) return;
      p.off('message', on);
      resolve(m.stats as T);
    };
    p.on('message', on);
    if (type !== 'ready') p.send({ type });
  });
}

// --- the bench ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const n = arg('services', 500)!;
  const interval = arg('interval', 5)!;
  const concurrency = arg('concurrency');
  // Real clusters do not start their replicas in lockstep: `--start-jitter-ms J` gives each cluster
  // a replica start delay drawn once from 20 ms + [0, J) (default 0: every service due at once).
  const jitter = arg('start-jitter-ms', 0)!;
  const step = 25;
  const maxSurge = 50;
  const t0 = Date.now();
  console.log(`${n} services, maxSurge ${maxSurge}, step ${step}, interval ${interval} s, replica start jitter ${jitter} ms, operator concurrency ${concurrency ?? 'default'}`);
  // 3–4 Services per RayService: the harness' default /24 Service range (254 IPs) would run out.
  const env = await startOperatorEnv({ serve: () => ({ replicaStartDelayMs: 20 + Math.floor(Math.random() * jitter) }), apiserverArgs: ['--service-cluster-ip-range=10.0.0.0/16'] });
  console.log(`  control plane up (${since(t0)})`);
  const op = fork(__filename, ['--operator-child', env.cp.kubeconfigPath, env.fleet.template, String(concurrency ?? 'default')], { stdio: 'inherit', serialization: 'advanced' });
  await ask(op, 'ready');
  const recorder = new StepRecorder(env.admin, () => interval);
  await recorder.start();
  console.log(`  operator process ${op.pid} ready (${since(t0)})`);

  const names = Array.from({ length: n }, (_, i) => `s${String(i).padStart(3, '0')}`);
  const keys = names.map((x) => `${NS}/${x}`);
  await createNamespace(env.admin, NS);
  const running = (k: string) => {
    const s = recorder.state(k);
    return s?.phase === 'Running' && s.pendingClusterName === undefined && s.activeClusterName !== undefined && s.trafficConfirmed === true && recorder.hasRoute(k);
  };
  let progress = setInterval(() => console.log(`  setup: ${keys.filter(running).length}/${n} running (${since(t0)})`), 10_000);
  const setupStart = Date.now();
  await mapLimit(names, 50, (x) => env.admin.create(rayService(NS, x, { maxSurge, step, interval, serve: serveConfig(2) })));
  console.log(`  ${n} services created in ${since(setupStart)}`);
  await recorder.until(() => keys.every(running), 'all services to run', 400_000, 1000);
  clearInterval(progress);
  const setupMs = Date.now() - setupStart;
  console.log(`  setup: ${n}/${n} running after ${(setupMs / 1000).toFixed(1)} s (${since(t0)})`);
  await new Promise((r) => setTimeout(r, 2000)); // let the last confirmations and Service writes settle

  await ask(op, 'reset');
  const cpBefore = cpuSecondsOf(env.cp.dir);
  const benchCpuBefore = process.cpuUsage();
  const doneAt = new Map<string, number>();
  const first = new Map(keys.map((k) => [k, recorder.state(k)!.activeClusterName as string]));
  const done = (k: string) => {
    const s = recorder.state(k);
    return s?.phase === 'Running' && s.pendingClusterName === undefined && s.activeClusterName !== first.get(k);
  };
  const upStart = Date.now();
  progress = setInterval(() => console.log(`  upgrade: ${recorder.stepsOf(`${NS}/`).length} traffic steps, ${keys.filter(done).length}/${n} upgrades complete (${since(t0)})`), 5000);
  await mapLimit(names, 50, (x) => env.admin.patchMerge(RAYSHIFT_RAYSERVICE, x, NS, { spec: { rayClusterConfig: rayClusterConfig('2') } }));
  const patchedMs = Date.now() - upStart;
  let timedOut = false;
  await recorder.until(() => {
    for (const k of keys) if (!doneAt.has(k) && done(k)) doneAt.set(k, Date.now());
    return doneAt.size === keys.length;
  }, 'the upgrades to complete', 300_000, 200).catch((e) => {
    timedOut = true;
    console.log(`  ${(e as Error).message}`);
  });
  clearInterval(progress);
  const upMs = Date.now() - upStart;
  const stats = await ask<ChildStats>(op, 'stats');
  const cpCpu = cpuSecondsOf(env.cp.dir) - cpBefore;
  const benchCpu = process.cpuUsage(benchCpuBefore);
  console.log(`  upgrade: ${keys.filter(done).length}/${n} complete after ${(upMs / 1000).toFixed(1)} s (${since(t0)})`);
  await ask(op, 'stop');
  await recorder.stop();

  const steps = recorder.stepsOf(`${NS}/`);
  const l = latenessStats(steps);
  const c = summarizeCounts(stats.counts);
  const per = (x: number) => x / Math.max(1, steps.length);
  const inFlight = stats.reconcileSeconds / (stats.wallMs / 1000);
  // timeline per service, from the first patch: first traffic decision, last traffic decision, completion
  const byService = new Map<string, number[]>();
  for (const st of steps) byService.set(st.service, [...(byService.get(st.service) ?? []), st.decidedAt - upStart]);
  const firsts = [...byService.values()].map((v) => Math.min(...v)).sort((a, b) => a - b);
  const lasts = [...byService.values()].map((v) => Math.max(...v)).sort((a, b) => a - b);
  const dones = [...doneAt.values()].map((t) => t - upStart).sort((a, b) => a - b);
  const tl = (v: number[]) => `${fmt(quantile(v, 0.5) / 1000)} / ${fmt(quantile(v, 1) / 1000)}`;

  console.log('');
  console.log(`Scale: ${n} services upgrading at once (maxSurge ${maxSurge}, step ${step}, interval ${interval} s, replica start jitter ${jitter} ms), one operator process (concurrency ${concurrency ?? 'default'})`);
  printTable([
    ['figure', 'value', 'goal'],
    ['traffic steps observed', steps.length, ''],
    ['  interval-bound (timed) / not yet seen on the route', `${l.intervalBound} / ${l.unmatched}`, ''],
    ['step lateness p50, ms (route watch − due)', l.p50, ''],
    ['step lateness p99, ms', l.p99, `≤ ${GOAL_P99_MS}`],
    ['step lateness max, ms', l.max, ''],
    ['decision lateness p50 / p99, ms (engine now − due)', `${fmt(l.decideP50)} / ${fmt(l.decideP99)}`, ''],
    ['EARLY steps (decision or write before due)', l.early, '0'],
    ['API writes per migration step, traffic or capacity (rayshift_api_writes_total)', stats.writes / Math.max(1, steps.length + recorder.capacityStepsOf(`${NS}/`)), `≤ ${GOAL_WRITES_PER_STEP}`],
    ['API writes per traffic step', per(stats.writes), ''],
    ['  of which status / route PATCHes per step', `${fmt(per(stats.counts['PATCH rayservices/status'] ?? 0))} / ${fmt(per(stats.counts['PATCH httproutes'] ?? 0))}`, ''],
    ['API requests per traffic step: reads (lists) / writes', `${fmt(per(c.reads))} (${fmt(per(c.lists))}) / ${fmt(per(c.writes))}`, ''],
    ['reconciles / per traffic step', `${stats.reconciles} / ${fmt(per(stats.reconciles))}`, ''],
    ['reconcile duration mean / p50 / p99 (bucket bound), ms', `${fmt((stats.reconcileSeconds / Math.max(1, stats.reconciles)) * 1000)} / ${fmt(stats.reconcileP50 * 1000)} / ${fmt(stats.reconcileP99 * 1000)}`, ''],
    ['reconciles in flight (mean)', inFlight, ''],
    ['operator histogram lateness p50 / p99 (bucket bound), ms', `${fmt(stats.latenessP50 * 1000)} / ${fmt(stats.latenessP99 * 1000)} (n=${stats.latenessN})`, ''],
    ['reconcile errors', stats.errors, ''],
    ['per service, s after patch (median / max): first step', tl(firsts), ''],
    ['  last step', tl(lasts), ''],
    ['  upgrade complete', tl(dones), ''],
    ['kube-apiserver + etcd CPU, s (per traffic step, ms)', `${fmt(cpCpu)} (${fmt((cpCpu * 1000) / Math.max(1, steps.length))})`, ''],
    ['bench process CPU (simulators, watches), s', (benchCpu.user + benchCpu.system) / 1e6, ''],
    ['operator CPU user+sys, s (% of one core)', `${fmt((stats.cpuUserMs + stats.cpuSystemMs) / 1000)} (${fmt(((stats.cpuUserMs + stats.cpuSystemMs) / stats.wallMs) * 100)} %)`, ''],
    ['operator RSS max, MiB', stats.rssMaxMb, ''],
    ['setup wall (create → all running), s', setupMs / 1000, ''],
    ['upgrade wall (first patch → all complete), s', `${fmt(upMs / 1000)}${timedOut ? ' (timed out)' : ''} (patching took ${fmt(patchedMs / 1000)})`, ''],
    ['bench wall, s', (Date.now() - t0) / 1000, '≤ 480'],
  ]);
  console.log(`status writes by phase/reason: ${formatCounts(stats.statusReasons)}`);
  console.log(`requests by kind (count, mean ms): ${Object.entries(stats.counts).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v} (${fmt((stats.millis[k] ?? 0) / v)})`).join(', ')}`);
  console.log(`reconcile triggers: ${Object.entries(stats.triggers).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v} (${fmt(per(v))}/step)`).join(', ')}`);
  for (const [k, v] of Object.entries(stats.errorKinds).sort((a, b) => b[1] - a[1]).slice(0, 5)) console.log(`reconcile error ×${v}: ${k}`);
  await env.stop();
}

if (process.argv[2] === '--operator-child') {
  child().catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
