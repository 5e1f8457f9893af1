/**
 * TEST-ONLY stand-in for a Ray dashboard's Serve REST API, for unit tests of the dashboard client
 * where no Ray head can run. It is a simulation, not Ray: an HTTP server on 127.0.0.1 (port 0)
 * that answers with Ray's JSON shapes (`ServeInstanceDetails`, ray-local.md §2) and walks Ray's
 * state transitions for a `target_capacity` change:
 *
 * - `PUT /api/serve/applications/` validates and stores the config; the top-level `target_capacity`
 *   is echoed at once, deployments pick the change up after `controlLoopLagMs` (a stale tick).
 * - `target_num_replicas` = Ray's `get_capacity_adjusted_num_replicas` of `num_replicas`, or the
 *   autoscaling bounds `[adj(min) | adj(initial) while the direction is UP, adj(max)]` applied to a
 *   no-load policy decision (`min_replicas`), which reproduces ray#62682.
 * - New replicas are STARTING and turn RUNNING `replicaStartDelayMs` later, or only when the test
 *   calls `releaseReplicas()` (`manualReplicaStart`). Removed ones are STOPPING for
 *   `replicaStopDelayMs`. Until the count is reached a deployment is UPDATING (new or new version)
 *   / UPSCALING / DOWNSCALING ("Upscaling from 1 to 2 replicas.") and its application DEPLOYING;
 *   then HEALTHY (`UPSCALE_COMPLETED`, …) and RUNNING. A version change (import_path, args,
 *   runtime_env, ray_actor_options) starts new replicas and stops the old ones once the new are up.
 * - An import path missing from `code` (or an override naming an unknown deployment) makes the
 *   application DEPLOY_FAILED.
 * - POST/PUT that look like browser traffic get 405 "Method Not Allowed for browser traffic." with
 *   Ray's exact rule (`is_browser_request`): a `User-Agent` starting with `Mozilla`, or any of
 *   `Referer`, `Origin`, `Sec-Fetch-Mode|Dest|Site|User`, `Access-Control-Request-Method|Headers`.
 *   This check runs before token auth, as in the dashboard's middleware chain.
 * - With `token`: `Authorization`, `X-Ray-Authorization` (`Bearer <t>`) or cookie
 *   `ray-authentication-token`; missing → 401, wrong → 403 (Ray's texts). Public paths stay open.
 *
 * State advances lazily (on each request and on `releaseReplicas`), so the simulator owns no timers.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** One deployment as the simulated application code declares it (`@serve.deployment(...)`). */
export interface SimulatedDeploymentCode {
  /** Deployment name. */
  readonly name: string;
  /** Code default for `num_replicas` (1 when neither this nor `autoscaling_config` is set). */
  readonly num_replicas?: number | 'auto';
  /** Code default for `autoscaling_config`. */
  readonly autoscaling_config?: { readonly min_replicas?: number; readonly max_replicas?: number; readonly initial_replicas?: number };
}

/** What an import path builds. */
export interface SimulatedApplicationCode {
  /** The deployments of the application graph. */
  readonly deployments: readonly SimulatedDeploymentCode[];
}

/** The test apps of ray-local.md §3, importable by default. */
export const SIMULATED_DEFAULT_CODE: { readonly [importPath: string]: SimulatedApplicationCode } = {
  'rayshift_testapp.app:build': { deployments: [{ name: 'Version' }] },
  'rayshift_testapp.grpc_app:build': { deployments: [{ name: 'Echo' }] },
};

/** Options of `startSimulatedServeDashboard`. */
export interface SimulatedServeDashboardOptions {
  /** Enables token auth (`RAY_AUTH_MODE=token`) with this token. */
  readonly token?: string;
  /** Time from a replica's creation to RUNNING. @default 20 */
  readonly replicaStartDelayMs?: number;
  /** Replicas stay STARTING until the test calls `releaseReplicas()`. @default false */
  readonly manualReplicaStart?: boolean;
  /** Time a removed replica stays STOPPING. @default 0 */
  readonly replicaStopDelayMs?: number;
  /** Time before deployments reflect an accepted PUT (the echo of `target_capacity` is immediate). @default 0 */
  readonly controlLoopLagMs?: number;
  /** Importable application code, added to `SIMULATED_DEFAULT_CODE`. */
  readonly code?: { readonly [importPath: string]: SimulatedApplicationCode };
  /** Clock. @default Date.now */
  readonly now?: () => number;
}

/** One request the simulator received. */
export interface SimulatedRequest {
  /** HTTP method. */
  readonly method: string;
  /** Path with query. */
  readonly url: string;
  /** Request headers, names lower-cased. */
  readonly headers: http.IncomingHttpHeaders;
  /** Request body (PUT/POST). */
  readonly body: string;
  /** Status answered; undefined while stalled. */
  status?: number;
}

/** Handle of a running simulator. */
export interface SimulatedServeDashboard {
  /** Base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Listening port. */
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: readonly SimulatedRequest[];
  /** The top-level `target_capacity` GET would report (null = full capacity or no Serve). */
  targetCapacity(): number | null;
  /** The last accepted PUT body; undefined before the first. */
  config(): JsonObject | undefined;
  /** The body a `GET /api/serve/applications/` would answer now. */
  details(): JsonObject;
  /** Starts waiting STARTING replicas now (manual mode); returns how many. */
  releaseReplicas(filter?: { readonly app?: string; readonly deployment?: string; readonly count?: number }): number;
  /** While true, requests are received but never answered (for client timeouts). */
  setStalled(stalled: boolean): void;
  /** While set, every request is answered 307 with this Location. */
  setRedirect(location: string | undefined): void;
  /** Stops the server, dropping open connections. */
  close(): Promise<void>;
}

interface SimReplica {
  readonly id: string;
  state: 'STARTING' | 'RUNNING' | 'STOPPING';
  readonly version: string;
  readyAt: number;
  goneAt: number;
  readonly startTime: number;
}

interface Autoscaling {
  readonly min: number;
  readonly max: number;
  readonly initial?: number;
  readonly raw: JsonObject;
}

interface SimDeployment {
  readonly name: string;
  version: string;
  fixed?: number;
  autoscaling?: Autoscaling;
  target: number;
  status: 'UPDATING' | 'HEALTHY' | 'UPSCALING' | 'DOWNSCALING';
  trigger: string;
  message: string;
  config: JsonObject;
  replicas: SimReplica[];
}

interface SimApp {
  readonly name: string;
  routePrefix: string | null;
  failed?: string;
  deleting: boolean;
  deployedAt: number;
  appConfig: JsonObject;
  deployments: Map<string, SimDeployment>;
}

const BROWSER_HEADERS = [
  'referer',
  'origin',
  'sec-fetch-mode',
  'sec-fetch-dest',
  'sec-fetch-site',
  'sec-fetch-user',
  'access-control-request-method',
  'access-control-request-headers',
];
const PUBLIC_PATHS = new Set(['/', '/api/authentication_mode', '/api/authenticate', '/api/healthz', '/api/gcs_healthz', '/api/local_raylet_healthz', '/-/healthz']);
const SERVE_PATH = '/api/serve/applications/';
const NODE_ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c';

function isObj(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Ray's `get_capacity_adjusted_num_replicas` (ray/serve/_private/utils.py), the simulator's own
 * rendering of Ray's Python, deliberately not of rayshift's `lib/runtime/serve/capacity.ts` (the
 * two must be able to disagree; test/runtime/serve-capacity-ray.test.ts holds both to Ray's
 * table). Python multiplies `n * tc` as floats, turns that product into an exact `Decimal`, divides
 * by 100 and rounds half up. Here the product is taken apart into its exact binary fraction
 * `m / 2^k`, and half-up rounding of `m / (100 · 2^k)` is `floor((2m + 100 · 2^k) / (200 · 2^k))`
 * in BigInt; at least 1 unless the capacity or the count is 0.
 */
export function simulatedCapacityAdjusted(n: number, tc: number | null): number {
  if (tc === null || tc === 100) return n;
  if (tc === 0 || n === 0) return 0;
  const { m, k } = exactBinaryFraction(n * tc);
  const scale = 1n << k;
  // BigInt division truncates, which is floor for these non-negative operands.
  const rounded = (2n * m + 100n * scale) / (200n * scale);
  return Math.max(1, Number(rounded));
}

/** A finite non-negative double as the exact fraction `m / 2^k` (doubling a double is exact). */
function exactBinaryFraction(x: number): { m: bigint; k: bigint } {
  let v = x;
  let k = 0n;
  while (!Number.isInteger(v)) {
    v *= 2;
    k += 1n;
  }
  return { m: BigInt(v), k };
}

/** Ray's `is_browser_request`. */
export function isSimulatedBrowserRequest(headers: http.IncomingHttpHeaders): boolean {
  const ua = headers['user-agent'];
  if (typeof ua === 'string' && ua.startsWith('Mozilla')) return true;
  return BROWSER_HEADERS.some((h) => headers[h] !== undefined);
}

class Validation extends Error {}

function validateDeploy(body: unknown): JsonObject {
  if (!isObj(body)) throw new Validation('1 validation error for ServeDeploySchema\n__root__\n  value is not a valid dict (type=type_error.dict)');
  const apps = body.applications;
  if (!Array.isArray(apps)) throw new Validation('1 validation error for ServeDeploySchema\napplications\n  field required (type=value_error.missing)');
  const tc = body.target_capacity;
  if (tc !== undefined && tc !== null) {
    if (typeof tc !== 'number') throw new Validation('1 validation error for ServeDeploySchema\ntarget_capacity\n  value is not a valid float (type=type_error.float)');
    if (tc < 0) throw new Validation('1 validation error for ServeDeploySchema\ntarget_capacity\n  ensure this value is greater than or equal to 0 (type=value_error.number.not_ge; limit_value=0)');
    if (tc > 100) throw new Validation('1 validation error for ServeDeploySchema\ntarget_capacity\n  ensure this value is less than or equal to 100 (type=value_error.number.not_le; limit_value=100)');
  }
  const names = new Set<string>();
  const prefixes = new Set<string>();
  apps.forEach((app, i) => {
    const at = `applications -> ${i}`;
    if (!isObj(app)) throw new Validation(`1 validation error for ServeDeploySchema\n${at}\n  value is not a valid dict`);
    if (typeof app.import_path !== 'string') throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> import_path\n  field required (type=value_error.missing)`);
    if ('host' in app || 'port' in app) throw new Validation(`1 validation error for ServeDeploySchema\n${at}\n  host and port must be set in http_options, not in an application`);
    const name = typeof app.name === 'string' ? app.name : 'default';
    if (name === '' || names.has(name)) throw new Validation(`1 validation error for ServeDeploySchema\napplications\n  Found duplicate or empty application name '${name}'`);
    names.add(name);
    const prefix = app.route_prefix === undefined ? '/' : app.route_prefix;
    if (prefix !== null) {
      if (typeof prefix !== 'string' || !prefix.startsWith('/') || (prefix !== '/' && prefix.endsWith('/')) || /[{}]/.test(prefix)) {
        throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> route_prefix\n  route_prefix "${String(prefix)}" is invalid`);
      }
      if (prefixes.has(prefix)) throw new Validation(`1 validation error for ServeDeploySchema\napplications\n  Found duplicate route prefix '${prefix}'`);
      prefixes.add(prefix);
    }
    const env = app.runtime_env;
    if (isObj(env) && typeof env.working_dir === 'string' && !env.working_dir.includes('://')) {
      throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> runtime_env\n  working_dir must be a remote URI, got "${env.working_dir}"`);
    }
    const deps = app.deployments ?? [];
    if (!Array.isArray(deps)) throw new Validation(`1 validation error for ServeDeploySchema\n${at} -> deployments\n  value is not a valid list`);
    deps.forEach((dep, j) => {
      const dat = `${at} -> deployments -> ${j}`;
      if (!isObj(dep) || typeof dep.name !== 'string') throw new Validation(`1 validation error for ServeDeploySchema\n${dat} -> name\n  field required`);
      const n = dep.num_replicas;
      if (n !== undefined && n !== null && n !== 'auto' && !(typeof n === 'number' && Number.isInteger(n) && n > 0)) {
        throw new Validation(`1 validation error for ServeDeploySchema\n${dat} -> num_replicas\n  value must be a positive integer or "auto"`);
      }
      if (typeof n === 'number' && isObj(dep.autoscaling_config)) {
        throw new Validation(`1 validation error for ServeDeploySchema\n${dat} -> __root__\n  Manually setting num_replicas is not allowed when autoscaling_config is provided.`);
      }
    });
  });
  return body;
}

function intOr(v: Json | undefined, d: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : d;
}

/** Starts a simulated Ray dashboard (Serve REST API only) on 127.0.0.1 and a free port. */
export async function startSimulatedServeDashboard(options: SimulatedServeDashboardOptions = {}): Promise<SimulatedServeDashboard> {
  const now = options.now ?? Date.now;
  const startDelay = options.replicaStartDelayMs ?? 20;
  const stopDelay = options.replicaStopDelayMs ?? 0;
  const lag = options.controlLoopLagMs ?? 0;
  const manual = options.manualReplicaStart ?? false;
  const code: { [p: string]: SimulatedApplicationCode } = { ...SIMULATED_DEFAULT_CODE, ...(options.code ?? {}) };
  const requests: SimulatedRequest[] = [];
  let stalled = false;
  let redirect: string | undefined;
  let replicaSeq = 0;

  // Serve state.
  let started = false;
  let targetCapacity: number | null = null;
  let direction: 'UP' | 'DOWN' | null = null;
  let accepted: JsonObject | undefined;
  let instanceOptions: JsonObject = {};
  let pending: { body: JsonObject; applyAt: number } | undefined;
  const apps = new Map<string, SimApp>();

  const computeTarget = (dep: SimDeployment): number => {
    if (dep.autoscaling === undefined) return simulatedCapacityAdjusted(dep.fixed ?? 1, targetCapacity);
    const a = dep.autoscaling;
    const lower =
      direction === 'UP' && a.initial !== undefined
        ? simulatedCapacityAdjusted(a.initial, targetCapacity)
        : simulatedCapacityAdjusted(a.min, targetCapacity);
    const upper = simulatedCapacityAdjusted(a.max, targetCapacity);
    // Ray's `apply_bounds`: max(lower, min(upper, decision)); with no load the decision is min_replicas.
    return Math.max(lower, Math.min(upper, a.min));
  };

  const setTarget = (dep: SimDeployment, fresh: boolean, versionChanged: boolean): void => {
    const before = dep.target;
    dep.target = computeTarget(dep);
    if (fresh || versionChanged) {
      dep.status = 'UPDATING';
      dep.trigger = 'CONFIG_UPDATE_STARTED';
      dep.message = '';
    } else if (dep.target > before) {
      dep.status = 'UPSCALING';
      dep.trigger = 'CONFIG_UPDATE_STARTED';
      dep.message = `Upscaling from ${before} to ${dep.target} replicas.`;
    } else if (dep.target < before) {
      dep.status = 'DOWNSCALING';
      dep.trigger = 'CONFIG_UPDATE_STARTED';
      dep.message = `Downscaling from ${before} to ${dep.target} replicas.`;
    }
  };

  const stopApp = (app: SimApp, t: number): void => {
    for (const dep of app.deployments.values()) {
      for (const r of dep.replicas) {
        if (r.state !== 'STOPPING') {
          r.state = 'STOPPING';
          r.goneAt = t + stopDelay;
        }
      }
    }
  };

  const applyConfig = (body: JsonObject, t: number): void => {
    const list = body.applications as JsonObject[];
    const seen = new Set<string>();
    for (const appCfg of list) {
      const name = typeof appCfg.name === 'string' ? appCfg.name : 'default';
      seen.add(name);
      let app = apps.get(name);
      if (app === undefined || app.deleting) {
        app = { name, routePrefix: '/', deleting: false, deployedAt: t, appConfig: appCfg, deployments: new Map() };
        apps.set(name, app);
      }
      app.routePrefix = appCfg.route_prefix === undefined ? '/' : (appCfg.route_prefix as string | null);
      app.appConfig = appCfg;
      app.deployedAt = t;
      delete app.failed;
      const importPath = appCfg.import_path as string;
      const built = code[importPath];
      const overrides = (Array.isArray(appCfg.deployments) ? appCfg.deployments : []) as JsonObject[];
      if (built === undefined) {
        const module = importPath.split(':')[0].split('.')[0];
        app.failed =
          `Deploying app '${name}' failed with exception:\nTraceback (most recent call last):\n` +
          `  File "ray/serve/_private/application_state.py", in build_serve_application\nModuleNotFoundError: No module named '${module}'`;
      } else {
        const unknown = overrides.find((o) => !built.deployments.some((d) => d.name === o.name));
        if (unknown !== undefined) {
          app.failed = `Deploying app '${name}' failed with exception:\nValueError: Got config override for nonexistent deployment '${String(unknown.name)}'`;
        }
      }
      if (app.failed !== undefined || built === undefined) {
        stopApp(app, t);
        continue;
      }
      const versionBase = JSON.stringify([importPath, appCfg.args ?? null, appCfg.runtime_env ?? null]);
      const names = new Set(built.deployments.map((d) => d.name));
      for (const [depName, dep] of app.deployments) {
        if (!names.has(depName)) {
          for (const r of dep.replicas) if (r.state !== 'STOPPING') Object.assign(r, { state: 'STOPPING', goneAt: t + stopDelay });
          dep.target = 0;
        }
      }
      for (const d of built.deployments) {
        const override = overrides.find((o) => o.name === d.name) ?? {};
        const merged: JsonObject = { ...(JSON.parse(JSON.stringify(d)) as JsonObject) };
        if ('num_replicas' in override || 'autoscaling_config' in override) {
          delete merged.num_replicas;
          delete merged.autoscaling_config;
        }
        Object.assign(merged, override);
        const version = `${versionBase}|${JSON.stringify(merged.ray_actor_options ?? null)}`;
        let auto: Autoscaling | undefined;
        const ac = isObj(merged.autoscaling_config) ? merged.autoscaling_config : merged.num_replicas === 'auto' ? {} : undefined;
        if (ac !== undefined) {
          const min = intOr(ac.min_replicas, 1);
          const max = Math.max(min, intOr(ac.max_replicas, merged.num_replicas === 'auto' ? 100 : min));
          const raw: JsonObject = { min_replicas: min, max_replicas: max, target_ongoing_requests: 2, upscale_delay_s: 30, downscale_delay_s: 600 };
          const initial = typeof ac.initial_replicas === 'number' ? ac.initial_replicas : undefined;
          if (initial !== undefined) raw.initial_replicas = initial;
          auto = { min, max, raw, ...(initial !== undefined ? { initial } : {}) };
        }
        const config: JsonObject = {
          name: d.name,
          max_ongoing_requests: (merged.max_ongoing_requests as Json) ?? 5,
          user_config: (merged.user_config as Json) ?? null,
          graceful_shutdown_wait_loop_s: 2,
          graceful_shutdown_timeout_s: 20,
          health_check_period_s: 10,
          health_check_timeout_s: 30,
          ray_actor_options: (merged.ray_actor_options as Json) ?? { num_cpus: 1 },
        };
        if (auto !== undefined) config.autoscaling_config = auto.raw;
        else config.num_replicas = typeof merged.num_replicas === 'number' ? merged.num_replicas : 1;
        let dep = app.deployments.get(d.name);
        const fresh = dep === undefined;
        if (dep === undefined) {
          dep = { name: d.name, version, target: 0, status: 'UPDATING', trigger: 'CONFIG_UPDATE_STARTED', message: '', config, replicas: [] };
          app.deployments.set(d.name, dep);
        }
        const versionChanged = !fresh && dep.version !== version;
        dep.version = version;
        dep.config = config;
        if (auto !== undefined) {
          dep.autoscaling = auto;
          delete dep.fixed;
        } else {
          dep.fixed = config.num_replicas as number;
          delete dep.autoscaling;
        }
        setTarget(dep, fresh, versionChanged);
      }
    }
    for (const app of apps.values()) {
      if (!seen.has(app.name) && !app.deleting) {
        app.deleting = true;
        stopApp(app, t);
      }
    }
  };

  const reconcile = (dep: SimDeployment, t: number): void => {
    const advance = (): void => {
      for (const r of dep.replicas) if (r.state === 'STARTING' && r.readyAt <= t) r.state = 'RUNNING';
      dep.replicas = dep.replicas.filter((r) => !(r.state === 'STOPPING' && r.goneAt <= t));
    };
    advance();
    const current = dep.replicas.filter((r) => r.version === dep.version && r.state !== 'STOPPING');
    for (let i = current.length; i < dep.target; i++) {
      replicaSeq += 1;
      dep.replicas.push({
        id: `${dep.name.toLowerCase()}-${replicaSeq.toString(36).padStart(8, '0')}`,
        state: 'STARTING',
        version: dep.version,
        readyAt: manual ? Number.POSITIVE_INFINITY : t + startDelay,
        goneAt: Number.POSITIVE_INFINITY,
        startTime: t,
      });
    }
    if (current.length > dep.target) {
      const excess = [...current.filter((r) => r.state === 'STARTING'), ...current.filter((r) => r.state === 'RUNNING').reverse()];
      for (const r of excess.slice(0, current.length - dep.target)) Object.assign(r, { state: 'STOPPING', goneAt: t + stopDelay });
    }
    const runningCurrent = dep.replicas.filter((r) => r.version === dep.version && r.state === 'RUNNING').length;
    if (runningCurrent >= dep.target) {
      for (const r of dep.replicas) {
        if (r.version !== dep.version && r.state !== 'STOPPING') Object.assign(r, { state: 'STOPPING', goneAt: t + stopDelay });
      }
    }
    advance();
    const settled = dep.replicas.length === dep.target && dep.replicas.every((r) => r.state === 'RUNNING' && r.version === dep.version);
    if (settled && dep.status !== 'HEALTHY') {
      dep.trigger =
        dep.status === 'UPSCALING' ? 'UPSCALE_COMPLETED' : dep.status === 'DOWNSCALING' ? 'DOWNSCALE_COMPLETED' : 'CONFIG_UPDATE_COMPLETED';
      dep.status = 'HEALTHY';
      dep.message = '';
    }
  };

  const step = (): void => {
    const t = now();
    if (pending !== undefined && pending.applyAt <= t) {
      const body = pending.body;
      pending = undefined;
      applyConfig(body, t);
    }
    for (const [name, app] of apps) {
      for (const dep of app.deployments.values()) reconcile(dep, t);
      if (app.deleting && [...app.deployments.values()].every((d) => d.replicas.length === 0)) apps.delete(name);
    }
  };

  const appStatus = (app: SimApp): string => {
    if (app.deleting) return 'DELETING';
    if (app.failed !== undefined) return 'DEPLOY_FAILED';
    return [...app.deployments.values()].every((d) => d.status === 'HEALTHY') ? 'RUNNING' : 'DEPLOYING';
  };

  const details = (declarative = true): JsonObject => {
    if (!started) return { deploy_mode: 'MULTI_APP', controller_info: {}, proxies: {}, applications: {}, target_capacity: null };
    const node = { node_id: NODE_ID, node_ip: '127.0.0.1', worker_id: 'f'.repeat(56) };
    const applications: JsonObject = {};
    if (declarative) {
      for (const app of apps.values()) {
        const deployments: JsonObject = {};
        for (const dep of app.deployments.values()) {
          deployments[dep.name] = {
            name: dep.name,
            status: dep.status,
            status_trigger: dep.trigger,
            message: dep.message,
            deployment_config: dep.config,
            target_num_replicas: dep.target,
            required_resources: { CPU: 1 },
            replicas: dep.replicas.map((r) => ({
              ...node,
              replica_id: r.id,
              state: r.state,
              pid: 10000 + Number.parseInt(r.id.slice(-4), 36) % 50000,
              actor_name: `SERVE_REPLICA::${app.name}#${dep.name}#${r.id}`,
              actor_id: r.id.padEnd(32, '0').slice(0, 32),
              log_file_path: `/serve/replica_${app.name}_${dep.name}_${r.id}.log`,
              start_time_s: r.startTime / 1000,
            })),
          };
        }
        applications[app.name] = {
          name: app.name,
          route_prefix: app.routePrefix,
          docs_path: null,
          status: appStatus(app),
          message: app.failed ?? '',
          last_deployed_time_s: app.deployedAt / 1000,
          deployed_app_config: app.appConfig,
          source: 'declarative',
          external_scaler_enabled: false,
          deployments,
        };
      }
    }
    return {
      controller_info: { ...node, actor_id: 'c'.repeat(32), actor_name: 'SERVE_CONTROLLER_ACTOR', log_file_path: '/serve/controller.log' },
      proxy_location: (instanceOptions.proxy_location as Json) ?? 'EveryNode',
      http_options: { host: '0.0.0.0', port: 8000, root_path: '', request_timeout_s: null, keep_alive_timeout_s: 90, ...(isObj(instanceOptions.http_options) ? instanceOptions.http_options : {}) },
      grpc_options: { port: 9000, grpc_servicer_functions: [], request_timeout_s: null, ...(isObj(instanceOptions.grpc_options) ? instanceOptions.grpc_options : {}) },
      proxies: { [NODE_ID]: { ...node, actor_id: 'p'.repeat(32), actor_name: `SERVE_PROXY_ACTOR-${NODE_ID}`, log_file_path: '/serve/proxy.log', status: 'HEALTHY' } },
      deploy_mode: 'MULTI_APP',
      target_capacity: targetCapacity,
      target_groups: [],
      applications,
    };
  };

  const authFailure = (headers: http.IncomingHttpHeaders): [number, string] | undefined => {
    if (options.token === undefined) return undefined;
    const header = headers.authorization ?? headers['x-ray-authorization'];
    let presented: string | undefined;
    if (typeof header === 'string' && header !== '') {
      presented = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '\u0000invalid';
    } else {
      const cookie = /(?:^|;\s*)ray-authentication-token=([^;]*)/.exec(headers.cookie ?? '');
      if (cookie !== null) presented = decodeURIComponent(cookie[1]);
    }
    if (presented === undefined) return [401, 'Unauthorized: Missing authentication token'];
    if (presented !== options.token) return [403, 'Forbidden: Invalid authentication token'];
    return undefined;
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, entry: SimulatedRequest): void => {
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      entry.status = status;
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const json = (status: number, body: Json): void => text(status, JSON.stringify(body), 'application/json; charset=utf-8');
    if (stalled) return;
    if (redirect !== undefined) {
      entry.status = 307;
      res.writeHead(307, { location: redirect, 'content-length': 0 });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://simulated');
    const method = req.method ?? 'GET';
    if ((method === 'POST' || method === 'PUT') && url.pathname !== '/api/authenticate' && isSimulatedBrowserRequest(req.headers)) {
      text(405, 'Method Not Allowed for browser traffic.');
      return;
    }
    if (!PUBLIC_PATHS.has(url.pathname)) {
      const failure = authFailure(req.headers);
      if (failure !== undefined) {
        text(failure[0], failure[1]);
        return;
      }
    }
    if (url.pathname === '/api/gcs_healthz' && method === 'GET') return text(200, 'success');
    // Serve's proxy health (port 8000 on a real head): up once Serve runs, as a head's proxy is.
    if (url.pathname === '/-/healthz' && method === 'GET') return started ? text(200, 'success') : text(503, 'no Serve proxy is running');
    if (url.pathname === '/api/authentication_mode' && method === 'GET') {
      return json(200, { authentication_mode: options.token === undefined ? 'disabled' : 'token' });
    }
    if (url.pathname !== SERVE_PATH) return text(404, '404: Not Found');
    step();
    if (method === 'GET') {
      const apiType = url.searchParams.get('api_type');
      if (apiType !== null && apiType !== 'declarative' && apiType !== 'imperative') {
        return text(400, `Invalid 'api_type' value: '${apiType}'. Must be one of ['imperative', 'declarative', 'unknown']`);
      }
      return json(200, details(apiType !== 'imperative'));
    }
    if (method === 'DELETE') {
      started = false;
      targetCapacity = null;
      direction = null;
      accepted = undefined;
      pending = undefined;
      instanceOptions = {};
      apps.clear();
      return text(200, '');
    }
    if (method !== 'PUT') {
      res.setHeader('allow', 'GET,PUT,DELETE');
      return text(405, '405: Method Not Allowed');
    }
    let body: JsonObject;
    try {
      body = validateDeploy(JSON.parse(entry.body) as unknown);
    } catch (err) {
      if (err instanceof SyntaxError) return text(400, `Expecting value: line 1 column 1 (char 0): ${err.message}`);
      return text(400, (err as Error).message);
    }
    const t = now();
    const tc = typeof body.target_capacity === 'number' ? body.target_capacity : null;
    const appNames = (b: JsonObject | undefined): string =>
      JSON.stringify(((b?.applications ?? []) as JsonObject[]).map((a) => (typeof a.name === 'string' ? a.name : 'default')).sort());
    if (appNames(body) !== appNames(accepted)) direction = tc === null ? null : 'UP';
    else if (tc === null) direction = null;
    else if (targetCapacity === null) direction = 'DOWN';
    else if (tc > targetCapacity) direction = 'UP';
    else if (tc < targetCapacity) direction = 'DOWN';
    if (!started) {
      instanceOptions = { proxy_location: body.proxy_location ?? null, http_options: body.http_options ?? null, grpc_options: body.grpc_options ?? null };
    }
    started = true;
    targetCapacity = tc;
    accepted = body;
    pending = { body, applyAt: t + lag };
    step();
    return text(200, '');
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: SimulatedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers }, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(entry);
      handle(req, res, entry);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    targetCapacity: () => targetCapacity,
    config: () => (accepted === undefined ? undefined : (JSON.parse(JSON.stringify(accepted)) as JsonObject)),
    details: () => {
      step();
      return details();
    },
    releaseReplicas: (filter = {}) => {
      step();
      const t = now();
      let released = 0;
      for (const app of apps.values()) {
        if (filter.app !== undefined && app.name !== filter.app) continue;
        for (const dep of app.deployments.values()) {
          if (filter.deployment !== undefined && dep.name !== filter.deployment) continue;
          for (const r of dep.replicas) {
            if (filter.count !== undefined && released >= filter.count) break;
            if (r.state === 'STARTING' && r.readyAt > t) {
              r.readyAt = t;
              released += 1;
            }
          }
        }
      }
      step();
      return released;
    },
    setStalled: (value) => {
      stalled = value;
    },
    setRedirect: (location) => {
      redirect = location;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
