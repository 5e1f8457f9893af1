/**
 * The `GET /api/serve/applications/` body of the TEST-ONLY Serve simulator (serve-simulator.ts):
 * the simulated Serve state rendered in Ray's `ServeInstanceDetails` shape (ray-local.md §2), with
 * one fixed node (or, with placement, the Pods each replica and proxy runs on), so that clients parse
 * exactly what a real dashboard sends.
 */
import { Json, JsonObject, isObj } from './serve-simulator-json';
import type { SimulatedPlacement } from './serve-simulator-placement';
import type { SimApp } from './serve-simulator-state';

const NODE_ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c';

/** What the details are rendered from. */
export interface SimulatedDetailsView {
  /** False before the first accepted config and after a DELETE: Serve is not running. */
  readonly started: boolean;
  readonly apps: ReadonlyMap<string, SimApp>;
  readonly targetCapacity: number | null;
  /** `proxy_location`, `http_options` and `grpc_options` of the first accepted config. */
  readonly instanceOptions: JsonObject;
  /** Where replicas and proxies run (serve-simulator-placement.ts); one fixed node without it. */
  readonly placement?: SimulatedPlacement;
}

function appStatus(app: SimApp): string {
  if (app.deleting) return 'DELETING';
  if (app.failed !== undefined) return 'DEPLOY_FAILED';
  return [...app.deployments.values()].every((d) => d.status === 'HEALTHY') ? 'RUNNING' : 'DEPLOYING';
}

/** `ServeInstanceDetails` of `view`; applications only for the declarative API (`api_type`). */
export function renderSimulatedDetails(view: SimulatedDetailsView, declarative = true): JsonObject {
  const { started, apps, targetCapacity, instanceOptions, placement } = view;
  if (!started) return { deploy_mode: 'MULTI_APP', controller_info: {}, proxies: {}, applications: {}, target_capacity: null };
  const node = { ...(placement?.head() ?? { node_id: NODE_ID, node_ip: '127.0.0.1' }), worker_id: 'f'.repeat(56) };
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
            ...(placement?.nodeOf(r) ?? {}),
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
    proxies: placement?.proxies() ?? { [NODE_ID]: { ...node, actor_id: 'p'.repeat(32), actor_name: `SERVE_PROXY_ACTOR-${NODE_ID}`, log_file_path: '/serve/proxy.log', status: 'HEALTHY' } },
    deploy_mode: 'MULTI_APP',
    target_capacity: targetCapacity,
    target_groups: [],
    applications,
  };
}
