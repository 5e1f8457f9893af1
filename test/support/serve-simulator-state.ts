/**
 * The Serve state of the TEST-ONLY Serve simulator (serve-simulator.ts): applications, deployments
 * and replicas, and Ray's state transitions for a `target_capacity` change:
 *
 * - An accepted deploy config (`accept`) is stored at once and its top-level `target_capacity`
 *   echoed; deployments pick the change up after `lag` ms (a stale controller tick).
 * - `target_num_replicas` = Ray's `get_capacity_adjusted_num_replicas` (serve-simulator-capacity.ts)
 *   of `num_replicas`, or the autoscaling bounds `[adj(min) | adj(initial) while the direction is UP,
 *   adj(max)]` applied to a no-load policy decision (`min_replicas`), which reproduces ray#62682.
 * - New replicas are STARTING and turn RUNNING `startDelay` ms later, or only when released
 *   (`releaseReplicas`, with `manual`). Removed ones are STOPPING for `stopDelay` ms. Until the
 *   count is reached a deployment is UPDATING (new or new version) / UPSCALING / DOWNSCALING
 *   ("Upscaling from 1 to 2 replicas.") and its application DEPLOYING; then HEALTHY
 *   (`UPSCALE_COMPLETED`, …) and RUNNING. A version change (import_path, args, runtime_env,
 *   ray_actor_options) starts new replicas and stops the old ones once the new are up.
 * - An import path missing from `code` (or an override naming an unknown deployment) makes the
 *   application DEPLOY_FAILED.
 *
 * State advances lazily (`step`, which every entry point runs), so the simulator owns no timers.
 */
import { simulatedCapacityAdjusted } from './serve-simulator-capacity';
import { SimulatedApplicationCode } from './serve-simulator-code';
import type { SimulatedPlacement } from './serve-simulator-placement';
import { renderSimulatedDetails } from './serve-simulator-details';
import { Json, JsonObject, isObj } from './serve-simulator-json';

/** One simulated replica actor. */
export interface SimReplica {
  readonly id: string;
  state: 'STARTING' | 'RUNNING' | 'STOPPING';
  readonly version: string;
  readyAt: number;
  goneAt: number;
  readonly startTime: number;
  /** The Pod it runs on, with placement (serve-simulator-placement.ts). */
  node?: string;
}

/** A deployment's autoscaling bounds, and the `autoscaling_config` Ray reports for them. */
export interface Autoscaling {
  readonly min: number;
  readonly max: number;
  readonly initial?: number;
  readonly raw: JsonObject;
}

/** One simulated deployment: its config, replica target, status and replicas. */
export interface SimDeployment {
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

/** One simulated application: its config and deployments; `failed` holds a DEPLOY_FAILED message. */
export interface SimApp {
  readonly name: string;
  routePrefix: string | null;
  failed?: string;
  deleting: boolean;
  deployedAt: number;
  appConfig: JsonObject;
  deployments: Map<string, SimDeployment>;
}

function intOr(v: Json | undefined, d: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : d;
}

/** Timing and importable code of a simulated Serve instance (the dashboard options, defaults applied). */
export interface SimulatedServeSettings {
  /** Clock. */
  readonly now: () => number;
  /** Time from a replica's creation to RUNNING. */
  readonly startDelay: number;
  /** Time a removed replica stays STOPPING. */
  readonly stopDelay: number;
  /** Time before deployments reflect an accepted config. */
  readonly lag: number;
  /** Replicas stay STARTING until released. */
  readonly manual: boolean;
  /** Importable application code by import path. */
  readonly code: { readonly [importPath: string]: SimulatedApplicationCode };
  /** Where replicas and proxies run; without it every replica starts at once on one fixed node. */
  readonly placement?: SimulatedPlacement;
}

/** Which replicas `releaseReplicas` starts: all STARTING ones unless narrowed. */
export interface SimulatedReleaseFilter {
  readonly app?: string;
  readonly deployment?: string;
  readonly count?: number;
}

/** The Serve instance of one simulated Ray head. */
export interface SimulatedServeState {
  /** True once a config was accepted (Serve runs), until a reset. */
  started(): boolean;
  /** The top-level `target_capacity` GET would report (null = full capacity or no Serve). */
  targetCapacity(): number | null;
  /** The last accepted deploy config; undefined before the first. */
  accepted(): JsonObject | undefined;
  /** Advances replicas and statuses to the clock's now. */
  step(): void;
  /** Takes a validated deploy config (a PUT), as of now. */
  accept(body: JsonObject): void;
  /** Shuts Serve down (a DELETE). */
  reset(): void;
  /** Starts waiting STARTING replicas now; returns how many. */
  releaseReplicas(filter: SimulatedReleaseFilter): number;
  /** `ServeInstanceDetails` as of the last step; applications only for the declarative API. */
  details(declarative?: boolean): JsonObject;
}

/** A Serve instance that has not started, with `settings`. */
export function createSimulatedServeState(settings: SimulatedServeSettings): SimulatedServeState {
  const { now, startDelay, stopDelay, lag, manual, code, placement } = settings;
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
        // With placement, a replica starts once it is placed (serve-simulator-placement.ts).
        readyAt: manual || placement !== undefined ? Number.POSITIVE_INFINITY : t + startDelay,
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
    const place = () => placement?.place([...apps.values()].flatMap((a) => [...a.deployments.values()].map((d) => d.replicas)), t);
    place();
    for (const dep of [...apps.values()].flatMap((a) => [...a.deployments.values()])) reconcile(dep, t);
    place();
    for (const [name, app] of apps) {
      if (app.deleting && [...app.deployments.values()].every((d) => d.replicas.length === 0)) apps.delete(name);
    }
  };

  return {
    started: () => started,
    targetCapacity: () => targetCapacity,
    accepted: () => accepted,
    step,
    accept: (body) => {
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
    },
    reset: () => {
      started = false;
      targetCapacity = null;
      direction = null;
      accepted = undefined;
      pending = undefined;
      instanceOptions = {};
      apps.clear();
    },
    releaseReplicas: (filter) => {
      step();
      const t = now();
      let released = 0;
      for (const app of apps.values()) {
        if (filter.app !== undefined && app.name !== filter.app) continue;
        for (const dep of app.deployments.values()) {
          if (filter.deployment !== undefined && dep.name !== filter.deployment) continue;
          for (const r of dep.replicas) {
            if (filter.count !== undefined && released >= filter.count) break;
            if (r.state === 'STARTING' && r.readyAt > t && (placement === undefined || r.node !== undefined)) {
              r.readyAt = t;
              released += 1;
            }
          }
        }
      }
      step();
      return released;
    },
    details: (declarative = true) => renderSimulatedDetails({ started, apps, targetCapacity, instanceOptions, ...(placement !== undefined ? { placement } : {}) }, declarative),
  };
}
