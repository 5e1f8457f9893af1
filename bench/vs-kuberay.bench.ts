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
 *     [--controllers kuberay,rayshift] [--replicas 1,2,3 [--shards 8]] [--profile <dir>] [--operator-bin <path of bin/rayshift.js>]
 *
 * Each rayshift run starts its own operator: one process, or with `--replicas K` (K > 1) K
 * processes sharing `--shards` shards (`rayshift operator --shards`, each named by `POD_NAME` as the
 * chart names its Pods); a list of K runs every N once per K, and the controller's figures are the
 * replicas' sums. `--profile <dir>` runs each replica under `node --cpu-prof --cpu-prof-dir=<dir>`,
 * ends it with SIGTERM after its run (the operator exits, so V8 writes the profile) and prints the
 * replicas' CPU by cause within the upgrade window (cpu-profile-causes.ts), and audits the
 * operator's reads (get, list, watch) as well as its writes.
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
/** How many operator replicas each rayshift run has (`--replicas 1,2,3`: one run per K). */
const REPLICAS = arg('replicas', '1').split(',').map(Number);
/** The shards K > 1 replicas share (`rayshift operator --shards`). */
const SHARDS = Number(arg('shards', '8'));
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
  /** Operator replicas (1 for KubeRay). */
  readonly replicas: number;
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

/** A rayshift run's operator replicas. */
interface OperatorSet {
  readonly pids: readonly number[];
  /** The replicas' reconcile passes so far. */
  passes(): Promise<number>;
  /** SIGTERMs every replica; resolves with each one's exit time (wall ms) by pid. */
  stop(): Promise<Map<number, number>>;
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
  /** The operator replicas running now. */
  const operators = new Set<ChildProcess>();
  // Ctrl-C or a kill still stops the cluster, the operators and the interface.
  const onSignal = () => void (async () => {
    for (const c of cleanups) await Promise.resolve(c()).catch(() => undefined);
    for (const p of operators) p.kill('SIGKILL');
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

    // rayshift's operator replicas as their own processes, under their own user (for the audit log).
    const kc = parse(fs.readFileSync(cluster.cp.kubeconfigPath, 'utf8')) as { users: { user: Record<string, unknown> }[] };
    for (const u of kc.users) u.user = { token: operatorToken };
    const operatorKubeconfig = path.join(dir, 'operator.kubeconfig');
    fs.writeFileSync(operatorKubeconfig, stringify(kc));
    const apiPort = new URL(cluster.cp.url).port;
    const pids = {
      kuberay: findPid('kuberay-operator', (a) => a[0].endsWith('/kuberay-operator') && a.includes(`--kubeconfig=${cluster.cp.kubeconfigPath}`)),
      apiserver: findPid('kube-apiserver', (a) => a[0].endsWith('/kube-apiserver') && a.includes(`--secure-port=${apiPort}`)),
    };
    /** Starts `k` operator replicas (sharded when k > 1), each profiled into `profileDir` when given; resolves once every one is ready. */
    const startOperators = async (k: number, profileDir: string | undefined): Promise<OperatorSet> => {
      const ports = await freePorts(k);
      const log = fs.openSync(path.join(dir, 'operator.log'), 'a');
      if (profileDir) fs.mkdirSync(profileDir, { recursive: true });
      const profileArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
      const shardArgs = k > 1 ? ['--shards', String(SHARDS)] : [];
      const set = ports.map((port, i) => {
        const proc = spawn(process.execPath, [...profileArgs, OPERATOR_BIN, 'operator', '--kubeconfig', operatorKubeconfig, '--dashboard-address-template', fleet.template, '--http-port', String(port), '--log-level', 'warn', ...shardArgs], {
          stdio: ['ignore', log, log],
          env: { ...process.env, POD_NAME: `bench-replica-${i}` },
        });
        operators.add(proc);
        const exited = new Promise<number>((resolve) => proc.once('exit', () => resolve(Date.now())));
        return { proc, port, exited };
      });
      for (const { port } of set) await waitFor(async () => (await httpGet(`http://127.0.0.1:${port}/readyz`).catch(() => ({ status: 0 }))).status === 200, `rayshift operator /readyz on ${port}`, 60_000, 200);
      return {
        pids: set.map((r) => r.proc.pid!),
        // The replicas' reconcile passes so far (the count of each one's reconcile-duration histogram).
        passes: async () => {
          let sum = 0;
          for (const { port } of set) sum += Number(/^rayshift_reconcile_duration_seconds_count (\S+)$/m.exec((await httpGet(`http://127.0.0.1:${port}/metrics`)).text)?.[1] ?? NaN);
          return sum;
        },
        stop: async () => {
          for (const { proc } of set) proc.kill('SIGTERM');
          const at = await Promise.all(set.map((r) => r.exited));
          for (const { proc } of set) operators.delete(proc);
          fs.closeSync(log);
          return new Map(set.map((r, i) => [r.proc.pid!, at[i]]));
        },
      };
    };
    const recorder = new TrafficMoveRecorder(admin);
    await recorder.start();
    cleanups.unshift(() => recorder.stop());
    console.log(`  up (${since(t0)}): kuberay-operator pid ${pids.kuberay}, kube-apiserver pid ${pids.apiserver}; logs in ${dir}`);

    /** One upgrade of `n` services; rayshift's by the replicas of `ops`. */
    const runPhase = async (executor: Executor, n: number, ops?: OperatorSet): Promise<PhaseResult> => {
      const ns = executor === 'kuberay' ? `kr-${n}` : `rs-${n}-k${ops?.pids.length}`;
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
      const passes0 = ops ? await ops.passes() : NaN;
      const rayshiftCpu = () => (ops ? ops.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0) : 0);
      const cpu0 = { kuberay: cpuSeconds(pids.kuberay), rayshift: rayshiftCpu(), apiserver: cpuSeconds(pids.apiserver) };
      const start = Date.now();
      for (const name of names) await admin.patchMerge(type, name, ns, { spec: { rayClusterConfig: spec('2').rayClusterConfig } });
      await waitFor(async () => {
        const s = await states();
        return names.every((x) => s.get(x)?.active !== undefined && s.get(x)?.active !== first.get(x)?.active && !s.get(x)?.pending);
      }, `${n} ${executor} upgrades to complete`, 300_000 + n * 5000, 200);
      const end = Date.now();
      const cpu1 = { kuberay: cpuSeconds(pids.kuberay), rayshift: rayshiftCpu(), apiserver: cpuSeconds(pids.apiserver) };
      const passes1 = ops ? await ops.passes() : NaN;
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
        replicas: ops?.pids.length ?? 1,
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

    const results: { n: number; kr?: PhaseResult; rs: PhaseResult[] }[] = [];
    for (const n of SERVICES) {
      const row: { n: number; kr?: PhaseResult; rs: PhaseResult[] } = { n, rs: [] };
      results.push(row);
      if (CONTROLLERS.includes('kuberay')) {
        console.log(`N=${n}: upgrading under KubeRay … (${since(t0)})`);
        row.kr = await runPhase('kuberay', n);
        console.log(`  done in ${fmt(row.kr.wallS)} s, ${row.kr.lateness.moves} traffic moves; KubeRay's writes: ${row.kr.writeKinds}`);
      }
      if (CONTROLLERS.includes('rayshift')) {
        for (const k of REPLICAS) {
          const profileDir = PROFILE_DIR && path.join(PROFILE_DIR, `n${n}-k${k}`);
          const ops = await startOperators(k, profileDir);
          console.log(`N=${n}: upgrading under rayshift's operator, ${k} replica(s) … (${since(t0)})`);
          const rs = await runPhase('rayshift', n, ops);
          const exitedAt = await ops.stop();
          row.rs.push(rs);
          console.log(`  done in ${fmt(rs.wallS)} s, ${rs.lateness.moves} traffic moves; the operator's writes: ${rs.writeKinds}`);
          if (profileDir) {
            console.log(`  the operator's reads per step ${fmt(rs.reads)}: ${rs.readKinds}`);
            printProfile(profileDir, exitedAt, rs, `N=${n} K=${k}`);
          }
        }
      }
      printResults(results); // after every N, so that a run stopped during a larger N still shows the smaller ones
    }
  } finally {
    for (const c of cleanups) await c();
    for (const p of operators) p.kill('SIGKILL');
    if (process.env.RAYSHIFT_KEEP_CONTROLPLANE) console.log(`audit log and operator log kept in ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The replicas' CPU by cause within `rs`'s upgrade window, summed over their profiles in
 * `profileDir`. Node names each profile `CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile`; the pid
 * finds the replica's exit time, which maps its V8 clock onto wall time.
 */
function printProfile(profileDir: string, exitedAt: ReadonlyMap<number, number>, rs: PhaseResult, label: string): void {
  const files = fs.readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
  const ms = new Map<string, number>();
  let totalMs = 0;
  const other: [string, number][] = [];
  for (const name of files) {
    const pid = Number(name.split('.')[3]);
    const at = exitedAt.get(pid);
    if (at === undefined) throw new Error(`${name} in ${profileDir} is not the profile of a replica of this run (pids ${[...exitedAt.keys()].join(', ')})`);
    const b = causesOf(path.join(profileDir, name), at, [rs.window]);
    for (const [cause, v] of b.ms) ms.set(cause, (ms.get(cause) ?? 0) + v);
    totalMs += b.totalMs;
    other.push(...b.otherTop);
  }
  const steps = Math.max(1, rs.lateness.moves);
  console.log(`\n${label}: the operator's CPU ms per traffic step by cause, within the upgrade window (${files.length} profile(s) in ${profileDir})`);
  printTable([[`${label} cause`, 'ms/step', 'share'], ...causeRows({ ms, totalMs, otherTop: [] }, steps), ['total sampled', totalMs / steps, '']]);
  console.log(`  heaviest "other" frames: ${other.sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k} ${fmt(v)} ms`).join('; ')}`);
}

function printResults(results: readonly { n: number; kr?: PhaseResult; rs: readonly PhaseResult[] }[]): void {
  const ideal = TRAFFIC_STEPS * INTERVAL_S;
  console.log('');
  console.log(`rayshift's operator vs KubeRay v1.7.0: step ${STEP} %, interval ${INTERVAL_S} s, maxSurge ${MAX_SURGE} %, ${TRAFFIC_STEPS} traffic steps per upgrade (ideal ${ideal} s); all N upgraded at once`);
  console.log(`machine: ${os.cpus().length} cores; load average at each run's end shown per row`);
  const row = (label: string, r: PhaseResult) => [label, r.lateness.moves, r.lateness.timed, r.lateness.p50, r.lateness.p99, r.lateness.capacityBound, r.lateness.capacityP50, r.lateness.earliest, r.wallS / ideal, r.writes, r.proxied, r.passes, r.controllerCpu * 1000, r.apiserverCpu * 1000, r.load];
  const ratio = (a: number, b: number) => (b === 0 ? NaN : a / b);
  const rows: (string | number)[][] = [['N / controller', 'moves', 'timed', 'late p50 ms', 'late p99 ms', 'after capacity', 'its p50 ms', 'earliest ms', 'wall/ideal', 'writes/step', 'proxied/step', 'passes/step', 'ctrl CPU ms/step', 'apiserver CPU ms/step', 'load 1/5/15']];
  for (const { n, kr, rs: runs } of results) {
    if (kr) rows.push(row(`${n} KubeRay`, kr));
    for (const rs of runs) {
      const name = rs.replicas > 1 ? `rayshift ×${rs.replicas}` : 'rayshift';
      rows.push(row(`${n} ${name}`, rs));
      if (kr) rows.push([`${n} ${name}/KubeRay`, '', '', ratio(rs.lateness.p50, kr.lateness.p50), ratio(rs.lateness.p99, kr.lateness.p99), '', ratio(rs.lateness.capacityP50, kr.lateness.capacityP50), '', ratio(rs.wallS, kr.wallS), ratio(rs.writes, kr.writes), '', '', ratio(rs.controllerCpu, kr.controllerCpu), ratio(rs.apiserverCpu, kr.apiserverCpu), '']);
    }
  }
  printTable(rows);
  console.log("(late = traffic move seen by the bench's HTTPRoute watch − (the route's previous move + interval); timed = interval-bound moves, p50/p99 over them; after capacity = moves that also waited for a capacity step; earliest over both; writes from the audit log: KubeRay by user agent kuberay-operator, rayshift by its own user; per traffic move; proxied = KubeRay's calls to Ray through kube-apiserver's proxies, not writes)");
  for (const { n, rs: runs } of results) {
    for (const rs of runs) console.log(`N=${n}, ${rs.replicas} replica(s): during rayshift's run KubeRay's RayCluster controller also made ${fmt(rs.kuberayWrites)} writes and ${fmt(rs.kuberayCpu * 1000)} ms CPU per step (the Pods of rayshift's clusters)`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
