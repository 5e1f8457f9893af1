/**
 * rayshift's operator against KubeRay, side by side on one API server (issue 16, item 7). For each
 * N, the same N RayServices with the same incremental options are upgraded once by KubeRay v1.7.0
 * (ray.io/v1 RayService, executor `kuberay`; KubeRay runs with `--use-kubernetes-proxy`) and once
 * by rayshift's operator (rayshift.dev RayService, executor `operator`, `node bin/rayshift.js
 * operator` as its own process). Prints figures and the load average; never asserts. See docs/bench.md.
 *
 * REAL: the test cluster (kube-apiserver + etcd, kube-controller-manager, kube-scheduler, kwok
 * Nodes, KubeRay's operator, which also makes the Pods of rayshift's RayClusters). TEST-ONLY
 * simulated: the Ray heads (test/support/serve-fleet-at-pod-ips.ts: the simulated Serve fleet at
 * the head Pods' IPs) and Gateway status (simulateGatewayStatusWithoutDataPlane), for both.
 *
 *   npm run build && npx tsx bench/vs-kuberay.bench.ts --services 1,10 [--step 25 --interval 5 --max-surge 50]
 *     [--controllers kuberay,rayshift] [--profile <dir>] [--operator-bin <path of bin/rayshift.js>]
 *
 * `--profile <dir>` runs the operator under `node --cpu-prof --cpu-prof-dir=<dir>`, ends it with
 * SIGTERM after the last N (the operator exits, so V8 writes the profile) and prints its CPU by
 * cause within each rayshift upgrade window (cpu-profile-causes.ts), and audits the operator's
 * reads (get, list, watch) as well as its writes.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify, parse } from 'yaml';
import { crdsOf, newestVersion } from '../lib/crds/catalog';
import { resolveCrdFile } from '../lib/crds/resolve';
import { KubeClient } from '../lib/runtime/kube/client';
import { KubeObject } from '../lib/runtime/kube/types';
import { startTestCluster } from '../test/support/cluster';
import { RAYSHIFT_RAYSERVICE, createNamespace, engineState, installRayshiftCrd, rayService, waitFor } from '../test/support/operator-env';
import { freePorts, httpGet } from '../test/support/processes';
import { startServeFleetAtPodIps } from '../test/support/serve-fleet-at-pod-ips';
import { simulateGatewayStatusWithoutDataPlane, startServeFleetWhereNoRayRuns } from '../test/support/simulated-controllers';
import { causeRows, causesOf } from './cpu-profile-causes';
import { fmt, printTable, since } from './operator-harness';
import { AuditedWrite, MoveLateness, TrafficMoveRecorder, auditPolicy, auditedWrites, cpuSeconds, findPid, moveLateness, writeBreakdown } from './vs-kuberay-measure';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const SERVICES = arg('services', '1,10').split(',').map(Number);
const STEP = Number(arg('step', '25'));
const INTERVAL_S = Number(arg('interval', '5'));
const MAX_SURGE = Number(arg('max-surge', '50'));
const TRAFFIC_STEPS = Math.ceil(100 / STEP);
/** Which controllers' runs to do (rayshift only: KubeRay still runs, making the Pods of rayshift's clusters). */
const CONTROLLERS = arg('controllers', 'kuberay,rayshift').split(',');
/** Where the operator's CPU profile goes (`--profile`), or undefined for no profile. */
const PROFILE_DIR = arg('profile', '') ? path.resolve(arg('profile', '')) : undefined;
/** The operator's binary (`--operator-bin`, e.g. a copy of an earlier build's bin/ and build/ for a before/after run). */
const OPERATOR_BIN = path.resolve(arg('operator-bin', path.join(__dirname, '..', 'bin', 'rayshift.js')));
/** Not 10.244: the e2e suite routes 10.244.x.y Pod IPs into network namespaces on this machine. */
const POD_NETWORK = '10.246';
const OPERATOR_USER = 'rayshift-operator';
const KUBERAY_RAYSERVICE = { apiVersion: 'ray.io/v1', kind: 'RayService', plural: 'rayservices', namespaced: true };
const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };

type Executor = 'kuberay' | 'rayshift';

/** One upgrade run's figures. */
interface PhaseResult {
  readonly lateness: MoveLateness;
  readonly wallS: number;
  readonly writes: number;
  readonly writeKinds: string;
  /** The operator's reads (get, list, watch) per step and their kinds; with `--profile` only. */
  readonly reads: number;
  readonly readKinds: string;
  /** The upgrade window, wall ms. */
  readonly window: { readonly from: number; readonly to: number };
  /** Requests through kube-apiserver's Pod and Service proxies (KubeRay's calls to Ray), per step. */
  readonly proxied: number;
  /** KubeRay's writes during rayshift's run (its RayCluster controller makes the Pods). */
  readonly kuberayWrites: number;
  readonly controllerCpu: number;
  /** rayshift's reconcile passes per step (its /metrics; NaN for KubeRay). */
  readonly passes: number;
  /** KubeRay's CPU during rayshift's run (the RayCluster controller). */
  readonly kuberayCpu: number;
  readonly apiserverCpu: number;
  readonly load: string;
}

/** A head-only cluster whose image tag is the version (every version is a new cluster). */
function spec(version: string): Record<string, unknown> {
  const base = rayService('x', 'x', { maxSurge: MAX_SURGE, step: STEP, interval: INTERVAL_S }).spec as Record<string, unknown>;
  return {
    ...base,
    rayClusterConfig: {
      // KubeRay refuses NewClusterWithIncrementalUpgrade without the autoscaler.
      enableInTreeAutoscaling: true,
      headGroupSpec: {
        rayStartParams: { 'num-cpus': '0' },
        template: { spec: { containers: [{ name: 'ray-head', image: `rayproject/ray:2.52.0-v${version}`, ports: [{ name: 'serve', containerPort: 8000 }, { name: 'dashboard', containerPort: 8265 }] }] } },
      },
    },
  };
}

function serviceObject(executor: Executor, ns: string, name: string): KubeObject {
  return { apiVersion: executor === 'kuberay' ? 'ray.io/v1' : 'rayshift.dev/v1alpha1', kind: 'RayService', metadata: { name, namespace: ns }, spec: spec('1') };
}

/** Active and pending cluster of a service, from KubeRay's status or rayshift's engine state. */
function clustersOf(executor: Executor, svc: KubeObject | undefined): { active?: string; pending?: string; ready: boolean } {
  if (executor === 'kuberay') {
    const st = (svc?.status ?? {}) as { activeServiceStatus?: { rayClusterName?: string }; pendingServiceStatus?: { rayClusterName?: string }; conditions?: { type: string; status: string }[] };
    const ready = (st.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    return { active: st.activeServiceStatus?.rayClusterName || undefined, pending: st.pendingServiceStatus?.rayClusterName || undefined, ready };
  }
  const es = engineState(svc);
  return { active: es.activeClusterName, pending: es.pendingClusterName, ready: es.phase === 'Running' && es.trafficConfirmed === true };
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-vs-kuberay-'));
  const auditLog = path.join(dir, 'audit.log');
  fs.writeFileSync(path.join(dir, 'audit-policy.yaml'), auditPolicy(PROFILE_DIR ? OPERATOR_USER : undefined));
  const operatorToken = `rayshift-operator-${process.pid}`;
  const maxN = Math.max(...SERVICES);
  // Head-only clusters, two per service at the peak of an upgrade; kwok's Nodes hold 110 Pods.
  const nodes = Math.max(2, Math.ceil((maxN * 2 + 10) / 100));
  console.log(`starting the test cluster (${nodes} Nodes, KubeRay with --use-kubernetes-proxy) …`);
  const gatewayCrds = await Promise.all(crdsOf('gateway-api', newestVersion('gateway-api')).map((c) => resolveCrdFile(c)));
  const cluster = await startTestCluster({
    kuberay: true,
    nodes,
    crds: gatewayCrds,
    kuberayArgs: ['--use-kubernetes-proxy'],
    apiserverArgs: [
      `--audit-policy-file=${path.join(dir, 'audit-policy.yaml')}`,
      `--audit-log-path=${auditLog}`,
      // The control plane's /24 holds 254 Services; 100 services upgrading need up to 6 each.
      '--service-cluster-ip-range=10.96.0.0/16',
    ],
    extraTokens: [{ token: operatorToken, user: OPERATOR_USER, groups: ['system:masters'] }],
    podNetwork: POD_NETWORK,
  });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  const cleanups: (() => Promise<void> | void)[] = [() => cluster.stop(), () => admin.close()];
  let operator: ChildProcess | undefined;
  // Ctrl-C or a kill still stops the cluster, the operator and the interface.
  const onSignal = () => void (async () => {
    for (const c of cleanups) await Promise.resolve(c()).catch(() => undefined);
    operator?.kill('SIGKILL');
    process.exit(130);
  })();
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    await installRayshiftCrd(cluster.cp);
    const gateway = simulateGatewayStatusWithoutDataPlane(admin);
    cleanups.unshift(() => gateway.stop());
    const fleet = await startServeFleetWhereNoRayRuns(() => ({ replicaStartDelayMs: 20 }));
    cleanups.unshift(() => fleet.close());
    const heads = await startServeFleetAtPodIps(admin, fleet);
    cleanups.unshift(() => heads.stop());

    // rayshift's operator as its own process, under its own user (for the audit log).
    const kc = parse(fs.readFileSync(cluster.cp.kubeconfigPath, 'utf8')) as { users: { user: Record<string, unknown> }[] };
    for (const u of kc.users) u.user = { token: operatorToken };
    const operatorKubeconfig = path.join(dir, 'operator.kubeconfig');
    fs.writeFileSync(operatorKubeconfig, stringify(kc));
    const [httpPort] = await freePorts(1);
    const operatorLog = fs.openSync(path.join(dir, 'operator.log'), 'a');
    if (PROFILE_DIR) fs.mkdirSync(PROFILE_DIR, { recursive: true });
    const profileArgs = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
    const proc = spawn(process.execPath, [...profileArgs, OPERATOR_BIN, 'operator', '--kubeconfig', operatorKubeconfig, '--dashboard-address-template', fleet.template, '--http-port', String(httpPort), '--log-level', 'warn'], { stdio: ['ignore', operatorLog, operatorLog] });
    operator = proc;
    cleanups.unshift(() => void proc.kill('SIGTERM'));
    await waitFor(async () => (await httpGet(`http://127.0.0.1:${httpPort}/readyz`).catch(() => ({ status: 0 }))).status === 200, 'rayshift operator /readyz', 60_000, 200);

    const apiPort = new URL(cluster.cp.url).port;
    const pids = {
      kuberay: findPid('kuberay-operator', (a) => a[0].endsWith('/kuberay-operator') && a.includes(`--kubeconfig=${cluster.cp.kubeconfigPath}`)),
      rayshift: proc.pid!,
      apiserver: findPid('kube-apiserver', (a) => a[0].endsWith('/kube-apiserver') && a.includes(`--secure-port=${apiPort}`)),
    };
    /** The operator's reconcile passes so far (the count of its reconcile-duration histogram). */
    const reconcilePasses = async () => Number(/^rayshift_reconcile_duration_seconds_count (\S+)$/m.exec((await httpGet(`http://127.0.0.1:${httpPort}/metrics`)).text)?.[1] ?? NaN);
    const recorder = new TrafficMoveRecorder(admin);
    await recorder.start();
    cleanups.unshift(() => recorder.stop());
    console.log(`  up (${since(t0)}): kuberay-operator pid ${pids.kuberay}, rayshift operator pid ${pids.rayshift}, kube-apiserver pid ${pids.apiserver}; logs in ${dir}`);

    const runPhase = async (executor: Executor, n: number): Promise<PhaseResult> => {
      const ns = `${executor === 'kuberay' ? 'kr' : 'rs'}-${n}`;
      const type = executor === 'kuberay' ? KUBERAY_RAYSERVICE : RAYSHIFT_RAYSERVICE;
      const names = Array.from({ length: n }, (_, i) => `svc-${i}`);
      await createNamespace(admin, ns);
      for (const name of names) await admin.create(serviceObject(executor, ns, name));
      const states = async () => new Map((await admin.list(type, { namespace: ns })).items.map((o) => [String(o.metadata.name), clustersOf(executor, o)]));
      await waitFor(async () => {
        const s = await states();
        return names.every((x) => s.get(x)?.ready && s.get(x)?.active && !s.get(x)?.pending) && recorder.routesIn(ns) >= n;
      }, `${n} ${executor} services to run`, 120_000 + n * 3000, 500).catch(async (e) => {
        const one = await admin.tryGet(type, names[0], ns);
        throw new Error(`${(e as Error).message}; ${names[0]}: ${JSON.stringify(one?.status)}; routes ${recorder.routesIn(ns)}; heads bound ${JSON.stringify([...heads.bound()])}`);
      });
      await new Promise((r) => setTimeout(r, 3000)); // let the start-up writes settle before measuring
      const first = await states();
      const passes0 = executor === 'rayshift' ? await reconcilePasses() : NaN;
      const cpu0 = { kuberay: cpuSeconds(pids.kuberay), rayshift: cpuSeconds(pids.rayshift), apiserver: cpuSeconds(pids.apiserver) };
      const start = Date.now();
      for (const name of names) await admin.patchMerge(type, name, ns, { spec: { rayClusterConfig: spec('2').rayClusterConfig } });
      await waitFor(async () => {
        const s = await states();
        return names.every((x) => s.get(x)?.active !== undefined && s.get(x)?.active !== first.get(x)?.active && !s.get(x)?.pending);
      }, `${n} ${executor} upgrades to complete`, 300_000 + n * 5000, 200);
      const end = Date.now();
      const cpu1 = { kuberay: cpuSeconds(pids.kuberay), rayshift: cpuSeconds(pids.rayshift), apiserver: cpuSeconds(pids.apiserver) };
      const passes1 = executor === 'rayshift' ? await reconcilePasses() : NaN;
      const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
      await new Promise((r) => setTimeout(r, 1500)); // the audit log's last lines
      const inWindow = auditedWrites(auditLog).filter((w) => w.at >= start && w.at <= end);
      const byKubeRay = (w: AuditedWrite) => w.userAgent.startsWith('kuberay-operator');
      const all = inWindow.filter(executor === 'kuberay' ? byKubeRay : (w) => w.user === OPERATOR_USER);
      const mine = all.filter((w) => !w.proxy && !w.read);
      const reads = all.filter((w) => w.read);
      const moves = recorder.movesIn(ns, start);
      const trace = moves.filter((m) => m.route === moves[0]?.route).map((m) => `+${fmt((m.at - start) / 1000)}s ${m.weights}`);
      console.log(`  ${moves[0]?.route ?? 'no route'} moved: ${trace.join('; ')}`);
      const perStep = Math.max(1, moves.length);
      await admin.delete(NAMESPACE, ns, undefined);
      await waitFor(async () => (await admin.tryGet(NAMESPACE, ns)) === undefined, `namespace ${ns} to go`, 180_000, 500);
      return {
        lateness: moveLateness(moves, INTERVAL_S, MAX_SURGE),
        wallS: (end - start) / 1000,
        writes: mine.length / perStep,
        writeKinds: writeBreakdown(mine),
        reads: reads.length / perStep,
        readKinds: writeBreakdown(reads),
        window: { from: start, to: end },
        proxied: all.filter((w) => w.proxy).length / perStep,
        kuberayWrites: executor === 'kuberay' ? 0 : inWindow.filter(byKubeRay).length / perStep,
        passes: (passes1 - passes0) / perStep,
        controllerCpu: (executor === 'kuberay' ? cpu1.kuberay - cpu0.kuberay : cpu1.rayshift - cpu0.rayshift) / perStep,
        kuberayCpu: executor === 'kuberay' ? 0 : (cpu1.kuberay - cpu0.kuberay) / perStep,
        apiserverCpu: (cpu1.apiserver - cpu0.apiserver) / perStep,
        load,
      };
    };

    const results: { n: number; kr?: PhaseResult; rs?: PhaseResult }[] = [];
    for (const n of SERVICES) {
      let kr: PhaseResult | undefined;
      let rs: PhaseResult | undefined;
      if (CONTROLLERS.includes('kuberay')) {
        console.log(`N=${n}: upgrading under KubeRay … (${since(t0)})`);
        kr = await runPhase('kuberay', n);
        console.log(`  done in ${fmt(kr.wallS)} s, ${kr.lateness.moves} traffic moves; KubeRay's writes: ${kr.writeKinds}`);
      }
      if (CONTROLLERS.includes('rayshift')) {
        console.log(`N=${n}: upgrading under rayshift's operator … (${since(t0)})`);
        rs = await runPhase('rayshift', n);
        console.log(`  done in ${fmt(rs.wallS)} s, ${rs.lateness.moves} traffic moves; the operator's writes: ${rs.writeKinds}`);
        if (PROFILE_DIR) console.log(`  the operator's reads per step ${fmt(rs.reads)}: ${rs.readKinds}`);
      }
      results.push({ n, kr, rs });
      printResults(results); // after every N, so that a run stopped during a larger N still shows the smaller ones
    }
    if (PROFILE_DIR) {
      // The profile is written when the operator exits: SIGTERM, then wait for the exit.
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      await exited;
      const exitedAt = Date.now();
      const file = fs.readdirSync(PROFILE_DIR).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(PROFILE_DIR, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
      console.log(`\noperator CPU profile ${file}: CPU ms per traffic step by cause, within each rayshift upgrade window`);
      for (const { n, rs } of results) {
        if (!rs) continue;
        const b = causesOf(file, exitedAt, [rs.window]);
        const steps = Math.max(1, rs.lateness.moves);
        printTable([[`N=${n} cause`, 'ms/step', 'share'], ...causeRows(b, steps), ['total sampled', b.totalMs / steps, '']]);
        console.log(`  heaviest "other" frames: ${b.otherTop.map(([k, v]) => `${k} ${fmt(v)} ms`).join('; ')}`);
      }
    }
  } finally {
    for (const c of cleanups) await c();
    if (operator && operator.exitCode === null) operator.kill('SIGKILL');
    if (process.env.RAYSHIFT_KEEP_CONTROLPLANE) console.log(`audit log and operator log kept in ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

function printResults(results: readonly { n: number; kr?: PhaseResult; rs?: PhaseResult }[]): void {
  const ideal = TRAFFIC_STEPS * INTERVAL_S;
  console.log('');
  console.log(`rayshift's operator vs KubeRay v1.7.0: step ${STEP} %, interval ${INTERVAL_S} s, maxSurge ${MAX_SURGE} %, ${TRAFFIC_STEPS} traffic steps per upgrade (ideal ${ideal} s); all N upgraded at once`);
  console.log(`machine: ${os.cpus().length} cores; load average at each run's end shown per row`);
  const row = (label: string, r: PhaseResult) => [label, r.lateness.moves, r.lateness.timed, r.lateness.p50, r.lateness.p99, r.lateness.capacityBound, r.lateness.capacityP50, r.lateness.earliest, r.wallS / ideal, r.writes, r.proxied, r.passes, r.controllerCpu * 1000, r.apiserverCpu * 1000, r.load];
  const ratio = (a: number, b: number) => (b === 0 ? NaN : a / b);
  const rows: (string | number)[][] = [['N / controller', 'moves', 'timed', 'late p50 ms', 'late p99 ms', 'after capacity', 'its p50 ms', 'earliest ms', 'wall/ideal', 'writes/step', 'proxied/step', 'passes/step', 'ctrl CPU ms/step', 'apiserver CPU ms/step', 'load 1/5/15']];
  for (const { n, kr, rs } of results) {
    if (kr) rows.push(row(`${n} KubeRay`, kr));
    if (rs) rows.push(row(`${n} rayshift`, rs));
    if (kr && rs) rows.push([`${n} rayshift/KubeRay`, '', '', ratio(rs.lateness.p50, kr.lateness.p50), ratio(rs.lateness.p99, kr.lateness.p99), '', ratio(rs.lateness.capacityP50, kr.lateness.capacityP50), '', ratio(rs.wallS, kr.wallS), ratio(rs.writes, kr.writes), '', '', ratio(rs.controllerCpu, kr.controllerCpu), ratio(rs.apiserverCpu, kr.apiserverCpu), '']);
  }
  printTable(rows);
  console.log("(late = traffic move seen by the bench's HTTPRoute watch − (the route's previous move + interval); timed = interval-bound moves, p50/p99 over them; after capacity = moves that also waited for a capacity step; earliest over both; writes from the audit log: KubeRay by user agent kuberay-operator, rayshift by its own user; per traffic move; proxied = KubeRay's calls to Ray through kube-apiserver's proxies, not writes)");
  for (const { n, rs } of results) {
    if (!rs) continue;
    console.log(`N=${n}: during rayshift's run KubeRay's RayCluster controller also made ${fmt(rs.kuberayWrites)} writes and ${fmt(rs.kuberayCpu * 1000)} ms CPU per step (the Pods of rayshift's clusters)`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
