/**
 * The subset of Ray Serve's `ServeInstanceDetails` (answer of `GET /api/serve/applications/`) that
 * rayshift reads. Field names are Ray's own (`python/ray/serve/schema.py`), so fixtures can be
 * copied from a real dashboard. Unknown fields are dropped by `parseServeInstanceDetails`; enum
 * values that a newer Ray may add are kept as plain strings.
 */
import { JsonObject, isObject } from '../../spec/read';

/** Application status (`ApplicationStatus`). */
export type ServeApplicationStatus =
  | 'NOT_STARTED'
  | 'DEPLOYING'
  | 'DEPLOY_FAILED'
  | 'RUNNING'
  | 'UNHEALTHY'
  | 'DELETING'
  | (string & {});

/** Deployment status (`DeploymentStatus`); UPSCALING/DOWNSCALING rank like UPDATING. */
export type ServeDeploymentStatus =
  | 'UPDATING'
  | 'HEALTHY'
  | 'UNHEALTHY'
  | 'UPSCALING'
  | 'DOWNSCALING'
  | 'DEPLOY_FAILED'
  | (string & {});

/** Replica state (`ReplicaState`); only `RUNNING` replicas serve traffic. */
export type ServeReplicaState =
  | 'STARTING'
  | 'UPDATING'
  | 'RECOVERING'
  | 'RUNNING'
  | 'STOPPING'
  | 'PENDING_MIGRATION'
  | (string & {});

/** Proxy status (`ProxyStatus`). */
export type ServeProxyStatus = 'STARTING' | 'HEALTHY' | 'UNHEALTHY' | 'DRAINING' | 'DRAINED' | (string & {});

/** One replica of a deployment (`ReplicaDetails`). */
export interface ServeReplicaDetails {
  /** Replica id. */
  readonly replica_id: string;
  /** Replica state. */
  readonly state: ServeReplicaState;
  /** The node's cloud instance id: under KubeRay, the name of the Pod the replica runs on. */
  readonly node_instance_id?: string;
}

/** One deployment of an application (`DeploymentDetails`). */
export interface ServeDeploymentDetails {
  /** Deployment name. */
  readonly name: string;
  /** Deployment status. */
  readonly status: ServeDeploymentStatus;
  /** Why the status last changed (`CONFIG_UPDATE_STARTED`, `UPSCALE_COMPLETED`, `AUTOSCALING`, …). */
  readonly status_trigger?: string;
  /** Human-readable detail, e.g. "Upscaling from 1 to 2 replicas.". */
  readonly message: string;
  /** Replicas Serve is aiming for at the current `target_capacity`. */
  readonly target_num_replicas: number;
  /** Every replica Serve tracks, in any state (STOPPING ones linger). */
  readonly replicas: readonly ServeReplicaDetails[];
  /** The deployment options in effect (`num_replicas` unadjusted by capacity, `autoscaling_config`, …). */
  readonly deployment_config?: JsonObject;
}

/** One application (`ApplicationDetails`). */
export interface ServeApplicationDetails {
  /** Application name. */
  readonly name: string;
  /** Application status. */
  readonly status: ServeApplicationStatus;
  /** Error or progress detail (import errors for DEPLOY_FAILED). */
  readonly message: string;
  /** HTTP route prefix; null when not exposed over HTTP. */
  readonly route_prefix: string | null;
  /** Deployments keyed by name. */
  readonly deployments: { readonly [name: string]: ServeDeploymentDetails };
  /** The application config as last deployed through the REST API, if any. */
  readonly deployed_app_config?: JsonObject | null;
}

/** One proxy (`ProxyDetails`). */
export interface ServeProxyDetails {
  /** Proxy status. */
  readonly status: ServeProxyStatus;
  /** The node's cloud instance id: under KubeRay, the name of the Pod the proxy runs on. */
  readonly node_instance_id?: string;
}

/** The read subset of `ServeInstanceDetails`. */
export interface ServeInstanceDetails {
  /** Top-level `target_capacity` in percent; null means full capacity (or no Serve yet). */
  readonly target_capacity: number | null;
  /** Applications keyed by name; empty when Serve runs nothing (or has not started). */
  readonly applications: { readonly [name: string]: ServeApplicationDetails };
  /** Proxies keyed by node id. */
  readonly proxies: { readonly [nodeId: string]: ServeProxyDetails };
  /**
   * `controller_info.node_id`: the node the Serve controller runs on, which Serve pins to the head
   * node; absent before Serve starts.
   */
  readonly controllerNodeId?: string;
}

/** Thrown by `parseServeInstanceDetails` for a body that does not have Ray's shape; `path` names the field. */
export class ServeShapeError extends Error {
  /** Dotted path of the offending field (`applications.web.deployments.Version.target_num_replicas`). */
  readonly path: string;

  /** Creates the error for `path`. */
  constructor(path: string, message: string) {
    super(`${path === '' ? 'body' : path} ${message}`);
    this.name = 'ServeShapeError';
    this.path = path;
  }
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function objectAt(value: unknown, path: string, optional: boolean): JsonObject {
  if ((value === undefined || value === null) && optional) return {};
  if (!isObject(value)) throw new ServeShapeError(path, `must be an object; got ${kind(value)}`);
  return value;
}

function stringAt(value: unknown, path: string, fallback?: string): string {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string') throw new ServeShapeError(path, `must be a string; got ${kind(value)}`);
  return value;
}

/** An optional string field: absent, null and '' read as absent (Ray reports null before a node is known). */
function optionalStringAt(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return stringAt(value, path);
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function parseDeployment(value: unknown, path: string, key: string): ServeDeploymentDetails {
  const dep = objectAt(value, path, false);
  const target = dep.target_num_replicas;
  if (typeof target !== 'number' || !Number.isInteger(target) || target < 0) {
    throw new ServeShapeError(join(path, 'target_num_replicas'), `must be a non-negative integer; got ${kind(target)}`);
  }
  const replicasRaw = dep.replicas ?? [];
  if (!Array.isArray(replicasRaw)) {
    throw new ServeShapeError(join(path, 'replicas'), `must be an array; got ${kind(replicasRaw)}`);
  }
  const replicas = replicasRaw.map((r, i) => {
    const at = `${join(path, 'replicas')}[${i}]`;
    const rep = objectAt(r, at, false);
    const instance = optionalStringAt(rep.node_instance_id, join(at, 'node_instance_id'));
    return {
      replica_id: stringAt(rep.replica_id, join(at, 'replica_id'), ''),
      state: stringAt(rep.state, join(at, 'state')),
      ...(instance !== undefined ? { node_instance_id: instance } : {}),
    };
  });
  const trigger = dep.status_trigger;
  const config = dep.deployment_config;
  return {
    name: stringAt(dep.name, join(path, 'name'), key),
    status: stringAt(dep.status, join(path, 'status')),
    ...(typeof trigger === 'string' ? { status_trigger: trigger } : {}),
    message: stringAt(dep.message ?? '', join(path, 'message')),
    target_num_replicas: target,
    replicas,
    ...(isObject(config) ? { deployment_config: config } : {}),
  };
}

function parseApplication(value: unknown, path: string, key: string): ServeApplicationDetails {
  const app = objectAt(value, path, false);
  const prefix = app.route_prefix;
  if (prefix !== undefined && prefix !== null && typeof prefix !== 'string') {
    throw new ServeShapeError(join(path, 'route_prefix'), `must be a string or null; got ${kind(prefix)}`);
  }
  const depsPath = join(path, 'deployments');
  const deps = objectAt(app.deployments, depsPath, true);
  const deployments: { [name: string]: ServeDeploymentDetails } = {};
  for (const [name, dep] of Object.entries(deps)) deployments[name] = parseDeployment(dep, join(depsPath, name), name);
  const deployed = app.deployed_app_config;
  return {
    name: stringAt(app.name, join(path, 'name'), key),
    status: stringAt(app.status, join(path, 'status')),
    message: stringAt(app.message ?? '', join(path, 'message')),
    route_prefix: typeof prefix === 'string' ? prefix : null,
    deployments,
    ...(isObject(deployed) || deployed === null ? { deployed_app_config: deployed } : {}),
  };
}

/**
 * Checks and trims a `GET /api/serve/applications/` body to `ServeInstanceDetails`. Accepts the
 * "no Serve yet" body (`applications: {}`, `target_capacity: null`). Throws `ServeShapeError`.
 */
export function parseServeInstanceDetails(body: unknown): ServeInstanceDetails {
  const root = objectAt(body, '', false);
  const tc = root.target_capacity;
  if (tc !== undefined && tc !== null && (typeof tc !== 'number' || !Number.isFinite(tc))) {
    throw new ServeShapeError('target_capacity', `must be a number or null; got ${kind(tc)}`);
  }
  const appsRaw = objectAt(root.applications, 'applications', true);
  const applications: { [name: string]: ServeApplicationDetails } = {};
  for (const [name, app] of Object.entries(appsRaw)) {
    applications[name] = parseApplication(app, join('applications', name), name);
  }
  const proxiesRaw = objectAt(root.proxies, 'proxies', true);
  const proxies: { [nodeId: string]: ServeProxyDetails } = {};
  for (const [node, proxy] of Object.entries(proxiesRaw)) {
    const p = objectAt(proxy, join('proxies', node), false);
    const instance = optionalStringAt(p.node_instance_id, join(join('proxies', node), 'node_instance_id'));
    proxies[node] = { status: stringAt(p.status, join(join('proxies', node), 'status')), ...(instance !== undefined ? { node_instance_id: instance } : {}) };
  }
  const controller = objectAt(root.controller_info, 'controller_info', true);
  const nodeId = controller.node_id;
  if (nodeId !== undefined && nodeId !== null && typeof nodeId !== 'string') throw new ServeShapeError('controller_info.node_id', `must be a string; got ${kind(nodeId)}`);
  return { target_capacity: typeof tc === 'number' ? tc : null, applications, proxies, ...(typeof nodeId === 'string' && nodeId !== '' ? { controllerNodeId: nodeId } : {}) };
}
