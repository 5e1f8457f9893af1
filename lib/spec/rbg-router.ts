/**
 * The `router` option of a RoleBasedGroup coordination rule: version-matched prefill/decode routing
 * during a coordinated rollout. rayshift runs one router per release of the rule's prefill and
 * decode roles, each discovering only its release's pods, and splits traffic between the releases'
 * routers with an HTTPRoute, so no request is served by a prefill and a decode of different releases.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import type { ParentReference } from './gateway';
import { dns1123SubdomainProblem } from './names';
import { RBG_RECREATE_POD_UPDATE } from './object-names';
import { ProblemList, show } from './problem';
import { asArray, asObject, isInteger, isObject } from './read';

/** A router implementation rayshift can run per release. */
export type RouterKind = 'sglang';

/** Every `RouterKind`. */
export const ROUTER_KINDS: readonly RouterKind[] = ['sglang'];

/** Defaults of `RouterOptions`. */
export const ROUTER_DEFAULTS = {
  prefill: 'prefill',
  decode: 'decode',
  port: 30000,
  workerPort: 30000,
  bootstrapPort: 8998,
} as const;

/** Version-matched routing for a coordination rule's prefill and decode roles. */
export interface RouterOptions {
  /** The router: `sglang` (sglang-router in PD mode with Kubernetes discovery). */
  readonly kind: RouterKind;
  /** Container image with `python3 -m sglang_router.launch_router` (e.g. an `lmsysorg/sglang` tag). */
  readonly image: string;
  /** The Gateway (listener) the route between the releases' routers attaches to. */
  readonly gateway: ParentReference;
  /** The rule's prefill role. @default "prefill" */
  readonly prefill?: string;
  /** The rule's decode role. @default "decode" */
  readonly decode?: string;
  /** Port each router listens on and its Service exposes. @default 30000 */
  readonly port?: number;
  /** HTTP port of the prefill and decode workers (sglang `--port`). @default 30000 */
  readonly workerPort?: number;
  /** Bootstrap port of the prefill workers (sglang `--disaggregation-bootstrap-port`). @default 8998 */
  readonly bootstrapPort?: number;
  /**
   * During a rollout: the release being rolled from (the `routerRevision` the group had before its
   * templates changed). Its router stays, and the route splits traffic between the two releases'
   * routers; omit it outside a rollout (one router). @default no rollout: one router
   */
  readonly previousRevision?: string;
}

/** `RouterOptions` with every default applied. */
export type ResolvedRouterOptions = Required<Omit<RouterOptions, 'previousRevision'>> & Pick<RouterOptions, 'previousRevision'>;

/** `options` with its defaults (call after `checkRouter` found no error). */
export function resolveRouter(options: RouterOptions): ResolvedRouterOptions {
  return { ...ROUTER_DEFAULTS, ...options };
}

/**
 * The release of a routed pair: the first 10 hex digits of the SHA-256 of the prefill and decode
 * pod templates as given (keys sorted). A change of either template is a new release of both, so
 * both roles roll and every new prefill has new decodes to pair with.
 */
export function routerRevision(prefillTemplate: unknown, decodeTemplate: unknown): string {
  return createHash('sha256').update(canonicalJson({ prefill: prefillTemplate ?? null, decode: decodeTemplate ?? null })).digest('hex').slice(0, 10);
}

/**
 * The name of a rule's router objects: `<group>-<rule>-router`, and `-<revision>` for one release's
 * Deployment and Service. A Service name is a DNS label: `routerNameProblem` says when it is too long.
 */
export function routerName(group: string, rule: string, revision?: string): string {
  return `${group}-${rule}-router${revision !== undefined ? `-${revision}` : ''}`;
}

/** What is wrong with a rule's per-release router names, or undefined (a Service name has at most 63 characters). */
export function routerNameProblem(group: string, rule: string): string | undefined {
  const name = routerName(group, rule, '0'.repeat(10));
  if (name.length <= 63) return undefined;
  return `makes router Services named ${show(name)} (${name.length} characters; the revision is 10 hex digits); allowed: at most 63, so shorten the group or rule name by ${name.length - 63}`;
}

/** A release: the first 10 hex digits of a hash, as `routerRevision` renders it. */
const REVISION = /^[0-9a-f]{10}$/;

/** What `checkRouter` needs of the rule and the group. */
export interface RouterContext {
  /** The rule's roles. */
  readonly ruleRoles: unknown[];
  /** The rule has a rolling update (the only strategy whose releases the router splits). */
  readonly rollingUpdate: boolean;
  /** Who executes the rollout; only rayshift's executors move route weights. */
  readonly executor: string;
  /**
   * Each role's `rollingUpdate.type` as given, by name, where rayshift renders a routed role's with
   * `RecreatePod` (v1alpha2); undefined where it leaves it (v1alpha1).
   */
  readonly roleUpdateTypes?: { readonly [role: string]: unknown };
}

/** Checks a rule's `router` at `at`, adding every problem (field, value, allowed range) to `problems`. */
export function checkRouter(problems: ProblemList, at: string, value: unknown, ctx: RouterContext): void {
  if (!isObject(value)) {
    problems.error(at, `must be a mapping with kind, image and gateway; got ${show(value)}`);
    return;
  }
  if (!ROUTER_KINDS.includes(value.kind as RouterKind)) problems.error(`${at}.kind`, `${show(value.kind)} is not a router kind; allowed: ${ROUTER_KINDS.join(', ')}`);
  if (typeof value.image !== 'string' || value.image.trim() === '') problems.error(`${at}.image`, `must name a container image with sglang_router; got ${show(value.image)}`);
  const gateway = asObject(value.gateway);
  const gwName = gateway.name;
  const gwProblem = typeof gwName === 'string' ? dns1123SubdomainProblem(gwName) : `is required; got ${show(gwName)}`;
  if (!isObject(value.gateway)) problems.error(`${at}.gateway`, `must reference the Gateway the route attaches to ({name, namespace?}); got ${show(value.gateway)}`);
  else if (gwProblem) problems.error(`${at}.gateway.name`, gwProblem);
  const roles = asArray(ctx.ruleRoles);
  const names: Record<string, unknown> = {};
  for (const field of ['prefill', 'decode'] as const) {
    const name = value[field] ?? ROUTER_DEFAULTS[field];
    names[field] = name;
    if (!roles.includes(name)) {
      const given = value[field] === undefined ? ` (the default)` : '';
      problems.error(`${at}.${field}`, `${show(name)}${given} is not a role of this rule; allowed: ${roles.map((r) => show(r)).join(', ')}`);
    }
  }
  if (names.prefill === names.decode) problems.error(`${at}.decode`, `${show(names.decode)} is also the prefill role; prefill and decode must be two roles`);
  const types = ctx.roleUpdateTypes ?? {};
  for (const field of ['prefill', 'decode'] as const) {
    const role = String(names[field]);
    // Own keys only: a role may be named like an Object.prototype member ("constructor" is a DNS label).
    const type = Object.prototype.hasOwnProperty.call(types, role) ? types[role] : undefined;
    if (type !== undefined && type !== RBG_RECREATE_POD_UPDATE) {
      problems.error(`${at}.${field}`, `role ${show(names[field])} sets rollingUpdate.type ${show(type)}; a routed role's Pods are replaced (${RBG_RECREATE_POD_UPDATE}), since a Pod updated in place would stay in its old release's router; allowed: unset or ${show(RBG_RECREATE_POD_UPDATE)}`);
    }
  }
  for (const field of ['port', 'workerPort', 'bootstrapPort'] as const) {
    const port = value[field];
    if (port !== undefined && (!isInteger(port) || port < 1 || port > 65535)) problems.error(`${at}.${field}`, `must be a port, an integer from 1 to 65535; got ${show(port)}`);
  }
  if (value.previousRevision !== undefined && (typeof value.previousRevision !== 'string' || !REVISION.test(value.previousRevision))) {
    problems.error(`${at}.previousRevision`, `must be a router revision, 10 lowercase hex digits (the group's routerRevision before the change); got ${show(value.previousRevision)}`);
  }
  if (!ctx.rollingUpdate) problems.error(at, 'routes the releases of a rolling update; give the rule a rollingUpdate');
  if (ctx.executor === 'rbg') {
    problems.error(at, 'needs a rayshift executor: with executor "rbg" nothing moves the route\'s weights between the releases\' routers as rounds complete; allowed executors: operator, pulumi');
  }
}
