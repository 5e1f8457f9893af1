import { parse } from 'yaml';
import { importPathProblem } from './import-path';
import { SERVE_CONFIG_LIMITS, serveConfigLimitProblem, valueLimitProblem } from './input-limits';
import { toPlainYaml } from './plain-yaml';
import { ProblemList, ValidationResult, checkOneOf, show } from './problem';
import { asArray, isInteger, isObject } from './read';
import { unknownServeFields } from './serve-schema';

/**
 * One Serve deployment override inside an application: Ray's `DeploymentSchema` fields in
 * camelCase (jsii languages need it); synthesis writes Ray's snake_case names.
 */
export interface ServeDeploymentConfig {
  /** Deployment name as declared in the application code. */
  readonly name: string;
  /** Fixed replica count, or `auto` for the Serve autoscaler (`num_replicas`). @default from the code */
  readonly numReplicas?: number | 'auto';
  /** Requests one replica may handle at once (`max_ongoing_requests`). @default from the code */
  readonly maxOngoingRequests?: number;
  /** Serve autoscaling settings (`autoscaling_config`), in Ray's spelling: `min_replicas`, `max_replicas`, `target_ongoing_requests`, …. @default from the code */
  readonly autoscalingConfig?: { readonly [key: string]: unknown };
  /** Ray actor options (`ray_actor_options`), in Ray's spelling: `num_cpus`, `num_gpus`, `resources`, …. @default from the code */
  readonly rayActorOptions?: { readonly [key: string]: unknown };
  /**
   * Any other Serve deployment option, in Ray's spelling (e.g. `graceful_shutdown_timeout_s`),
   * written unchanged. TypeScript only (jsii languages have no index signatures: use the YAML
   * string form of `serveConfig` for such options).
   * @jsii ignore
   */
  readonly [key: string]: unknown;
}

/** One Serve application (Ray's `ServeApplicationSchema`, camelCase). */
export interface ServeApplicationConfig {
  /** Unique application name. @default "default" when there is only one application */
  readonly name?: string;
  /** Python import path of the bound application or builder, `module.sub:attribute` or `module.sub.attribute` (`import_path`; see `importPathProblem`). */
  readonly importPath: string;
  /** HTTP route prefix (`route_prefix`). @default "/" */
  readonly routePrefix?: string;
  /** Serve the application over gRPC only: no HTTP route (Ray's `route_prefix: null`). @default false */
  readonly httpDisabled?: boolean;
  /** Ray runtime environment (`runtime_env`), in Ray's spelling: `working_dir`, `pip`, `env_vars`, …. @default none */
  readonly runtimeEnv?: { readonly [key: string]: unknown };
  /** Arguments passed to the application builder, written unchanged. @default none */
  readonly args?: { readonly [key: string]: unknown };
  /** Per-deployment overrides. @default none */
  readonly deployments?: ServeDeploymentConfig[];
}

/** The gRPC proxy options of a Serve config (Ray's `gRPCOptionsSchema`). */
export interface ServeGrpcOptions {
  /** Port of the gRPC proxy. @default 9000 */
  readonly port?: number;
  /** Import paths of the `add_*Servicer_to_server` functions of the gRPC services served (`grpc_servicer_functions`). @default none */
  readonly grpcServicerFunctions?: string[];
}

/** Where Serve runs its proxies. */
export type ServeProxyLocation = 'EveryNode' | 'HeadOnly' | 'Disabled';

/** Every proxy location (Ray's `ProxyLocation`). */
export const SERVE_PROXY_LOCATIONS: readonly ServeProxyLocation[] = ['EveryNode', 'HeadOnly', 'Disabled'];

/**
 * A Serve config (`serveConfigV2`) as typed applications, in camelCase; serialized to the YAML
 * string with Ray's snake_case names that the CRD expects. A YAML string in Ray's own format (as
 * in the Ray docs) is accepted by `RayService` too.
 */
export interface ServeConfig {
  /** The applications to run; at least one. */
  readonly applications: ServeApplicationConfig[];
  /** Where HTTP proxies run (`proxy_location`). @default "EveryNode" */
  readonly proxyLocation?: ServeProxyLocation;
  /** HTTP proxy options (`http_options`), in Ray's spelling: `host`, `port`, `request_timeout_s`, …. @default Ray's */
  readonly httpOptions?: { readonly [key: string]: unknown };
  /** gRPC proxy options (`grpc_options`). @default no gRPC proxy */
  readonly grpcOptions?: ServeGrpcOptions;
  /** Serve logging options (`logging_config`), in Ray's spelling. @default Ray's */
  readonly loggingConfig?: { readonly [key: string]: unknown };
}

/** Members in the order given, those that are set. */
function defined(members: [string, unknown][]): Record<string, unknown> {
  return Object.fromEntries(members.filter(([, v]) => v !== undefined));
}

/** A deployment override in Ray's names: known fields in Ray's order, then the other options sorted. */
function wireDeployment(d: ServeDeploymentConfig): Record<string, unknown> {
  const { name, numReplicas, maxOngoingRequests, autoscalingConfig, rayActorOptions, ...rest } = d;
  const known = defined([
    ['name', name],
    ['num_replicas', numReplicas],
    ['max_ongoing_requests', maxOngoingRequests],
    ['autoscaling_config', autoscalingConfig],
    ['ray_actor_options', rayActorOptions],
  ]);
  return { ...known, ...defined(Object.keys(rest).sort().map((k) => [k, rest[k]])) };
}

/**
 * A typed Serve config in Ray's snake_case names, as `serveConfigV2` carries it. Keys come in Ray's
 * schema order whatever order the props were written in, so TypeScript and jsii languages (which
 * pass struct fields in their own order) synthesize the same text; maps given in Ray's spelling
 * (`runtimeEnv`, `args`, …) are written unchanged.
 */
export function toWireServeConfig(config: ServeConfig): Record<string, unknown> {
  return defined([
    ['proxy_location', config.proxyLocation],
    ['http_options', config.httpOptions],
    [
      'grpc_options',
      config.grpcOptions && defined([
        ['port', config.grpcOptions.port],
        ['grpc_servicer_functions', config.grpcOptions.grpcServicerFunctions],
      ]),
    ],
    ['logging_config', config.loggingConfig],
    [
      'applications',
      // Required by the type, but a JavaScript caller may leave it out or pass another
      // type: what is not a list (or an entry not a mapping) is written as given, and validation names it.
      mapList(config.applications, (a) =>
        defined([
          ['name', a.name],
          ['route_prefix', a.httpDisabled === true ? null : a.routePrefix],
          ['import_path', a.importPath],
          ['runtime_env', a.runtimeEnv],
          ['args', a.args],
          ['deployments', mapList(a.deployments, wireDeployment)],
        ]),
      ),
    ],
  ]);
}

/** `f` of each mapping of a list; anything else (not a list, an entry not a mapping) as given. */
function mapList<T>(list: readonly T[] | undefined, f: (item: T) => unknown): unknown {
  return Array.isArray(list) ? list.map((item) => (isObject(item) ? f(item as T) : item)) : list;
}

/** Problems of a typed config that its wire form cannot show: `httpDisabled` with a `routePrefix`. */
export function typedServeConfigProblems(config: ServeConfig): ValidationResult {
  const problems = new ProblemList();
  asArray(config.applications).forEach((a, i) => {
    if (isObject(a) && a.httpDisabled === true && a.routePrefix !== undefined) {
      problems.error(`applications[${i}].routePrefix`, `must be unset when httpDisabled is true (the application gets no HTTP route); got ${show(a.routePrefix)}`);
    }
  });
  return problems.result();
}

/** Serializes a typed Serve config to the YAML string of `spec.serveConfigV2`. */
export function serializeServeConfig(config: ServeConfig): string {
  return toPlainYaml(toWireServeConfig(config));
}

/**
 * Parses `serveConfigV2` YAML within `SERVE_CONFIG_LIMITS` (size, depth, nodes and aliases, measured
 * before the text is parsed); returns the value, or what is wrong with the text as a problem
 * description (`is not valid YAML: …`, `is 2600000 bytes, more than the limit of 65536 bytes`).
 */
export function parseServeConfig(yaml: string): { value?: unknown; error?: string } {
  const limit = serveConfigLimitProblem(yaml);
  if (limit !== undefined) return { error: limit };
  let value: unknown;
  try {
    // yaml's own alias guard (`maxAliasCount`) counts nested aliases over and over and refused
    // configs well within the limits (18 aliases expanding to 2,047 nodes). It is not needed: the
    // scan above bounds the text and its aliases, an alias parses to a reference to its anchor's
    // value (no copy), and `valueLimitProblem` below counts the expansion exactly, stopping at the
    // node limit.
    value = parse(yaml, { maxAliasCount: -1 });
  } catch (err) {
    return { error: `is not valid YAML: ${(err as Error).message.split('\n')[0]}` };
  }
  const shape = valueLimitProblem(value, SERVE_CONFIG_LIMITS);
  return shape === undefined ? { value } : { error: shape };
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
      problems.error('', parsed.error);
      return problems.result();
    }
    value = parsed.value;
  }
  if (!isObject(value)) {
    problems.error('', `must be a mapping with an "applications" list; got ${show(value)}`);
    return problems.result();
  }
  checkOneOf(problems, 'proxy_location', value.proxy_location, SERVE_PROXY_LOCATIONS, 'a proxy location');
  const unknown = unknownServeFields(value);
  problems.addAll({ errors: unknown.filter((p) => p.severity === 'error'), warnings: unknown.filter((p) => p.severity === 'warning') });
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
      // Ray's DeploymentSchema: a non-negative integer or "auto" (the Serve autoscaler).
      const replicas = isObject(dep) ? dep.num_replicas : undefined;
      if (replicas !== undefined && replicas !== null && replicas !== 'auto' && !(isInteger(replicas) && replicas >= 0)) {
        problems.error(`${at}.deployments[${j}].num_replicas`, `must be an integer ≥ 0 or "auto"; got ${show(replicas)}`);
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
