/**
 * Pure readings of a `ServeInstanceDetails` (no I/O): whether the capacity asked for by the last
 * PUT is actually serving, and the summary the RayService engine consumes (`ObservedCluster`).
 *
 * "New capacity ready" (ray-local.md §2) is stricter than KubeRay's "every app RUNNING": right after
 * a PUT the dashboard can still show the previous state for a control-loop tick, and a capacity
 * change only flips deployments to UPSCALING/DOWNSCALING once the controller has applied it.
 */
import { JsonObject, asArray, isObject } from '../../spec/read';
import { capacityAdjustedReplicas } from './capacity';
import { ServeDeploymentDetails, ServeInstanceDetails } from './types';

/** What the last PUT asked for. */
export interface CapacityExpectation {
  /** The `target_capacity` sent (integer 0–100), or null when the PUT carried none (full capacity). */
  readonly targetCapacity: number | null;
  /**
   * The Serve config sent (the PUT body, or anything with its `applications[]`). Optional: when
   * given, every application in it must exist and deployments with a fixed `num_replicas` override
   * must target exactly `adj(num_replicas)` (this catches a GET that still shows the old replica
   * targets). Without it the same check uses each deployment's `deployment_config` from the GET.
   */
  readonly config?: unknown;
}

/** The answer of `evaluateCapacityReadiness`. */
export interface CapacityReadiness {
  /** The capacity asked for is serving: echo, app and deployment statuses, and replica counts all agree. */
  readonly ready: boolean;
  /** Replicas in state RUNNING, summed over every deployment of every application. */
  readonly readyReplicas: number;
  /** `target_num_replicas` summed over every deployment of every application. */
  readonly targetReplicas: number;
  /** An application is DEPLOY_FAILED: waiting longer will not help until a new config is PUT. */
  readonly failed: boolean;
  /** Why it is not ready (the first failing check), or a one-line summary when it is. */
  readonly reason: string;
}

/** Replicas of `deployment` in state RUNNING (STARTING/STOPPING/… do not serve). */
export function runningReplicas(deployment: ServeDeploymentDetails): number {
  return deployment.replicas.filter((r) => r.state === 'RUNNING').length;
}

function sameCapacity(actual: number | null, expected: number | null): boolean {
  if (actual === null || expected === null) return actual === expected;
  return Math.abs(actual - expected) < 1e-9;
}

function show(tc: number | null): string {
  return tc === null ? 'null' : String(tc);
}

/** Deployment overrides of the sent config, keyed `app/deployment`. */
function sentOverrides(config: unknown): { apps: string[]; deployments: Map<string, JsonObject> } {
  const apps: string[] = [];
  const deployments = new Map<string, JsonObject>();
  if (!isObject(config)) return { apps, deployments };
  const list = asArray(config.applications);
  list.forEach((app) => {
    if (!isObject(app)) return;
    const name = typeof app.name === 'string' && app.name !== '' ? app.name : list.length === 1 ? 'default' : undefined;
    if (name === undefined) return;
    apps.push(name);
    for (const dep of asArray(app.deployments)) {
      if (isObject(dep) && typeof dep.name === 'string') deployments.set(`${name}/${dep.name}`, dep);
    }
  });
  return { apps, deployments };
}

function intOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/**
 * The replica target the deployment must show at capacity `tc`, when it can be known: a fixed
 * `num_replicas` gives one value; autoscaling gives the bounds `[adj(min), adj(max)]`.
 */
function expectedTarget(
  override: JsonObject | undefined,
  effective: JsonObject | undefined,
  tc: number | null,
): { exact: number } | { min: number; max: number } | undefined {
  const scaling = (cfg: JsonObject | undefined): JsonObject | undefined => {
    if (cfg === undefined) return undefined;
    if (isObject(cfg.autoscaling_config)) return cfg.autoscaling_config;
    if (cfg.num_replicas === 'auto') return { min_replicas: 1, max_replicas: 100 };
    return undefined;
  };
  const fixed = (cfg: JsonObject | undefined): number | undefined =>
    cfg !== undefined && typeof cfg.num_replicas === 'number' && Number.isInteger(cfg.num_replicas) && cfg.num_replicas >= 0
      ? cfg.num_replicas
      : undefined;
  const bounds = (s: JsonObject): { min: number; max: number } => {
    const min = intOr(s.min_replicas, 1);
    const max = Math.max(min, intOr(s.max_replicas, min));
    return { min: capacityAdjustedReplicas(min, tc), max: capacityAdjustedReplicas(max, tc) };
  };
  // A fixed count in the sent override wins: the GET's deployment_config may be a tick behind.
  const sentFixed = fixed(override);
  if (sentFixed !== undefined && scaling(override) === undefined) return { exact: capacityAdjustedReplicas(sentFixed, tc) };
  // Autoscaling bounds: the GET's effective config has every default filled in; prefer it.
  const auto = scaling(effective) ?? scaling(override);
  if (auto !== undefined) return bounds(auto);
  const effFixed = fixed(effective);
  if (effFixed !== undefined) return { exact: capacityAdjustedReplicas(effFixed, tc) };
  return undefined;
}

/**
 * Whether the capacity asked for by the last PUT is serving. Ready only when: the top-level
 * `target_capacity` equals the one sent; at least one application exists (and every application of
 * `expected.config`); every application is RUNNING; every deployment is HEALTHY with RUNNING
 * replicas ≥ `target_num_replicas`, and that target matches `adj(num_replicas, tc)` for fixed
 * deployments or lies within `[adj(min_replicas), adj(max_replicas)]` for autoscaling ones; and no
 * proxy is STARTING or UNHEALTHY (DRAINING proxies, on nodes being removed, are ignored).
 * `readyReplicas`/`targetReplicas` are always computed, ready or not.
 */
export function evaluateCapacityReadiness(details: ServeInstanceDetails, expected: CapacityExpectation): CapacityReadiness {
  const tc = expected.targetCapacity;
  let readyReplicas = 0;
  let targetReplicas = 0;
  for (const app of Object.values(details.applications)) {
    for (const dep of Object.values(app.deployments)) {
      readyReplicas += runningReplicas(dep);
      targetReplicas += dep.target_num_replicas;
    }
  }
  const failedApp = Object.values(details.applications).find((a) => a.status === 'DEPLOY_FAILED');
  const failed = failedApp !== undefined;
  const verdict = (ready: boolean, reason: string): CapacityReadiness => ({
    ready,
    readyReplicas,
    targetReplicas,
    failed,
    reason,
  });

  if (!sameCapacity(details.target_capacity, tc)) {
    return verdict(
      false,
      `target_capacity is ${show(details.target_capacity)}, expected ${show(tc)} (the last PUT is not applied yet)`,
    );
  }
  if (failedApp !== undefined) {
    return verdict(false, `application "${failedApp.name}" is DEPLOY_FAILED: ${failedApp.message || '(no message)'}`);
  }
  const names = Object.keys(details.applications);
  if (names.length === 0) return verdict(false, 'no Serve application exists yet');
  const sent = sentOverrides(expected.config);
  const missing = sent.apps.find((a) => details.applications[a] === undefined);
  if (missing !== undefined) return verdict(false, `application "${missing}" of the sent config does not exist yet`);

  for (const app of Object.values(details.applications)) {
    for (const dep of Object.values(app.deployments)) {
      const at = `deployment "${app.name}/${dep.name}"`;
      const running = runningReplicas(dep);
      if (dep.status !== 'HEALTHY') {
        const msg = dep.message ? ` (${dep.message})` : '';
        return verdict(false, `${at} is ${dep.status}${msg}; ${running}/${dep.target_num_replicas} replicas RUNNING`);
      }
      if (running < dep.target_num_replicas) {
        return verdict(false, `${at} has ${running}/${dep.target_num_replicas} replicas RUNNING`);
      }
      const want = expectedTarget(sent.deployments.get(`${app.name}/${dep.name}`), dep.deployment_config, tc);
      if (want !== undefined && 'exact' in want && dep.target_num_replicas !== want.exact) {
        return verdict(
          false,
          `${at} targets ${dep.target_num_replicas} replicas, expected ${want.exact} at target_capacity ${show(tc)} (not applied yet)`,
        );
      }
      if (want !== undefined && 'min' in want && (dep.target_num_replicas < want.min || dep.target_num_replicas > want.max)) {
        return verdict(
          false,
          `${at} targets ${dep.target_num_replicas} replicas, outside [${want.min}, ${want.max}] at target_capacity ${show(tc)} (not applied yet)`,
        );
      }
    }
  }
  const notRunning = Object.values(details.applications).find((a) => a.status !== 'RUNNING');
  if (notRunning !== undefined) {
    const msg = notRunning.message ? ` (${notRunning.message})` : '';
    return verdict(false, `application "${notRunning.name}" is ${notRunning.status}${msg}`);
  }
  const badProxy = Object.entries(details.proxies).find(([, p]) => p.status !== 'HEALTHY' && p.status !== 'DRAINING');
  if (badProxy !== undefined) return verdict(false, `proxy on node ${badProxy[0]} is ${badProxy[1].status}`);
  return verdict(
    true,
    `target_capacity ${show(tc)} serving: ${readyReplicas}/${targetReplicas} replicas RUNNING in ${names.length} application(s)`,
  );
}

/** The Serve part of the engine's `ObservedCluster`, read from one GET. */
export interface ServeObservation {
  /**
   * Serve's `target_capacity`: null (full capacity) is reported as 100; `undefined` when no
   * application is deployed (no config yet, zero capacity).
   */
  readonly targetCapacity?: number;
  /** At least one application exists and all of them are RUNNING. */
  readonly appsRunning: boolean;
  /** Replicas in state RUNNING, summed over all deployments. */
  readonly readyReplicas: number;
  /** `target_num_replicas` summed over all deployments. */
  readonly targetReplicas: number;
  /** Serve reports the proxy on the head node (where its controller runs) HEALTHY. */
  readonly headProxyHealthy: boolean;
}

/** Summarizes a GET for the engine (`ObservedCluster.targetCapacity/appsRunning/readyReplicas/targetReplicas`). */
export function observeServe(details: ServeInstanceDetails): ServeObservation {
  const apps = Object.values(details.applications);
  let readyReplicas = 0;
  let targetReplicas = 0;
  for (const app of apps) {
    for (const dep of Object.values(app.deployments)) {
      readyReplicas += runningReplicas(dep);
      targetReplicas += dep.target_num_replicas;
    }
  }
  return {
    ...(apps.length > 0 ? { targetCapacity: details.target_capacity ?? 100 } : {}),
    appsRunning: apps.length > 0 && apps.every((a) => a.status === 'RUNNING'),
    readyReplicas,
    targetReplicas,
    headProxyHealthy: details.controllerNodeId !== undefined && details.proxies[details.controllerNodeId]?.status === 'HEALTHY',
  };
}
