import { dns1123SubdomainProblem } from './names';
import { ProblemList, ValidationResult, checkOneOf, show } from './problem';
import { JsonObject, asArray, asObject, isInteger, isObject } from './read';

/** API version of the Gateway API objects rayshift writes. */
export const GATEWAY_API_VERSION = 'gateway.networking.k8s.io/v1';

/** Largest backend weight the Gateway API admits. */
export const MAX_BACKEND_WEIGHT = 1_000_000;

/** How a path is matched (Gateway API `PathMatchType`). */
export type PathMatchType = 'Exact' | 'PathPrefix' | 'RegularExpression';
/** Every path match type. */
export const PATH_MATCH_TYPES: readonly PathMatchType[] = ['Exact', 'PathPrefix', 'RegularExpression'];
/** How a header, query parameter or gRPC method is matched. */
export type ValueMatchType = 'Exact' | 'RegularExpression';
/** Every header, query parameter and gRPC method match type. */
export const VALUE_MATCH_TYPES: readonly ValueMatchType[] = ['Exact', 'RegularExpression'];

/** A reference from a route to the Gateway (listener) it attaches to. */
export interface ParentReference {
  /** Gateway name. */
  readonly name: string;
  /** Gateway namespace. @default the route's namespace */
  readonly namespace?: string;
  /** Listener name. @default every listener that admits the route */
  readonly sectionName?: string;
  /** Listener port. @default every port */
  readonly port?: number;
}

/** A weighted backend (a Service port) of a route rule. */
export interface BackendReference {
  /** Service name. */
  readonly name: string;
  /** Service namespace. @default the route's namespace */
  readonly namespace?: string;
  /** Service port; required for Services. */
  readonly port: number;
  /** Relative share of the rule's traffic, 0–1,000,000. @default 1 */
  readonly weight?: number;
}

/** One listener of a Gateway. */
export interface GatewayListener {
  /** Listener name, unique in the Gateway. */
  readonly name: string;
  /** Protocol: HTTP, HTTPS, TLS, TCP or UDP (or an implementation-specific one). */
  readonly protocol: string;
  /** Port, 1–65535. */
  readonly port: number;
  /** Host name the listener matches. @default every host */
  readonly hostname?: string;
  /** Which routes may attach (`namespaces.from`, `kinds`). @default routes from the same namespace */
  readonly allowedRoutes?: { readonly [key: string]: unknown };
  /** TLS settings for HTTPS/TLS listeners. */
  readonly tls?: { readonly [key: string]: unknown };
}

/** Validates a GatewayClass manifest: its name and a `controllerName` of the form `domain/path`. */
export function validateGatewayClass(manifest: unknown): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  checkObjectName(problems, obj);
  const controller = asObject(obj.spec).controllerName;
  const [domain, ...path] = typeof controller === 'string' ? controller.split('/') : [''];
  if (path.length === 0 || path.join('/').length === 0 || dns1123SubdomainProblem(domain)) {
    problems.error('spec.controllerName', `must be "domain/path" such as "traefik.io/gateway-controller"; got ${show(controller)}`);
  }
  return problems.result();
}

/**
 * Validates a Gateway manifest: class name, and listeners with unique names and valid ports.
 * Returns every problem at once; never throws.
 */
export function validateGateway(manifest: unknown): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  checkObjectName(problems, obj);
  const spec = asObject(obj.spec);
  const cls = spec.gatewayClassName;
  const clsProblem = typeof cls === 'string' ? dns1123SubdomainProblem(cls) : `is required; got ${show(cls)}`;
  if (clsProblem) problems.error('spec.gatewayClassName', clsProblem);
  const listeners = spec.listeners;
  if (!Array.isArray(listeners) || listeners.length === 0 || listeners.length > 64) {
    problems.error('spec.listeners', `must list 1 to 64 listeners; got ${Array.isArray(listeners) ? listeners.length : show(listeners)}`);
  }
  const names = new Set<string>();
  asArray(listeners).forEach((l, i) => {
    const at = `spec.listeners[${i}]`;
    const listener = asObject(l);
    if (typeof listener.name !== 'string' || dns1123SubdomainProblem(listener.name)) {
      problems.error(`${at}.name`, `must be a DNS subdomain; got ${show(listener.name)}`);
    } else if (names.has(listener.name)) {
      problems.error(`${at}.name`, `${show(listener.name)} is already used by another listener`);
    } else {
      names.add(listener.name);
    }
    if (!isInteger(listener.port) || listener.port < 1 || listener.port > 65535) {
      problems.error(`${at}.port`, `must be an integer from 1 to 65535; got ${show(listener.port)}`);
    }
    if (typeof listener.protocol !== 'string' || listener.protocol.length === 0) {
      problems.error(`${at}.protocol`, `is required (HTTP, HTTPS, TLS, TCP or UDP); got ${show(listener.protocol)}`);
    }
  });
  return problems.result();
}

/**
 * Validates an HTTPRoute or GRPCRoute manifest: parent references, at most 16 rules, backends with
 * a name, a port and a weight from 0 to 1,000,000, and the rules' matches as Gateway API's CRD
 * checks them (gRPC service and method names, HTTP paths and methods, header and query parameter
 * matches, at most 64 matches per rule and 128 per route). Returns every problem at once; never throws.
 */
export function validateRoute(manifest: unknown): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
  const grpc = obj.kind === 'GRPCRoute';
  checkObjectName(problems, obj);
  const spec = asObject(obj.spec);
  const parents = spec.parentRefs;
  if (!Array.isArray(parents) || parents.length === 0) {
    problems.warning('spec.parentRefs', 'is empty: a route without a parent Gateway receives no traffic');
  }
  asArray(parents).forEach((p, i) => {
    const ref = asObject(p);
    if (typeof ref.name !== 'string' || dns1123SubdomainProblem(ref.name)) {
      problems.error(`spec.parentRefs[${i}].name`, `must name a Gateway (a DNS subdomain); got ${show(ref.name)}`);
    }
  });
  const rules = spec.rules;
  if (rules !== undefined && (!Array.isArray(rules) || rules.length > 16)) {
    problems.error('spec.rules', `must be a list of at most 16 rules; got ${Array.isArray(rules) ? `${rules.length} rules` : show(rules)}`);
  }
  let matches = 0;
  asArray(rules).forEach((r, i) => {
    matches += checkMatches(problems, `spec.rules[${i}].matches`, asObject(r).matches, grpc);
    const backends = asArray(asObject(r).backendRefs);
    let total = 0;
    let allWeightsValid = true;
    backends.forEach((b, j) => {
      const at = `spec.rules[${i}].backendRefs[${j}]`;
      const backend: JsonObject = isObject(b) ? b : {};
      if (typeof backend.name !== 'string' || backend.name.length === 0) {
        problems.error(`${at}.name`, `is required; got ${show(backend.name)}`);
      }
      const isService = (backend.kind ?? 'Service') === 'Service' && (backend.group ?? '') === '';
      if (isService && (!isInteger(backend.port) || backend.port < 1 || backend.port > 65535)) {
        problems.error(`${at}.port`, `must be an integer from 1 to 65535 for a Service backend; got ${show(backend.port)}`);
      }
      const weight = backend.weight ?? 1;
      if (!isInteger(weight) || weight < 0 || weight > MAX_BACKEND_WEIGHT) {
        problems.error(`${at}.weight`, `must be an integer from 0 to ${MAX_BACKEND_WEIGHT}; got ${show(weight)}`);
        allWeightsValid = false;
      } else {
        total += weight;
      }
    });
    if (backends.length > 0 && allWeightsValid && total === 0) {
      problems.warning(`spec.rules[${i}].backendRefs`, 'all weights are 0: every request this rule matches is answered with an error');
    }
  });
  if (matches > MAX_MATCHES_PER_ROUTE) {
    problems.error('spec.rules', `hold ${matches} matches in all; allowed: at most ${MAX_MATCHES_PER_ROUTE} across the route's rules`);
  }
  return problems.result();
}

/**
 * The route constructs' props the manifest cannot show: `parents` and `rules` left out (they are
 * then left out of the manifest) and a rule without `backendRefs` (Gateway API allows one, but the
 * constructs exist to weight backends). The props' own paths; for JavaScript and jsii callers, whom
 * TypeScript's types do not hold.
 */
export function validateRouteProps(parents: unknown, rules: unknown): ValidationResult {
  const problems = new ProblemList();
  if (!Array.isArray(parents)) {
    problems.error('parents', `is required: the Gateways (Gateway constructs or {name, namespace, sectionName, port} references) the route attaches to; got ${show(parents)}`);
  }
  if (!Array.isArray(rules)) {
    problems.error('rules', `is required: the route's rules, each with its weighted backendRefs; got ${show(rules)}`);
  }
  asArray(rules).forEach((r, i) => {
    if (!isObject(r)) problems.error(`rules[${i}]`, `must be a rule with backendRefs; got ${show(r)}`);
    else if (!Array.isArray(r.backendRefs)) problems.error(`rules[${i}].backendRefs`, `is required: the weighted backends ({name, port, weight}) of the rule; got ${show(r.backendRefs)}`);
  });
  return problems.result();
}

// Gateway API's limits and patterns on route matches, as the pinned CRDs state them (v1.4.0 and v1.6.1;
// v1.2.1 agrees but for GRPCRoute, which it allows 8 matches per rule, not 64).
const MAX_MATCHES_PER_RULE = 64;
const MAX_MATCHES_PER_ROUTE = 128;
const MAX_NAME_VALUE_MATCHES = 16;
const MAX_MATCH_VALUE_LENGTH = 1024;
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];
/** `HTTPHeaderName` (and the gRPC and query parameter names): an RFC 7230 token. */
const HEADER_NAME = { regex: /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/, shown: "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$" };
/** An Exact `GRPCMethodMatch.service` (the CRD's CEL rule; `(?i)` is the `i` flag). */
const GRPC_SERVICE = { regex: /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i, shown: '^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$' };
/** An Exact `GRPCMethodMatch.method` (the CRD's CEL rule). */
const GRPC_METHOD = { regex: /^[A-Za-z_][A-Za-z_0-9]*$/, shown: '^[A-Za-z_][A-Za-z_0-9]*$' };
/** The characters of an Exact or PathPrefix HTTP path (the CRD's CEL rule). */
const HTTP_PATH = { regex: /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/, shown: "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$" };

/**
 * Checks a rule's `matches` at `at` as Gateway API's CRD does, and returns how many count toward the
 * route's limit (an HTTPRoute rule without matches is defaulted to one, PathPrefix "/").
 */
function checkMatches(problems: ProblemList, at: string, value: unknown, grpc: boolean): number {
  if (value === undefined) return grpc ? 0 : 1;
  const matches = asArray(value);
  if (matches.length > MAX_MATCHES_PER_RULE) problems.error(at, `must list at most ${MAX_MATCHES_PER_RULE} matches; got ${matches.length}`);
  matches.forEach((m, j) => {
    const here = `${at}[${j}]`;
    const match = asObject(m);
    if (grpc) {
      checkGrpcMethodMatch(problems, `${here}.method`, match.method);
    } else {
      checkHttpPathMatch(problems, `${here}.path`, match.path);
      if (match.method !== undefined && !HTTP_METHODS.includes(match.method as string)) {
        problems.error(`${here}.method`, `${show(match.method)} is not an HTTP method; allowed: ${HTTP_METHODS.join(', ')}`);
      }
      checkNameValueMatches(problems, `${here}.queryParams`, match.queryParams, 'query parameter', 1024);
    }
    checkNameValueMatches(problems, `${here}.headers`, match.headers, 'header', 4096);
  });
  return matches.length;
}

/**
 * A `GRPCMethodMatch`: service, method or both; with type Exact (the default) each must be a plain
 * gRPC name, as the CRD's CEL rules require (`"my service"`, `"/x"` are refused).
 */
function checkGrpcMethodMatch(problems: ProblemList, at: string, value: unknown): void {
  if (value === undefined) return;
  const m = asObject(value);
  const type = m.type ?? 'Exact';
  checkOneOf(problems, `${at}.type`, type, VALUE_MATCH_TYPES, 'a match type');
  if (m.service === undefined && m.method === undefined) {
    problems.error(at, 'sets neither service nor method; set one or both (a method match of neither is refused; leave out `method` to match every method)');
  }
  const names = [
    ['service', GRPC_SERVICE, 'a gRPC service name (letters, digits and _ in dot-separated parts, e.g. "llm.Generator")'],
    ['method', GRPC_METHOD, 'a gRPC method name (letters, digits and _, without the service or a "/", e.g. "Generate")'],
  ] as const;
  for (const [field, pattern, what] of names) {
    const name = m[field];
    if (name === undefined) continue;
    if (typeof name !== 'string') problems.error(`${at}.${field}`, `must be a string; got ${show(name)}`);
    else if (name.length > MAX_MATCH_VALUE_LENGTH) problems.error(`${at}.${field}`, `is ${name.length} characters long; allowed: at most ${MAX_MATCH_VALUE_LENGTH}`);
    else if (type === 'Exact' && !pattern.regex.test(name)) problems.error(`${at}.${field}`, `${show(name)} is not ${what}: an Exact match must match ${pattern.shown}`);
  }
}

/** An `HTTPPathMatch`: an Exact or PathPrefix path must be a clean absolute path, as the CRD's CEL rules require. */
function checkHttpPathMatch(problems: ProblemList, at: string, value: unknown): void {
  if (value === undefined) return;
  const p = asObject(value);
  const type = p.type ?? 'PathPrefix';
  const path = p.value ?? '/';
  if (!PATH_MATCH_TYPES.includes(type as PathMatchType)) {
    checkOneOf(problems, `${at}.type`, type, PATH_MATCH_TYPES, 'a path match type');
    return;
  }
  if (typeof path !== 'string' || path.length > MAX_MATCH_VALUE_LENGTH) {
    problems.error(`${at}.value`, `must be a path of at most ${MAX_MATCH_VALUE_LENGTH} characters; got ${typeof path === 'string' ? `${path.length} characters` : show(path)}`);
    return;
  }
  if (type === 'RegularExpression') return;
  const reasons = [
    ...(path.startsWith('/') ? [] : ['must start with "/" (an absolute path)']),
    ...['//', '/./', '/../', '%2f', '%2F', '#'].filter((s) => path.includes(s)).map((s) => `must not contain "${s}"`),
    ...['/..', '/.'].filter((s) => path.endsWith(s)).map((s) => `must not end with "${s}"`),
    ...(HTTP_PATH.regex.test(path) ? [] : [`must only contain the characters of ${HTTP_PATH.shown}`]),
  ];
  if (reasons.length > 0) problems.error(`${at}.value`, `${show(path)} ${reasons.join(', ')} in a ${type} match`);
}

/**
 * Header (or query parameter) matches: at most 16, each a token name of at most 256 characters
 * used once, a value of 1 to `maxValue` characters and type Exact or RegularExpression.
 */
function checkNameValueMatches(problems: ProblemList, at: string, value: unknown, what: string, maxValue: number): void {
  if (value === undefined) return;
  const entries = asArray(value);
  if (entries.length > MAX_NAME_VALUE_MATCHES) problems.error(at, `must list at most ${MAX_NAME_VALUE_MATCHES} ${what} matches; got ${entries.length}`);
  const seen = new Map<string, number>();
  entries.forEach((e, k) => {
    const here = `${at}[${k}]`;
    const entry = asObject(e);
    const name = entry.name;
    if (typeof name !== 'string' || name.length > 256 || !HEADER_NAME.regex.test(name)) {
      problems.error(`${here}.name`, `must be a ${what} name of 1 to 256 characters matching ${HEADER_NAME.shown}; got ${show(name)}`);
    } else if (seen.has(name)) {
      problems.error(`${here}.name`, `${show(name)} is already matched by ${at}[${seen.get(name)}]; each name may be matched once`);
    } else {
      seen.set(name, k);
    }
    const v = entry.value;
    if (typeof v !== 'string' || v.length === 0 || v.length > maxValue) {
      problems.error(`${here}.value`, `must be a string of 1 to ${maxValue} characters; got ${typeof v === 'string' ? `${v.length} characters` : show(v)}`);
    }
    checkOneOf(problems, `${here}.type`, entry.type, VALUE_MATCH_TYPES, 'a match type');
  });
}

function checkObjectName(problems: ProblemList, obj: JsonObject): void {
  const name = asObject(obj.metadata).name;
  const p = typeof name === 'string' ? dns1123SubdomainProblem(name) : `is required; got ${show(name)}`;
  if (p) problems.error('metadata.name', p);
}
