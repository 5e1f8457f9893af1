import { parse } from 'yaml';
import { importPathProblem } from './import-path';
import { toPlainYaml } from './plain-yaml';
import { ProblemList, ValidationResult, show } from './problem';
import { asArray, isObject } from './read';

/**
 * One Serve deployment override inside an application. Field names are Ray's own
 * (`ServeDeploySchema`), so configs copied from the Ray docs work unchanged.
 */
export interface ServeDeploymentConfig {
  /** Deployment name as declared in the application code. */
  readonly name: string;
  /** Fixed replica count, or `auto` for the Serve autoscaler. @default from the code */
  readonly num_replicas?: number | 'auto';
  /** Requests one replica may handle at once. @default from the code */
  readonly max_ongoing_requests?: number;
  /** Serve autoscaling settings (`min_replicas`, `max_replicas`, `target_ongoing_requests`, …). */
  readonly autoscaling_config?: { readonly [key: string]: unknown };
  /** Ray actor options (`num_cpus`, `num_gpus`, `resources`, …). */
  readonly ray_actor_options?: { readonly [key: string]: unknown };
  /**
   * Any other Serve deployment option. TypeScript only (jsii languages have no index signatures:
   * set such fields with a JSON patch on the construct's `apiObject`).
   * @jsii ignore
   */
  readonly [key: string]: unknown;
}

/** One Serve application. */
export interface ServeApplicationConfig {
  /** Unique application name. @default "default" when there is only one application */
  readonly name?: string;
  /** Python import path of the bound application or builder, `module.sub:attribute` or `module.sub.attribute` (see `importPathProblem`). */
  readonly import_path: string;
  /** HTTP route prefix; null for gRPC-only apps. @default "/" */
  readonly route_prefix?: string | null;
  /** Ray runtime environment (`working_dir`, `pip`, `env_vars`, …). */
  readonly runtime_env?: { readonly [key: string]: unknown };
  /** Arguments passed to the application builder. */
  readonly args?: { readonly [key: string]: unknown };
  /** Per-deployment overrides. */
  readonly deployments?: ServeDeploymentConfig[];
}

/** The gRPC proxy options of a Serve config (Ray's `gRPCOptionsSchema`). */
export interface ServeGrpcOptions {
  /** Port of the gRPC proxy. @default 9000 */
  readonly port?: number;
  /** Import paths of the `add_*Servicer_to_server` functions of the gRPC services served. @default none */
  readonly grpc_servicer_functions?: string[];
}

/** A Serve config (`serveConfigV2`) as typed applications; serialized to the YAML string the CRD expects. */
export interface ServeConfig {
  /** The applications to run; at least one. */
  readonly applications: ServeApplicationConfig[];
  /** Where HTTP proxies run. @default "EveryNode" */
  readonly proxy_location?: 'EveryNode' | 'HeadOnly' | 'Disabled';
  /** HTTP proxy options (`host`, `port`, `request_timeout_s`, …). */
  readonly http_options?: { readonly [key: string]: unknown };
  /** gRPC proxy options. @default no gRPC proxy */
  readonly grpc_options?: ServeGrpcOptions;
  /** Serve logging options. */
  readonly logging_config?: { readonly [key: string]: unknown };
}

/** Serializes a typed Serve config to the YAML string of `spec.serveConfigV2`. */
export function serializeServeConfig(config: ServeConfig): string {
  return toPlainYaml(config as unknown as Record<string, unknown>);
}

/** Parses `serveConfigV2` YAML; returns the value or the parse error message. */
export function parseServeConfig(yaml: string): { value?: unknown; error?: string } {
  try {
    return { value: parse(yaml) };
  } catch (err) {
    return { error: (err as Error).message.split('\n')[0] };
  }
}

/**
 * Validates a Serve config, given as the YAML string or as typed applications. Paths are
 * relative to the config (`applications[0].import_path`). `capacityManaged` marks configs
 * whose `target_capacity` is driven by an incremental upgrade, where setting it by hand is an error.
 */
export function validateServeConfig(config: unknown, capacityManaged = false): ValidationResult {
  const problems = new ProblemList();
  let value = config;
  if (typeof config === 'string') {
    const parsed = parseServeConfig(config);
    if (parsed.error !== undefined) {
      problems.error('', `is not valid YAML: ${parsed.error}`);
      return problems.result();
    }
    value = parsed.value;
  }
  if (!isObject(value)) {
    problems.error('', `must be a mapping with an "applications" list; got ${show(value)}`);
    return problems.result();
  }
  const apps = value.applications;
  if (!Array.isArray(apps) || apps.length === 0) {
    problems.error('applications', `must list at least one application; got ${show(apps)}`);
    return problems.result();
  }
  const names = new Map<string, number>();
  const prefixes = new Map<string, number>();
  apps.forEach((app, i) => {
    const at = `applications[${i}]`;
    if (!isObject(app)) {
      problems.error(at, `must be a mapping with at least "import_path"; got ${show(app)}`);
      return;
    }
    const importPathError = importPathProblem(app.import_path);
    if (importPathError) problems.error(`${at}.import_path`, importPathError);
    const name = app.name ?? (apps.length === 1 ? 'default' : undefined);
    if (typeof name !== 'string' || name.length === 0) {
      problems.error(`${at}.name`, `is required when there are ${apps.length} applications; got ${show(app.name)}`);
    } else if (names.has(name)) {
      problems.error(`${at}.name`, `${show(name)} is already used by applications[${names.get(name)}]; names must be unique`);
    } else {
      names.set(name, i);
    }
    const prefix = app.route_prefix === undefined ? '/' : app.route_prefix;
    if (prefix !== null) {
      if (typeof prefix !== 'string' || !prefix.startsWith('/')) {
        problems.error(`${at}.route_prefix`, `must start with "/" (or be null for gRPC-only apps); got ${show(prefix)}`);
      } else if (prefixes.has(prefix)) {
        problems.error(`${at}.route_prefix`, `${show(prefix)} is already used by applications[${prefixes.get(prefix)}]; route prefixes must be unique`);
      } else {
        prefixes.set(prefix, i);
      }
    }
    asArray(app.deployments).forEach((dep, j) => {
      if (!isObject(dep) || typeof dep.name !== 'string' || dep.name.length === 0) {
        problems.error(`${at}.deployments[${j}].name`, `every deployment override needs a name; got ${show(isObject(dep) ? dep.name : dep)}`);
      }
    });
  });
  if (capacityManaged && value.target_capacity !== undefined) {
    problems.error(
      'target_capacity',
      `is driven by the incremental upgrade and must not be set by hand; got ${show(value.target_capacity)}`,
    );
  }
  return problems.result();
}
