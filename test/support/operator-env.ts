/**
 * Shared setup of operator integration tests, and helpers to write services and record what the API
 * server saw. The environment is the test cluster (`cluster.ts`): the real KubeRay operator turns
 * the operator's RayClusters into head and worker Pods that kube-scheduler places on kwok's Nodes
 * and kwok runs to Ready, and KubeRay writes the `HeadPodReady`/`ready` state the operator waits on;
 * with the upstream CRDs (KubeRay's, the Gateway API's, RBG's) and rayshift's. Two seams stay
 * simulated, each because nothing here can play it:
 * - Serve, through the TEST-ONLY simulated Serve fleet (no Ray process runs in these suites; the
 *   operator reaches each cluster's "dashboard" through its address template);
 * - Gateway status, through the TEST-ONLY gateway status writer (no Gateway data plane runs).
 */
import * as fs from 'node:fs';
import pino from 'pino';
import { parse } from 'yaml';
import { crdsOf, newestVersion } from '../../lib/crds/catalog';
import { rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { RAY_SERVICE_DEFAULTS } from '../../lib/spec/rayservice';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { Operator } from '../../operator/operator';
import { TestCluster, startTestCluster } from './cluster';
import { ControlPlane, ExtraToken } from './controlplane';
import { GatewayStatusSimulator, SimulatedServeFleet, simulateGatewayStatusWithoutDataPlane, startServeFleetWhereNoRayRuns } from './simulated-controllers';
import { SimulatedServeDashboardOptions } from './serve-simulator';
import { waitFor } from './wait-at-most';
import { routeBackends } from './route-weights';

/** The rayshift RayService CRD (built from KubeRay v1.7.0's), as an object to POST. */
export async function rayshiftCrd(): Promise<KubeObject> {
  const file = await resolveCrdFile(crdsOf('kuberay', 'v1.7.0').find((c) => c.file === 'ray.io_rayservices.yaml')!);
  return rayshiftRayServiceCrd(parse(fs.readFileSync(file, 'utf8'), { maxAliasCount: -1 })) as unknown as KubeObject;
}

/** Everything an operator test needs. */
export interface OperatorEnv {
  /** The cluster (logs, Nodes, `printLogsOnFailure`). */
  readonly cluster: TestCluster;
  readonly cp: ControlPlane;
  readonly admin: KubeClient;
  readonly fleet: SimulatedServeFleet;
  /** The TEST-ONLY Gateway status writer (a test may hold its acknowledgements). */
  readonly gateway: GatewayStatusSimulator;
  stop(): Promise<void>;
}

/** Installs the rayshift RayService CRD on `cp` and waits until it is Established, served and in discovery. */
export async function installRayshiftCrd(cp: ControlPlane): Promise<void> {
  await cp.installCrdObjects([await rayshiftCrd()]);
}

/** Options of `startOperatorEnv`. */
export interface OperatorEnvOptions {
  /** Options of each cluster's simulated Serve dashboard. @default replicas start after 20 ms */
  readonly serve?: (namespace: string, cluster: string) => SimulatedServeDashboardOptions;
  /** Fake Nodes. @default 2 */
  readonly nodes?: number;
  /** Further kube-apiserver flags. @default none */
  readonly apiserverArgs?: readonly string[];
  /** Users besides the admin, in the static token file. @default none */
  readonly extraTokens?: readonly ExtraToken[];
  /** Install the rayshift RayService CRD (a test that installs it some other way, e.g. with Helm, says false). @default true */
  readonly rayshiftCrd?: boolean;
}

/**
 * Starts the test cluster with KubeRay, the Gateway API's and RBG's CRDs, installs the rayshift CRD
 * (unless `rayshiftCrd` is false) and starts the gateway status writer and the Serve fleet (no operator yet).
 */
export async function startOperatorEnv(options: OperatorEnvOptions = {}): Promise<OperatorEnv> {
  const crds = await Promise.all((['gateway-api', 'rbg'] as const).flatMap((p) => crdsOf(p, newestVersion(p))).map((c) => resolveCrdFile(c)));
  const cluster = await startTestCluster({
    kuberay: true,
    nodes: options.nodes ?? 2,
    crds,
    ...(options.apiserverArgs ? { apiserverArgs: options.apiserverArgs } : {}),
    ...(options.extraTokens ? { extraTokens: options.extraTokens } : {}),
  });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  try {
    if (options.rayshiftCrd ?? true) await installRayshiftCrd(cluster.cp);
    const gatewayClient = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'simulated-gateway-status' });
    const gateway = simulateGatewayStatusWithoutDataPlane(gatewayClient);
    const fleet = await startServeFleetWhereNoRayRuns(options.serve ?? (() => ({ replicaStartDelayMs: 20 })));
    return {
      cluster,
      cp: cluster.cp,
      admin,
      fleet,
      gateway,
      async stop() {
        await gateway.stop();
        gatewayClient.close();
        await fleet.close();
        admin.close();
        await cluster.stop();
      },
    };
  } catch (e) {
    admin.close();
    await cluster.stop();
    throw e;
  }
}

/** The suites' one wait (test/support/wait-at-most.ts), re-exported where most of them import it from. */
export { waitFor };

/** Creates a namespace. */
export async function createNamespace(admin: KubeClient, name: string): Promise<void> {
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** A worker-group spec whose CPU request distinguishes versions (`cpu` changes trigger upgrades). */
export function rayClusterConfig(cpu: string): Record<string, unknown> {
  return {
    enableInTreeAutoscaling: true,
    headGroupSpec: {
      rayStartParams: { 'num-cpus': '0' },
      template: { spec: { containers: [{ name: 'ray-head', image: 'rayproject/ray:2.52.0', ports: [{ name: 'serve', containerPort: 8000 }, { name: 'dashboard', containerPort: 8265 }] }] } },
    },
    workerGroupSpecs: [
      { groupName: 'small', replicas: 1, minReplicas: 1, maxReplicas: 4, template: { spec: { containers: [{ name: 'ray-worker', image: 'rayproject/ray:2.52.0', resources: { requests: { cpu } } }] } } },
    ],
  };
}

/** Serve config of the simulated test app with `replicas` replicas. */
export function serveConfig(replicas = 4, importPath = 'rayshift_testapp.app:build'): string {
  return `applications:\n- name: app\n  import_path: ${importPath}\n  route_prefix: /\n  deployments:\n  - name: Version\n    num_replicas: ${replicas}\n`;
}

/** A rayshift.dev RayService with an incremental upgrade. */
export function rayService(namespace: string, name: string, opts: { cpu?: string; maxSurge?: number; step?: number; interval?: number; strategy?: string; extensions?: Record<string, unknown>; serve?: string } = {}): KubeObject {
  const strategy = opts.strategy ?? 'NewClusterWithIncrementalUpgrade';
  return {
    apiVersion: 'rayshift.dev/v1alpha1',
    kind: 'RayService',
    metadata: { name, namespace },
    spec: {
      rayClusterDeletionDelaySeconds: 0,
      serveConfigV2: opts.serve ?? serveConfig(),
      rayClusterConfig: rayClusterConfig(opts.cpu ?? '1'),
      upgradeStrategy:
        strategy === 'NewClusterWithIncrementalUpgrade'
          ? { type: strategy, clusterUpgradeOptions: { maxSurgePercent: opts.maxSurge ?? 50, stepSizePercent: opts.step ?? 25, intervalSeconds: opts.interval ?? 1, gatewayClassName: 'simulated' } }
          : { type: strategy },
      ...(opts.extensions ? { rayshift: opts.extensions } : {}),
    },
  };
}

export const RAYSHIFT_RAYSERVICE = { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true };
export const HTTPROUTE = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true };
export const RAYCLUSTER = { apiVersion: 'ray.io/v1', kind: 'RayCluster', plural: 'rayclusters', namespaced: true };

/** The engine state a service's status carries. */
export function engineState(svc: KubeObject | undefined): Record<string, any> {
  return ((svc?.status as { engineState?: Record<string, unknown> } | undefined)?.engineState ?? {}) as Record<string, any>;
}

/**
 * Makes the operator run a pass on `namespace/name` now and resolves with the engine state that pass
 * wrote: the spec gets its progress deadline set to the default explicitly (the generation moves,
 * no decision changes), and the pass is the one whose status carries that generation. Positive
 * evidence that the operator looked at the service at a given time, for tests that would otherwise
 * sleep and assert that nothing happened.
 */
export async function operatorPassNow(admin: KubeClient, namespace: string, name: string): Promise<Record<string, any>> {
  const current = await admin.get(RAYSHIFT_RAYSERVICE, name, namespace);
  const deadline = (current.spec as { rayshift?: { progressDeadlineSeconds?: number } }).rayshift?.progressDeadlineSeconds;
  const next = deadline === RAY_SERVICE_DEFAULTS.progressDeadlineSeconds ? null : RAY_SERVICE_DEFAULTS.progressDeadlineSeconds;
  const generation = (await admin.patchMerge(RAYSHIFT_RAYSERVICE, name, namespace, { spec: { rayshift: { progressDeadlineSeconds: next } } })).metadata.generation;
  let svc: KubeObject | undefined;
  await waitFor(async () => {
    svc = await admin.tryGet(RAYSHIFT_RAYSERVICE, name, namespace);
    return (svc?.status as { observedGeneration?: number } | undefined)?.observedGeneration === generation;
  }, `the operator to run a pass on generation ${generation} of ${namespace}/${name}`);
  return engineState(svc);
}

/** The distinct weight vectors of a route's managed rule, in the order a watch saw them, with the route's resourceVersion then. */
export type RouteWeightHistory = { at: number; resourceVersion: string; weights: { name: string; weight: number }[] }[];

/**
 * Records every distinct weight vector of a route's managed rule as the API server's watch reports
 * it; `latest()` is the last version of the route the watch delivered (a test that restarts the API
 * server writes a marker on the route and waits for it there: the watch is live again).
 */
export async function recordRouteWeights(admin: KubeClient, namespace: string, name: string): Promise<{ history: RouteWeightHistory; latest(): KubeObject | undefined; stop(): void }> {
  const history: RouteWeightHistory = [];
  let latest: KubeObject | undefined;
  const informer = admin.watch(HTTPROUTE, namespace, (e) => {
    if (e.object.metadata.name !== name || e.type === 'delete') return;
    latest = e.object;
    const weights = routeBackends(e.object);
    const last = history[history.length - 1];
    if (!last || JSON.stringify(last.weights) !== JSON.stringify(weights)) history.push({ at: Date.now(), resourceVersion: String(e.object.metadata.resourceVersion), weights });
  });
  informer.start();
  // Synced before the caller changes anything: a weight written before the first list would be
  // folded into it, and a step missed so.
  await informer.waitForSync(30_000);
  return { history, latest: () => latest, stop: () => informer.stop() };
}

/** An operator environment with one in-process operator reconciling it. */
export interface OperatorHarness {
  readonly env: OperatorEnv;
  readonly operator: Operator;
  stop(): Promise<void>;
}

/** A reconcile failure the operator reported (it retries with backoff). */
export interface ReportedFailure {
  /** `namespace/name` of the RayService. */
  readonly key: string;
  /** The log message and error text. */
  readonly err: string;
}

/**
 * Starts `startOperatorEnv(options)` and an in-process operator on it (dashboards through the
 * fleet). Reconcile failures the operator logs are collected in `failures` when given.
 */
export async function startOperatorHarness(options: OperatorEnvOptions & { failures?: ReportedFailure[] } = {}): Promise<OperatorHarness> {
  return startOperatorOn(await startOperatorEnv(options), options.failures);
}

/** Starts an in-process operator on `env` (dashboards through its fleet); `stop()` stops both. */
export async function startOperatorOn(env: OperatorEnv, failures?: ReportedFailure[]): Promise<OperatorHarness> {
  const record = (o: object, msg: string) => {
    const r = o as { rayservice?: string; err?: string };
    if (failures && r.rayservice !== undefined && r.err !== undefined) failures.push({ key: r.rayservice, err: `${msg}: ${r.err}` });
  };
  // The operator's own log sits beside the controllers' (printed and kept when a test fails).
  const file = pino({ level: 'info' }, pino.destination({ dest: env.cluster.logFile('rayshift-operator'), sync: false }));
  const both = (level: 'warn' | 'error') => (o: object, msg: string) => {
    record(o, msg);
    file[level](o, msg);
  };
  const log = failures ? { info: file.info.bind(file), debug: file.debug.bind(file), warn: both('warn'), error: both('error') } : file;
  const operator = new Operator({ client: env.admin, resolver: templateDashboardResolver(env.fleet.template), log, capacityPollMs: 50 });
  await operator.start();
  return {
    env,
    operator,
    async stop() {
      await operator.stop();
      await env.stop();
    },
  };
}

/** The new cluster's weight in each two-backend state of `history` (-1 where its backend is missing). */
export function recordedPendingWeights(history: RouteWeightHistory, pendingCluster: string): number[] {
  return history.filter((h) => h.weights.length === 2).map((h) => h.weights.find((w) => w.name === `${pendingCluster}-serve-svc`)?.weight ?? -1);
}

