import { dns1123SubdomainProblem } from './names';
import { ProblemList, ValidationResult, show } from './problem';
import { JsonObject, asArray, asObject, isInteger, isObject } from './read';

/** API version of the Gateway API objects rayshift writes. */
export const GATEWAY_API_VERSION = 'gateway.networking.k8s.io/v1';

/** Largest backend weight the Gateway API admits. */
export const MAX_BACKEND_WEIGHT = 1_000_000;

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
 * Validates an HTTPRoute or GRPCRoute manifest: parent references, at most 16 rules, and backends
 * with a name, a port and a weight from 0 to 1,000,000. Returns every problem at once; never throws.
 */
export function validateRoute(manifest: unknown): ValidationResult {
  const problems = new ProblemList();
  const obj = asObject(manifest);
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
  asArray(rules).forEach((r, i) => {
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
  return problems.result();
}

function checkObjectName(problems: ProblemList, obj: JsonObject): void {
  const name = asObject(obj.metadata).name;
  const p = typeof name === 'string' ? dns1123SubdomainProblem(name) : `is required; got ${show(name)}`;
  if (p) problems.error('metadata.name', p);
}
