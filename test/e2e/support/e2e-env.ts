/**
 * The end-to-end stack of the rayshift operator, real except for the pod network:
 *
 * - REAL: the test cluster (test/support/cluster.ts: kube-apiserver + etcd, kube-controller-manager,
 *   kube-scheduler, kwok Nodes and KubeRay's operator v1.7.0, which turns the operator's RayClusters
 *   into head Pods that kwok runs to Ready and whose serve EndpointSlices kube-controller-manager
 *   writes) with rayshift's CRD and the Gateway API CRDs Traefik is built against; Ray heads (`ray
 *   start --head`, pinned `ray[serve]`), each in its own network namespace; Traefik v3 as the
 *   Gateway API implementation (statuses and data plane); the rayshift operator, in-process, calling
 *   the real dashboards; with `prometheus`, a real Prometheus scraping Traefik and the bound heads.
 * - TEST-ONLY simulated: the pod network (pod-network.ts), which makes a head Pod's IP reach a real
 *   Ray head, because there are no kubelets.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { KubeClient } from '../../../lib/runtime/kube/client';
import { KubeObject } from '../../../lib/runtime/kube/types';
import { Operator } from '../../../operator/operator';
import { TestCluster, startTestCluster } from '../../support/cluster';
import { ControlPlane } from '../../support/controlplane';
import { freePorts } from '../../support/processes';
import { RunningPrometheus, startPrometheus } from '../../support/prometheus';
import { installRayshiftCrd, waitFor } from '../../support/operator-env';
import { netnsAvailable } from './netns';
import { PodNetwork, simulatePodNetwork } from './pod-network';
import { RayAuth, RayHead, startRayHead } from './ray-head';
import { RunningTraefik, TRAEFIK_CONTROLLER_NAME, startTraefik, traefikGatewayApiCrdFiles } from './traefik';

/** Gateway API resource types used here. */
export const GATEWAYCLASS = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', plural: 'gatewayclasses', namespaced: false };
export const GATEWAY = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', plural: 'gateways', namespaced: true };

/** Loopback ports of Traefik's entry points (= the Gateway listener ports). */
export const E2E_HTTP_PORT = 18480;
export const E2E_GRPC_PORT = 18481;
/** Namespace of the test's Gateway and services. */
export const E2E_NAMESPACE = 'e2e';
/** The test's Gateway: listener `http` (HTTPRoutes) and `grpc` (GRPCRoutes, h2c). */
export const E2E_GATEWAY = 'e2e-gateway';
/** The GatewayClass handled by Traefik. */
export const E2E_GATEWAY_CLASS = 'traefik';

/** Prometheus' scrape job of the Ray heads (`E2EEnvOptions.prometheus`). */
export const RAY_SCRAPE_JOB = 'ray';

/**
 * Keeps Prometheus' `ray` job on the heads bound to a RayCluster's head Pod, each labelled
 * `ray_io_cluster` with the cluster's name, as KubeRay's PodMonitor labels a head Pod's metrics: a
 * head serves several clusters one after the other here, so its target follows the pod network's
 * bindings (checked every 200 ms). Returns the stop.
 */
function scrapeBoundHeads(prometheus: RunningPrometheus, pool: PodNetwork, note: (line: string) => void): () => void {
  let last = '';
  const follow = () => {
    const groups = [...pool.bindings().values()].map((b) => ({ targets: [b.head.metricsTarget], labels: { ray_io_cluster: b.cluster } }));
    const text = JSON.stringify(groups);
    if (text === last) return;
    last = text;
    prometheus.setTargets(RAY_SCRAPE_JOB, groups);
    note(`Prometheus scrapes the Ray heads ${groups.map((g) => `${g.targets[0]} as ${g.labels.ray_io_cluster}`).join(', ') || '(none bound)'}`);
  };
  follow();
  const timer = setInterval(follow, 200);
  return () => clearInterval(timer);
}

/** Throws unless this machine can make network namespaces, which the pod network needs. */
function requireNetns(): void {
  if (!netnsAvailable()) throw new Error('the end-to-end stacks need network namespaces (root and a working `ip netns`) for their simulated pod network');
}

/** The running stack. */
export interface E2EEnv extends HeadsOnCluster {
  readonly cp: ControlPlane;
  readonly operator: Operator;
  /** The Prometheus scraping Traefik (job `traefik`), when `options.prometheus`. */
  readonly prometheus?: RunningPrometheus;
  /** Dashboard auth of every head. */
  readonly auth: RayAuth;
  /** Folder with the logs (events, operator, Traefik and its 5xx access log, the cluster's processes under `cluster/`); kept after `stop()`. */
  readonly logDir: string;
  /** Reconcile failures the operator logged (it retries them). */
  readonly operatorFailures: string[];
  /** Appends a line to the test's event log. */
  note(line: string): void;
  stop(): Promise<void>;
}

/** Options of `startE2EEnv`. */
export interface E2EEnvOptions {
  /** Heads to start. @default 2 */
  readonly heads?: number;
  /** Dashboard auth of every head. @default disabled */
  readonly auth?: RayAuth;
  /** Start the operator. @default true */
  readonly operator?: boolean;
  /** Serve Traefik's metrics and run a real Prometheus scraping them every second (`E2EEnv.prometheus`). @default false */
  readonly prometheus?: boolean;
}

/** A stack's log folder with its `events.log`, and what `stopAll` undoes (in reverse order, each failure noted). */
export interface E2ERun {
  readonly logDir: string;
  note(line: string): void;
  /** Stops of what was started, in start order. */
  readonly cleanups: (() => Promise<void> | void)[];
  stopAll(): Promise<void>;
}

/** Makes `/tmp/<prefix>*` with an events log and an empty cleanup list. */
export function startE2ERun(prefix: string): E2ERun {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const events = fs.createWriteStream(path.join(logDir, 'events.log'), { flags: 'a' });
  const note = (line: string) => void events.write(`${new Date().toISOString()} ${line}\n`);
  const cleanups: (() => Promise<void> | void)[] = [];
  const stopAll = async () => {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (err) {
        note(`cleanup: ${(err as Error).message}`);
      }
    }
    cleanups.length = 0;
    events.end();
  };
  return { logDir, note, cleanups, stopAll };
}

/** Starts heads `labels` one after the other (slow, and the machine has 2 cores), noting each; `run` stops them. */
export async function startHeads(run: E2ERun, labels: readonly string[], auth: RayAuth): Promise<RayHead[]> {
  const heads: RayHead[] = [];
  run.cleanups.push(() => Promise.all(heads.map((h) => h.stop())).then(() => undefined));
  for (const [i, label] of labels.entries()) {
    const t0 = Date.now();
    const head = await startRayHead({ label, index: i + 1, auth });
    heads.push(head);
    run.note(`Ray head ${label} healthy at ${head.dashboardUrl} after ${Date.now() - t0} ms (log ${head.logFile})`);
  }
  return heads;
}

/** What both end-to-end stacks share: Ray heads, the test cluster with KubeRay, the pod network, and a Traefik accepting the test GatewayClass. */
export interface HeadsOnCluster {
  readonly cluster: TestCluster;
  readonly admin: KubeClient;
  readonly heads: readonly RayHead[];
  /** The simulated pod network; `pool.resolver` maps a RayCluster to its real head's dashboard. */
  readonly pool: PodNetwork;
  readonly traefik: RunningTraefik;
}

/** Options of `startHeadsOnCluster`. */
export interface HeadsOnClusterOptions {
  /** Heads to start. */
  readonly heads: number;
  readonly auth: RayAuth;
  /** Further flags of KubeRay's operator. @default none */
  readonly kuberayArgs?: readonly string[];
  /** Traefik's entry points (name → loopback port; the Gateway listener ports). */
  readonly entryPoints: Readonly<Record<string, number>>;
  /** Port for Traefik's Prometheus metrics. @default none */
  readonly metricsPort?: number;
}

/**
 * Starts the heads, then the test cluster (KubeRay, and the Gateway API CRDs before it: KubeRay
 * looks Gateways and HTTPRoutes up through its cache), the pod network, the e2e namespace and
 * GatewayClass, and Traefik, and waits until Traefik accepted the class. `run` stops them all.
 */
export async function startHeadsOnCluster(run: E2ERun, options: HeadsOnClusterOptions): Promise<HeadsOnCluster> {
  requireNetns();
  const heads = await startHeads(run, ['a', 'b', 'c', 'd'].slice(0, options.heads), options.auth);
  const gatewayCrds = traefikGatewayApiCrdFiles().filter((f) => !f.includes('_vap_'));
  const cluster = await startTestCluster({ kuberay: true, nodes: 1, crds: gatewayCrds, ...(options.kuberayArgs ? { kuberayArgs: options.kuberayArgs } : {}) });
  run.cleanups.push(async () => {
    // The run's folder outlives it, passed or failed: the cluster's logs (KubeRay's among them) go there first.
    try {
      const kept = path.join(run.logDir, 'cluster');
      fs.mkdirSync(kept, { recursive: true });
      for (const [name, file] of Object.entries(cluster.logs)) if (fs.existsSync(file)) fs.copyFileSync(file, path.join(kept, `${name}.log`));
    } finally {
      await cluster.stop();
    }
  });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  run.cleanups.push(() => admin.close());
  const pool = simulatePodNetwork(admin, heads, { onEvent: (m) => run.note(`[simulated pod network] ${m}`) });
  run.cleanups.push(() => pool.stop());

  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: E2E_NAMESPACE } });
  await admin.create({ ...GATEWAYCLASS, metadata: { name: E2E_GATEWAY_CLASS }, spec: { controllerName: TRAEFIK_CONTROLLER_NAME } } as KubeObject);
  const traefik = await startTraefik({
    kubeconfig: cluster.cp.kubeconfigPath,
    entryPoints: options.entryPoints,
    logFile: path.join(run.logDir, 'traefik.log'),
    errorAccessLog: path.join(run.logDir, 'traefik-5xx.jsonl'),
    metricsPort: options.metricsPort,
  });
  run.cleanups.push(() => traefik.stop());
  await waitFor(async () => {
    const gc = await admin.tryGet(GATEWAYCLASS, E2E_GATEWAY_CLASS);
    return ((gc?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Accepted' && c.status === 'True');
  }, `Traefik to accept GatewayClass ${E2E_GATEWAY_CLASS} (see ${traefik.logFile})`, 120_000, 250);
  run.note('GatewayClass accepted by Traefik');
  return { cluster, admin, heads, pool, traefik };
}

/** Starts the whole stack (see the file comment); on failure everything started is stopped again. */
export async function startE2EEnv(options: E2EEnvOptions = {}): Promise<E2EEnv> {
  const run = startE2ERun('rayshift-e2e-');
  const { logDir, note, cleanups, stopAll } = run;
  try {
    process.stdout.write(`[e2e] operator stack; logs: ${logDir}\n`);
    const auth = options.auth ?? { mode: 'disabled' };
    const [metricsPort] = options.prometheus ? await freePorts(1) : [];
    const { cluster, admin, heads, pool, traefik } = await startHeadsOnCluster(run, { heads: options.heads ?? 2, auth, entryPoints: { web: E2E_HTTP_PORT, grpc: E2E_GRPC_PORT }, metricsPort });
    await installRayshiftCrd(cluster.cp);
    await admin.create({
      ...GATEWAY,
      metadata: { name: E2E_GATEWAY, namespace: E2E_NAMESPACE },
      spec: {
        gatewayClassName: E2E_GATEWAY_CLASS,
        listeners: [
          { name: 'http', protocol: 'HTTP', port: E2E_HTTP_PORT, allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ kind: 'HTTPRoute' }] } },
          { name: 'grpc', protocol: 'HTTP', port: E2E_GRPC_PORT, allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ kind: 'GRPCRoute' }] } },
        ],
      },
    } as KubeObject);
    let prometheus: RunningPrometheus | undefined;
    if (metricsPort !== undefined) {
      prometheus = await startPrometheus({ targets: { traefik: [`127.0.0.1:${metricsPort}`] }, discoveredJobs: [RAY_SCRAPE_JOB] });
      cleanups.push(() => prometheus?.stop());
      await prometheus.waitForScrape('traefik');
      cleanups.push(scrapeBoundHeads(prometheus, pool, note));
      note(`Prometheus at ${prometheus.address} scraping Traefik's metrics on 127.0.0.1:${metricsPort} and the bound Ray heads (log ${prometheus.log})`);
    }
    await waitFor(async () => {
      const gw = await admin.tryGet(GATEWAY, E2E_GATEWAY, E2E_NAMESPACE);
      const conds = ((gw?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
      return ['Accepted', 'Programmed'].every((t) => conds.some((c) => c.type === t && c.status === 'True'));
    }, `Traefik to accept and program Gateway ${E2E_GATEWAY} (see ${traefik.logFile})`, 120_000, 250);
    note('Gateway accepted and programmed by Traefik');

    const operatorFailures: string[] = [];
    const opLog = pino({ level: 'info' }, pino.destination({ dest: path.join(logDir, 'operator.log'), sync: true }));
    const log = {
      info: (o: object, m: string) => opLog.info(o, m),
      debug: (o: object, m: string) => opLog.debug(o, m),
      warn: (o: object, m: string) => {
        opLog.warn(o, m);
        operatorFailures.push(`${m}: ${JSON.stringify(o)}`);
      },
      error: (o: object, m: string) => {
        opLog.error(o, m);
        operatorFailures.push(`${m}: ${JSON.stringify(o)}`);
      },
    };
    const operator = new Operator({ client: admin, resolver: pool.resolver, log, capacityPollMs: 500 });
    cleanups.push(() => operator.stop()); // safe when it was never started (pulumi.e2e.ts)
    if (options.operator !== false) await operator.start();
    return { cluster, cp: cluster.cp, admin, heads, pool, traefik, operator, prometheus, auth, logDir, operatorFailures, note, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
