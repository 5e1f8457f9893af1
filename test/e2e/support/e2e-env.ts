/**
 * The end-to-end stack, real except for KubeRay's RayCluster controller and its pods:
 *
 * - REAL: kube-apiserver + etcd (test/support/controlplane.ts) with KubeRay's and rayshift's CRDs and
 *   the Gateway API CRDs Traefik is built against; two Ray heads (`ray start --head`, pinned
 *   `ray[serve]`), each in its own network namespace where available; Traefik v3 as the Gateway
 *   API implementation (statuses and data plane); the rayshift operator, in-process, calling the
 *   real dashboards; with `prometheus`, a real Prometheus scraping Traefik and the bound Ray heads.
 * - TEST-ONLY simulated: the RayCluster controller (ray-head-pool.ts binds each RayCluster to a real
 *   head, marks it ready and writes its serve EndpointSlice), because there are no kubelets.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { crdsOf, newestVersion } from '../../../lib/crds/catalog';
import { resolveCrdFile } from '../../../lib/crds/resolve';
import { KubeClient } from '../../../lib/runtime/kube/client';
import { KubeObject } from '../../../lib/runtime/kube/types';
import { Operator } from '../../../operator/operator';
import { ControlPlane, startControlPlane } from '../../support/controlplane';
import { freePorts } from '../../support/processes';
import { RunningPrometheus, startPrometheus } from '../../support/prometheus';
import { rayshiftCrd, waitFor } from '../../support/operator-env';
import { netnsAvailable } from './netns';
import { RayAuth, RayHead, RayNetwork, rootPlanHostname, startRayHead } from './ray-head';
import { RealHeadPool, simulateKubeRayWithRealHeads } from './ray-head-pool';
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
 * Keeps Prometheus' `ray` job on the heads bound to a RayCluster, each labelled `ray_io_cluster`
 * with the cluster's name, as KubeRay's PodMonitor labels a head pod's metrics: a head serves
 * several clusters one after the other here, so its target follows the pool's bindings (checked
 * every 200 ms). Returns the stop.
 */
function scrapeBoundHeads(prometheus: RunningPrometheus, pool: RealHeadPool, heads: readonly RayHead[], note: (line: string) => void): () => void {
  let last = '';
  const follow = () => {
    const groups = Object.entries(pool.bindings())
      .map(([key, label]) => ({ cluster: key.slice(key.indexOf('/') + 1), head: heads.find((h) => h.label === label) }))
      .filter((b): b is { cluster: string; head: RayHead } => b.head !== undefined)
      .map((b) => ({ targets: [b.head.metricsTarget], labels: { ray_io_cluster: b.cluster } }));
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

/** How the heads are networked: `RAYSHIFT_E2E_NETWORK=netns|root`, else netns when available. */
export function chooseNetwork(): { network: RayNetwork; why: string } {
  const forced = process.env.RAYSHIFT_E2E_NETWORK;
  if (forced === 'netns' || forced === 'root') return { network: forced, why: `RAYSHIFT_E2E_NETWORK=${forced}` };
  return netnsAvailable()
    ? { network: 'netns', why: 'network namespaces are available: each Ray head has its own (default ports, IPv4 EndpointSlices)' }
    : { network: 'root', why: 'network namespaces are NOT available here: falling back to the root-namespace port plan (FQDN EndpointSlices via /etc/hosts)' };
}

/** The running stack. */
export interface E2EEnv {
  readonly cp: ControlPlane;
  readonly admin: KubeClient;
  readonly heads: readonly RayHead[];
  readonly pool: RealHeadPool;
  readonly traefik: RunningTraefik;
  readonly operator: Operator;
  /** The Prometheus scraping Traefik (job `traefik`), when `options.prometheus`. */
  readonly prometheus?: RunningPrometheus;
  readonly network: RayNetwork;
  /** Dashboard auth of every head. */
  readonly auth: RayAuth;
  /** Folder with the logs (events, operator, Traefik and its 5xx access log); kept after `stop()`. */
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

function ensureHostsEntries(labels: string[]): void {
  const hosts = fs.readFileSync('/etc/hosts', 'utf8');
  const missing = labels.map(rootPlanHostname).filter((h) => !new RegExp(`\\s${h.replace(/\./g, '\\.')}(\\s|$)`, 'm').test(hosts));
  if (missing.length === 0) return;
  try {
    fs.appendFileSync('/etc/hosts', `\n127.0.0.1 ${missing.join(' ')} # rayshift e2e (root-namespace plan)\n`);
  } catch (err) {
    throw new Error(`the root-namespace plan needs "127.0.0.1 ${missing.join(' ')}" in /etc/hosts and it could not be added: ${(err as Error).message}`);
  }
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
export async function startHeads(run: E2ERun, labels: readonly string[], network: RayNetwork, auth: RayAuth): Promise<RayHead[]> {
  const heads: RayHead[] = [];
  run.cleanups.push(() => Promise.all(heads.map((h) => h.stop())).then(() => undefined));
  for (const [i, label] of labels.entries()) {
    const t0 = Date.now();
    const head = await startRayHead({ label, index: i + 1, network, auth });
    heads.push(head);
    run.note(`Ray head ${label} healthy at ${head.dashboardUrl} after ${Date.now() - t0} ms (log ${head.logFile})`);
  }
  return heads;
}

/** Starts the whole stack (see the file comment); on failure everything started is stopped again. */
export async function startE2EEnv(options: E2EEnvOptions = {}): Promise<E2EEnv> {
  const run = startE2ERun('rayshift-e2e-');
  const { logDir, note, cleanups, stopAll } = run;
  try {
    const { network, why } = chooseNetwork();
    note(`network plan: ${network} (${why})`);
    process.stdout.write(`[e2e] Ray heads: ${why}\n[e2e] logs: ${logDir}\n`);
    const labels = ['a', 'b', 'c', 'd'].slice(0, options.heads ?? 2);
    if (network === 'root') ensureHostsEntries(labels);
    // Heads first, then the control plane.
    const heads = await startHeads(run, labels, network, options.auth ?? { mode: 'disabled' });
    const kuberay = crdsOf('kuberay', newestVersion('kuberay'));
    const crds = [...(await Promise.all(kuberay.map((c) => resolveCrdFile(c)))), ...traefikGatewayApiCrdFiles().filter((f) => !f.includes('_vap_'))];
    const cp = await startControlPlane({ crds });
    cleanups.push(() => cp.stop());
    const crd = await cp.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', await rayshiftCrd());
    if (crd.status !== 201) throw new Error(`installing the rayshift CRD: HTTP ${crd.status} ${JSON.stringify(crd.body)}`);
    const admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
    cleanups.push(() => admin.close());
    await waitFor(async () => (await admin.tryGet({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false }, 'rayservices.rayshift.dev').then((c) => ((c?.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True'))), 'rayshift CRD Established', 60_000);

    const pool = simulateKubeRayWithRealHeads(admin, heads, { onEvent: (m) => note(`[simulated KubeRay] ${m}`) });
    cleanups.push(() => pool.stop());

    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: E2E_NAMESPACE } });
    await admin.create({ ...GATEWAYCLASS, metadata: { name: E2E_GATEWAY_CLASS }, spec: { controllerName: TRAEFIK_CONTROLLER_NAME } } as KubeObject);
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
    const [metricsPort] = options.prometheus ? await freePorts(1) : [];
    const traefik = await startTraefik({ kubeconfig: cp.kubeconfigPath, entryPoints: { web: E2E_HTTP_PORT, grpc: E2E_GRPC_PORT }, logFile: path.join(logDir, 'traefik.log'), errorAccessLog: path.join(logDir, 'traefik-5xx.jsonl'), metricsPort });
    cleanups.push(() => traefik.stop());
    let prometheus: RunningPrometheus | undefined;
    if (metricsPort !== undefined) {
      prometheus = await startPrometheus({ targets: { traefik: [`127.0.0.1:${metricsPort}`] }, discoveredJobs: [RAY_SCRAPE_JOB] });
      cleanups.push(() => prometheus?.stop());
      await prometheus.waitForScrape('traefik');
      const stopFollowing = scrapeBoundHeads(prometheus, pool, heads, note);
      cleanups.push(stopFollowing);
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
    return { cp, admin, heads, pool, traefik, operator, prometheus, network, auth: options.auth ?? { mode: 'disabled' }, logDir, operatorFailures, note, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
