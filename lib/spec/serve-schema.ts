/**
 * The fields of Ray Serve's config schema (`ray.serve.schema` and `ray.serve.config` of the pinned
 * Ray, 2.60.0): Serve's pydantic models drop a field they do not know without a word, so a typo such
 * as `num_gpu` in `ray_actor_options` gives every replica no GPU, and `num_replica` leaves the
 * replica count to the code. test/e2e/serve-schema.e2e.ts compares these lists with the installed
 * Ray's models.
 */
import { Problem } from './problem';
import { JsonObject, asArray, isObject } from './read';
import { closestFields, didYouMean } from './field-suggestions';

/** The Ray release the field lists are read from. */
export const SERVE_SCHEMA_RAY_VERSION = '2.60.0';

/** Field names of each Serve model that rayshift checks, by model name. */
export const SERVE_SCHEMA_FIELDS: Readonly<Record<string, readonly string[]>> = {
  ServeDeploySchema: ['applications', 'controller_options', 'grpc_options', 'http_options', 'logging_config', 'proxy_location', 'target_capacity', 'tracing_config'],
  ServeApplicationSchema: ['args', 'autoscaling_policy', 'deployments', 'external_scaler_enabled', 'host', 'import_path', 'logging_config', 'name', 'port', 'route_prefix', 'runtime_env'],
  DeploymentSchema: [
    'autoscaling_config', 'backpressure_config', 'deployment_actors', 'gang_scheduling_config', 'graceful_shutdown_timeout_s', 'graceful_shutdown_wait_loop_s',
    'health_check_period_s', 'health_check_timeout_s', 'logging_config', 'max_ongoing_requests', 'max_queued_requests', 'max_replicas_per_node',
    'max_surge_percent', 'name', 'num_replicas', 'placement_group_bundle_label_selector', 'placement_group_bundles', 'placement_group_strategy',
    'ray_actor_options', 'request_router_config', 'rolling_update_percentage', 'user_config',
  ],
  RayActorOptionsSchema: ['accelerator_type', 'fallback_strategy', 'label_selector', 'memory', 'num_cpus', 'num_gpus', 'resources', 'runtime_env'],
  AutoscalingConfig: [
    'aggregation_function', 'downscale_delay_s', 'downscale_smoothing_factor', 'downscale_to_zero_delay_s', 'downscaling_factor', 'initial_replicas',
    'look_back_period_s', 'max_replicas', 'metrics_interval_s', 'min_replicas', 'policy', 'smoothing_factor', 'target_ongoing_requests',
    'upscale_delay_s', 'upscale_smoothing_factor', 'upscaling_factor',
  ],
};

/**
 * The fields of a Serve config (Ray's snake_case names, paths relative to the config) that Serve
 * would ignore: an error when a known field is one edit or two away (a typo), else a warning (a
 * field of another Ray release, say).
 */
export function unknownServeFields(config: JsonObject): Problem[] {
  const problems: Problem[] = [];
  const check = (value: unknown, model: string, at: string) => {
    if (!isObject(value)) return;
    const known = SERVE_SCHEMA_FIELDS[model];
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue;
      const path = at === '' ? key : `${at}.${key}`;
      const close = closestFields(key, known);
      const base = `${JSON.stringify(key)} is not a field of Serve's ${model} (Ray ${SERVE_SCHEMA_RAY_VERSION}), which ignores it`;
      if (close.length > 0) problems.push({ path, message: `${base}; ${didYouMean(close)}`, severity: 'error' });
      else problems.push({ path, message: `${base}; known: ${known.join(', ')}`, severity: 'warning' });
    }
  };
  check(config, 'ServeDeploySchema', '');
  asArray(config.applications).forEach((app, i) => {
    const at = `applications[${i}]`;
    check(app, 'ServeApplicationSchema', at);
    if (!isObject(app)) return;
    asArray(app.deployments).forEach((dep, j) => {
      const d = `${at}.deployments[${j}]`;
      check(dep, 'DeploymentSchema', d);
      if (!isObject(dep)) return;
      check(dep.ray_actor_options, 'RayActorOptionsSchema', `${d}.ray_actor_options`);
      check(dep.autoscaling_config, 'AutoscalingConfig', `${d}.autoscaling_config`);
    });
  });
  return problems;
}
