/**
 * Building blocks of the end-to-end scenarios: the RayService the operator executes (the test
 * app on the test Gateway), a sampler of the real Serve replica counts, and an upgrade under load
 * that records everything the assertions need.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KubeObject, ResourceType } from '../../../lib/runtime/kube/types';
import { ServeDashboardClient } from '../../../lib/runtime/serve/client';
import { KubeClient } from '../../../lib/runtime/kube/client';
import type { DashboardResolver } from '../../../lib/runtime/serve/resolver';
import { RAYSHIFT_RAYSERVICE, engineState, waitFor } from '../../support/operator-env';
import { AppliedWeightChange, ServeSample, WeightChange } from './analysis';
import { E2EEnv, E2E_GATEWAY, E2E_GATEWAY_CLASS, E2E_HTTP_PORT, E2E_NAMESPACE } from './e2e-env';
import { LoadSecond, LoadTotals, RequestRecord, Sender, httpSender, startLoad } from './load';
import { recordAppliedWeights } from './traefik-applied-weights';
import type { RunningTraefik } from './traefik';

/**
 * Offered HTTP load of the suite, requests/s: `RAYSHIFT_E2E_RATE`, default 50. On this 2-core
 * machine, shared with other builds and test runs (load average up to 30), 100/s timed out
 * thousands of requests while a new cluster started beside the serving one; see docs/e2e.md for
 * what was sustained with zero failures.
 */
export const E2E_RATE = Number(process.env.RAYSHIFT_E2E_RATE ?? 50);
/**
 * What a run under load needs of its environment: the operator stack (`E2EEnv`) or the KubeRay
 * stack (kuberay-env.ts), whose `pool.resolver` maps a RayCluster to its real head's dashboard.
 */
export type ScenarioEnv = Pick<E2EEnv, 'admin' | 'auth' | 'logDir' | 'note'> & { readonly pool: { readonly resolver: DashboardResolver }; readonly traefik: Pick<RunningTraefik, 'apiAddress'> };

/** Offered gRPC load: `RAYSHIFT_E2E_GRPC_RATE`, else `E2E_RATE`. */
export const E2E_GRPC_RATE = Number(process.env.RAYSHIFT_E2E_GRPC_RATE ?? E2E_RATE);

/** KubeRay's e2e parameter sets `{stepSizePercent, intervalSeconds, maxSurgePercent}`. */
export interface UpgradeParameters {
  readonly step: number;
  readonly interval: number;
  readonly maxSurge: number;
}

/** KubeRay's own e2e parameter sets (its test/e2eincrementalupgrade/constant.go), in its order. */
export const KUBERAY_PARAMETER_SETS: readonly UpgradeParameters[] = [
  { step: 100, interval: 1, maxSurge: 100 },
  { step: 25, interval: 5, maxSurge: 50 },
  { step: 5, interval: 10, maxSurge: 25 },
];

/** Options of the test RayService. */
export interface E2EServiceOptions extends Partial<UpgradeParameters> {
  /** App version answered by the replicas (builder arg: a change redeploys). */
  readonly version: string;
  /** Worker CPU request of the (Pod-less) worker group: a change makes the operator create a new cluster (an upgrade). */
  readonly cpu: string;
  /** Replicas of the `Version` deployment at full capacity. @default 4 */
  readonly replicas?: number;
  /** @default rayshift_testapp.app:build */
  readonly importPath?: string;
  /** Seconds without progress before an automatic rollback. */
  readonly progressDeadlineSeconds?: number;
  /** The gRPC test app behind a GRPCRoute on the Gateway's `grpc` listener instead of the HTTP app. @default false */
  readonly grpc?: boolean;
}

/** Serve config (YAML) of the gRPC test app (`echo`, deployment `Echo`, service rayshift.test.Echo). */
export function e2eGrpcServeConfig(version: string, replicas: number): string {
  return [
    'proxy_location: HeadOnly',
    'grpc_options:',
    '  port: 9000',
    '  grpc_servicer_functions:',
    '  - rayshift_test_pb2_grpc.add_EchoServicer_to_server',
    'applications:',
    '- name: echo',
    '  route_prefix: /echo',
    '  import_path: rayshift_testapp.grpc_app:build',
    '  args:',
    `    version: ${version}`,
    '  deployments:',
    '  - name: Echo',
    `    num_replicas: ${replicas}`,
    '',
  ].join('\n');
}

/** Faults the HTTP test app injects (its builder args; see rayapp/rayshift_testapp/app.py). */
export interface AppFaults {
  /** Each replica answers every N-th request with HTTP 500. */
  readonly errorEvery?: number;
  /** With `errorEvery`: only while a file at this path exists, a transient fault the test ends by deleting the file. */
  readonly errorWhile?: string;
  /** Every answer waits this long first, ms. */
  readonly delayMs?: number;
}

/** Serve config (YAML) of the HTTP test app. */
export function e2eServeConfig(version: string, replicas: number, importPath = 'rayshift_testapp.app:build', faults: AppFaults = {}): string {
  return [
    'proxy_location: HeadOnly',
    'applications:',
    '- name: web',
    '  route_prefix: /',
    `  import_path: ${importPath}`,
    '  args:',
    `    version: ${version}`,
    ...(faults.errorEvery !== undefined ? [`    error_every: ${faults.errorEvery}`] : []),
    ...(faults.errorWhile !== undefined ? [`    error_while: ${JSON.stringify(faults.errorWhile)}`] : []),
    ...(faults.delayMs !== undefined ? [`    delay_ms: ${faults.delayMs}`] : []),
    '  deployments:',
    '  - name: Version',
    `    num_replicas: ${replicas}`,
    '',
  ].join('\n');
}

/** A `rayshift.dev/v1alpha1` RayService of the HTTP (or gRPC) test app, attached to the test Gateway's `http` (or `grpc`) listener. */
export function e2eRayService(name: string, o: E2EServiceOptions): KubeObject {
  return {
    apiVersion: 'rayshift.dev/v1alpha1',
    kind: 'RayService',
    metadata: { name, namespace: E2E_NAMESPACE },
    spec: {
      rayClusterDeletionDelaySeconds: 0,
      serveConfigV2: o.grpc ? e2eGrpcServeConfig(o.version, o.replicas ?? 4) : e2eServeConfig(o.version, o.replicas ?? 4, o.importPath),
      rayClusterConfig: {
        enableInTreeAutoscaling: true,
        headGroupSpec: {
          rayStartParams: { 'num-cpus': '0' },
          template: { spec: { containers: [{ name: 'ray-head', image: 'rayproject/ray:2.60.0', ports: [{ name: 'serve', containerPort: 8000 }, { name: 'serve-grpc', containerPort: 9000 }, { name: 'dashboard', containerPort: 8265 }] }] } },
        },
        // No worker Pod: every Ray process here is a head (pod-network.ts binds head Pods only), and
        // KubeRay labels a RayService cluster's worker Pods `ray.io/serve=true`, so a worker Pod would
        // be a ready serve endpoint where nothing answers. The group's CPU request still names the
        // cluster spec (a change is a new cluster).
        workerGroupSpecs: [{ groupName: 'small', replicas: 0, minReplicas: 0, maxReplicas: 4, template: { spec: { containers: [{ name: 'ray-worker', image: 'rayproject/ray:2.60.0', resources: { requests: { cpu: o.cpu } } }] } } }],
      },
      upgradeStrategy: {
        type: 'NewClusterWithIncrementalUpgrade',
        clusterUpgradeOptions: { maxSurgePercent: o.maxSurge ?? 100, stepSizePercent: o.step ?? 100, intervalSeconds: o.interval ?? 1, gatewayClassName: E2E_GATEWAY_CLASS },
      },
      rayshift: {
        gatewayRef: { name: E2E_GATEWAY, namespace: E2E_NAMESPACE, sectionName: o.grpc ? 'grpc' : 'http' },
        ...(o.grpc ? { routeKind: 'GRPC' } : {}),
        ...(o.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: o.progressDeadlineSeconds } : {}),
      },
    },
  };
}

/** The stored RayService. */
export async function getService(env: Pick<E2EEnv, 'admin'>, name: string): Promise<KubeObject | undefined> {
  return env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, E2E_NAMESPACE);
}

/** Replaces the spec fields of a service (a rayshift RayService unless `type`; one update, retried on conflicts). */
export async function updateSpec(env: Pick<E2EEnv, 'admin'>, name: string, change: (spec: Record<string, any>) => Record<string, any>, type: ResourceType = RAYSHIFT_RAYSERVICE): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    // A controller writing the object (finalizers, status) between the read and the update is a conflict: read again.
    const current = (await env.admin.tryGet(type, name, E2E_NAMESPACE))!;
    try {
      await env.admin.update({ ...current, spec: change(structuredClone(current.spec as Record<string, any>)) });
      return;
    } catch (err) {
      if (attempt >= 5 || !/409|conflict/i.test(String((err as Error).message))) throw err;
    }
  }
}

/** Creates the service and waits until it serves `version` through Traefik (20 answers in a row; HTTP unless `probe`). */
export async function deployAndWaitServing(env: E2EEnv, service: KubeObject, version: string, timeoutMs = 600_000, probe?: { send: Sender; close(): void }): Promise<string> {
  const name = String(service.metadata.name);
  await env.admin.create(service);
  await waitFor(async () => engineState(await getService(env, name)).phase === 'Running', `${name} to run its first cluster`, timeoutMs, 500);
  await waitServingThroughGateway(version, timeoutMs, probe);
  return engineState(await getService(env, name)).activeClusterName as string;
}

/** Waits until 20 requests in a row through Traefik answer `version` (HTTP GETs unless `sender` is given; it is closed). */
export async function waitServingThroughGateway(version: string, timeoutMs = 300_000, sender?: { send: Sender; close(): void }): Promise<void> {
  const probe = sender ?? httpSender('127.0.0.1', E2E_HTTP_PORT, { maxSockets: 1 });
  let streak = 0;
  let last = '';
  try {
    await waitFor(async () => {
      const ac = new AbortController();
      const t = setTimeout(() => ac.abort(), 5000);
      const r = await probe.send(ac.signal).catch((e: Error) => ({ ok: false, version: undefined, detail: e.message }));
      clearTimeout(t);
      last = r.ok ? `version ${r.version}` : (r.detail ?? 'failed');
      streak = r.ok && r.version === version ? streak + 1 : 0;
      return streak >= 20;
    }, `20 answers in a row from ${version} through Traefik (last: ${last})`, timeoutMs, 100);
  } finally {
    probe.close();
  }
}

const ROUTE_TYPES = {
  HTTPRoute: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true },
  GRPCRoute: { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', plural: 'grpcroutes', namespaced: true },
} as const;

/** Records every distinct weight vector of a route's first rule (HTTPRoute or GRPCRoute) as a watch reports it. */
export function recordWeights(admin: KubeClient, kind: keyof typeof ROUTE_TYPES, namespace: string, name: string): { history: WeightChange[]; stop(): void } {
  const history: WeightChange[] = [];
  const informer = admin.watch(ROUTE_TYPES[kind], namespace, (e) => {
    if (e.object.metadata.name !== name || e.type === 'delete') return;
    const rule = ((e.object.spec as { rules?: { backendRefs?: { name: string; weight?: number }[] }[] }).rules ?? [])[0];
    const weights = (rule?.backendRefs ?? []).map((b) => ({ name: b.name, weight: b.weight ?? 1 }));
    const last = history[history.length - 1];
    if (!last || JSON.stringify(last.weights) !== JSON.stringify(weights)) history.push({ at: Date.now(), weights });
  });
  informer.start();
  return { history, stop: () => informer.stop() };
}

/** The engine state of a service: its `status.engineState` (operator), or for executor `pulumi` its record's. */
export type EngineStateReader = () => Promise<Record<string, any>>;

/** The engine state of the operator-run service `name` (`status.engineState` of the rayshift RayService). */
export function operatorState(env: Pick<E2EEnv, 'admin'>, name: string): EngineStateReader {
  return async () => engineState(await getService(env, name));
}

/**
 * Samples one deployment (default: the `web` app's `Version`) on every cluster of a service once a
 * second (with the heads' token when they run with token auth).
 */
export function sampleServe(env: ScenarioEnv, serviceName: string, appName = 'web', deploymentName = 'Version', state: EngineStateReader = operatorState(env, serviceName)): { samples: ServeSample[]; stop(): Promise<void> } {
  const client = new ServeDashboardClient({ resolver: env.pool.resolver, timeoutMs: 5000, ...(env.auth.mode === 'token' ? { token: env.auth.token } : {}) });
  const samples: ServeSample[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const s = await state().catch(() => ({}) as Record<string, any>);
      const clusters = [s.activeClusterName, s.pendingClusterName].filter((c): c is string => typeof c === 'string');
      await Promise.all(
        clusters.map(async (cluster) => {
          try {
            const d = await client.getServeDetails({ namespace: E2E_NAMESPACE, name: cluster });
            const app = d.applications[appName];
            const dep = app?.deployments[deploymentName];
            if (!app || !dep) return;
            const cfg = (app.deployed_app_config as { deployments?: { name: string; num_replicas?: number }[] } | null | undefined)?.deployments?.find((x) => x.name === deploymentName);
            samples.push({
              at: Date.now(),
              cluster,
              targetCapacity: d.target_capacity,
              numReplicas: typeof cfg?.num_replicas === 'number' ? cfg.num_replicas : undefined,
              targetReplicas: dep.target_num_replicas,
              running: dep.replicas.filter((r) => r.state === 'RUNNING').length,
              appStatus: app.status,
              deploymentStatus: dep.status,
            });
          } catch {
            // unbound or not answering: no sample
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Everything recorded during one change of a service under load. */
export interface RunUnderLoad {
  readonly totals: LoadTotals;
  readonly seconds: readonly LoadSecond[];
  readonly requests: readonly RequestRecord[];
  readonly history: readonly WeightChange[];
  /** Every weight vector of the route as Traefik's data plane applied it (its API polled). */
  readonly applied: readonly AppliedWeightChange[];
  readonly serve: readonly ServeSample[];
  /** Epoch ms the load started. */
  readonly loadStartedAt: number;
  /** Epoch ms: the spec change was written / the awaited end state was reached. */
  readonly changedAt: number;
  readonly doneAt: number;
  readonly loadEndedAt: number;
}

/**
 * Starts load through Traefik at `rate`/s (HTTP unless `options.sender`), waits `warmMs`, applies `change`, waits for `done`,
 * keeps the load `cooldownMs` longer, and returns what was recorded.
 */
export async function runUnderLoad(
  env: ScenarioEnv,
  serviceName: string,
  rate: number,
  change: () => Promise<void>,
  done: () => Promise<boolean>,
  options: {
    warmMs?: number;
    cooldownMs?: number;
    timeoutMs?: number;
    what: string;
    /** @default HTTP GETs through the Gateway's http listener */
    sender?: { send: Sender; close(): void };
    /** @default HTTPRoute */
    routeKind?: keyof typeof ROUTE_TYPES;
    /** Serve app and deployment sampled. @default web/Version */
    app?: string;
    deployment?: string;
    /** Where the service's engine state is read (which clusters to sample). @default the operator's RayService */
    state?: EngineStateReader;
  },
): Promise<RunUnderLoad> {
  const kind = options.routeKind ?? 'HTTPRoute';
  const routeName = `${serviceName}-${kind === 'GRPCRoute' ? 'grpcroute' : 'httproute'}`;
  const recorder = recordWeights(env.admin, kind, E2E_NAMESPACE, routeName);
  const applied = recordAppliedWeights(env.traefik.apiAddress, kind, E2E_NAMESPACE, routeName);
  const sampler = sampleServe(env, serviceName, options.app, options.deployment, options.state ?? operatorState(env, serviceName));
  // As many connections as requests may be outstanding (the load's maxInFlight): an open-model
  // client never queues a due request behind slow answers, so each request meets the data plane
  // when it is sent.
  const sender = options.sender ?? httpSender('127.0.0.1', E2E_HTTP_PORT, { maxSockets: Math.max(16, Math.ceil(rate * 4)) });
  const load = startLoad(sender.send, { ratePerSecond: rate, timeoutMs: 10_000, recordRequests: true, durationMs: 40 * 60_000 });
  try {
    await new Promise((r) => setTimeout(r, options.warmMs ?? 3000));
    const changedAt = Date.now();
    env.note(`${options.what}: spec changed`);
    await change();
    await waitFor(done, options.what, options.timeoutMs ?? 1_200_000, 250);
    const doneAt = Date.now();
    env.note(`${options.what}: done after ${doneAt - changedAt} ms`);
    await new Promise((r) => setTimeout(r, options.cooldownMs ?? 3000));
    const totals = await load.stop();
    const loadEndedAt = Date.now();
    const run: RunUnderLoad = { totals, loadStartedAt: load.startedAt, seconds: load.seconds, requests: load.requests, history: [...recorder.history], applied: [...applied.history], serve: [...sampler.samples], changedAt, doneAt, loadEndedAt };
    saveRun(env, options.what, run);
    return run;
  } finally {
    await load.stop();
    recorder.stop();
    await applied.stop();
    await sampler.stop();
    sender.close();
  }
}

/**
 * Writes what a run recorded to `<logDir>/run-<what>.json` (every request as `[due ms since load
 * start, send delay ms, version or null]`, the weight history, the Serve samples), so that a
 * failing check can be examined after the stack is gone.
 */
export function saveRun(env: ScenarioEnv, what: string, run: RunUnderLoad): void {
  const file = path.join(env.logDir, `run-${what.replace(/[^A-Za-z0-9.{},→-]+/g, '_')}.json`);
  const t0 = run.loadStartedAt;
  try {
    fs.writeFileSync(
      file,
      JSON.stringify({
        what,
        loadStartedAt: t0,
        changedAt: run.changedAt - t0,
        doneAt: run.doneAt - t0,
        loadEndedAt: run.loadEndedAt - t0,
        totals: run.totals,
        history: run.history.map((h) => ({ at: h.at - t0, weights: h.weights })),
        applied: run.applied.map((h) => ({ before: h.before - t0, at: h.at - t0, weights: h.weights })),
        // Per request: due (ms since the load started), send lag, version, and how long its answer took (null: none).
        requests: run.requests.map((r) => [Math.round(r.at - t0), (r.sentAt ?? r.at) - r.at, r.version ?? null, r.answeredAt === undefined ? null : r.answeredAt - (r.sentAt ?? r.at)]),
        serve: run.serve.map((x) => ({ ...x, at: x.at - t0 })),
      }),
    );
    env.note(`${what}: recorded run in ${file}`);
  } catch (err) {
    env.note(`${what}: could not save the run: ${(err as Error).message}`);
  }
}

/** True when the service runs one cluster other than `old`, with no upgrade in flight. */
export async function upgradedAwayFrom(env: E2EEnv, name: string, old: string): Promise<boolean> {
  const s = engineState(await getService(env, name));
  return s.phase === 'Running' && s.activeClusterName !== undefined && s.activeClusterName !== old && s.pendingClusterName === undefined;
}
