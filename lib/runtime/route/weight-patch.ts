/**
 * The route weight patch: planned so that it touches only what rayshift owns on a route it may share
 * with others (`planWeightPatch`), and written (`writeRouteWeights`): read, plan, JSON-patch, and when
 * the server refuses the patch as a conflict (a `test` op failed because someone moved the route
 * between our read and our write), read again and plan again. The writer takes a minimal injected
 * `RouteClient`; `kubeRouteClient` is the executors' one over the Kubernetes client.
 *
 * HTTPRoute and GRPCRoute `spec.rules` and `rules[].backendRefs` are atomic lists, so a
 * server-side apply or a PUT of the rules would take (or clobber) the whole list, including the
 * rules, filters, matches and backends other writers own (Argo's Gateway API plugin #203/#217).
 * These helpers instead emit a narrow RFC 6902 JSON Patch: one op per weight that changes, an
 * append for a missing managed backend, a remove for a retired one, and `test` ops that make the
 * API server refuse the patch if any index it touches no longer holds what was read.
 *
 * ## Which rule is "the managed rule"
 * 1. With `opts.ruleName`: every rule whose Gateway API `name` equals it (an error if none does).
 * 2. Otherwise: every rule that has at least one backend rayshift owns — a backend of `managed`,
 *    of `opts.remove`, or one `opts.owns` accepts. KubeRay's shape (and `buildServiceRoute`) has
 *    exactly one such rule; a user route that sends several rules to the service gets the same
 *    weights in each of them.
 * 3. A route with no such rule is an error (`RoutePlanError`): rayshift never guesses, because
 *    adding backends to a rule it does not own would steal that rule's traffic.
 * Rules without a rayshift backend, and every unmanaged backend inside a managed rule (including
 * its weight), are never touched.
 *
 * A backend matches a key when it is a core Service (no `group`/`kind`, or `""`/`Service`), has
 * the key's name, and its namespace (defaulting to the route's) equals the key's (same default).
 */
import { asArray, asObject, isInteger } from '../../spec/read';
import { BackendKey, DEFAULT_SERVE_PORT, JsonPatchOp, ManagedBackend, RouteObjectKind } from './types';
import { GRPCROUTE, HTTPROUTE } from '../../spec/object-names';
import type { KubeClient } from '../kube/client';
import { errorStatus, isPatchConflict } from '../kube/errors';
import { jsonPointer } from '../kube/json-pointer';
import { retryOnConflict } from '../kube/retry';

/** How rules are chosen and which backends besides `managed` belong to rayshift. */
export interface RuleSelection {
  /** Manage the rules with this Gateway API rule `name` instead of finding them by their backends. */
  readonly ruleName?: string;
  /**
   * Backends rayshift owned and must take out of the managed rules: the old active cluster's
   * Service after promotion, the pending one's after a rollback.
   */
  readonly remove?: readonly BackendKey[];
  /**
   * Recognises further backends as rayshift's (e.g. every `<service>-xxxxx-serve-svc`): an owned
   * backend of a managed rule that is not in `managed` is removed.
   */
  readonly owns?: (backend: BackendKey) => boolean;
}

/** Options of `planWeightPatch`. */
export interface PlanOptions extends RuleSelection {
  /** Port of a backend added without one. @default 8000 */
  readonly defaultPort?: number;
  /**
   * Extra whole-object guard besides the per-index `test` ops: `generation` refuses the patch
   * after any spec change, `resourceVersion` after any change at all (status included).
   * @default "indices" (only the indices the patch touches are guarded)
   */
  readonly guard?: 'indices' | 'generation' | 'resourceVersion';
}

/** A route could not be planned for (no managed rule, invalid weight, malformed route). */
export class RoutePlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RoutePlanError';
  }
}

/** Largest weight the Gateway API admits. */
const MAX_WEIGHT = 1_000_000;
/** Weight of a backendRef without `weight` (Gateway API default). */
const DEFAULT_WEIGHT = 1;

/** `namespace/name` of a route, for messages. */
export function describeRoute(route: unknown): string {
  const r = asObject(route);
  const m = asObject(r.metadata);
  return `${typeof r.kind === 'string' ? r.kind : 'route'} ${String(m.namespace ?? '')}/${String(m.name ?? '')}`;
}

function routeNamespace(route: unknown): string | undefined {
  const ns = asObject(asObject(route).metadata).namespace;
  return typeof ns === 'string' ? ns : undefined;
}

function rulesOf(route: unknown): unknown[] {
  return asArray(asObject(asObject(route).spec).rules);
}

/** True when backendRef `ref` is the Service `key` (namespaces defaulting to the route's). */
export function backendMatches(ref: unknown, key: BackendKey, routeNs: string | undefined): boolean {
  const r = asObject(ref);
  if (r.group !== undefined && r.group !== '') return false;
  if (r.kind !== undefined && r.kind !== 'Service') return false;
  if (r.name !== key.name) return false;
  const refNs = typeof r.namespace === 'string' ? r.namespace : routeNs;
  return refNs === (key.namespace ?? routeNs);
}

function keyOf(ref: unknown): BackendKey | undefined {
  const r = asObject(ref);
  if ((r.group !== undefined && r.group !== '') || (r.kind !== undefined && r.kind !== 'Service')) return undefined;
  if (typeof r.name !== 'string') return undefined;
  return typeof r.namespace === 'string' ? { name: r.name, namespace: r.namespace } : { name: r.name };
}

/**
 * Indices of the rules rayshift manages on `route` (see the module comment): by `sel.ruleName`,
 * else every rule holding a backend of `keys`, `sel.remove` or `sel.owns`. Empty when none.
 */
export function managedRuleIndices(route: unknown, keys: readonly BackendKey[], sel: RuleSelection = {}): number[] {
  const ns = routeNamespace(route);
  const rules = rulesOf(route);
  const out: number[] = [];
  rules.forEach((rule, i) => {
    const r = asObject(rule);
    if (sel.ruleName !== undefined) {
      if (r.name === sel.ruleName) out.push(i);
      return;
    }
    const owned = asArray(r.backendRefs).some((ref) => isOwned(ref, keys, sel, ns));
    if (owned) out.push(i);
  });
  return out;
}

function isOwned(ref: unknown, keys: readonly BackendKey[], sel: RuleSelection, ns: string | undefined): boolean {
  if (keys.some((k) => backendMatches(ref, k, ns))) return true;
  if ((sel.remove ?? []).some((k) => backendMatches(ref, k, ns))) return true;
  const key = keyOf(ref);
  return key !== undefined && sel.owns !== undefined && sel.owns(key);
}

/**
 * Plans the JSON Patch that gives the managed backends their weights on `route` (an HTTPRoute or
 * GRPCRoute as read from the API server) and nothing else:
 * - an existing managed backend whose weight differs gets one `replace` (or `add` when it had no
 *   `weight`, i.e. the default 1) of its `weight` only — its port, filters and the rest stay;
 * - a managed backend missing from a managed rule is appended to that rule's `backendRefs`
 *   (`{name, namespace?, port, weight}`);
 * - a backend of `opts.remove`, or one `opts.owns` accepts that is not managed, is removed;
 * - every index touched is guarded by a `test` of the backend name at that index; a rule whose
 *   list changes shape (append/remove) is guarded by a `test` of its whole `backendRefs` (so a
 *   concurrent edit of that list makes the server refuse the patch rather than duplicate or drop
 *   a backend); with `opts.ruleName` the rule's name is tested too.
 * Returns `[]` when the route already carries the weights. Throws `RoutePlanError` when no rule is
 * managed, a weight is out of range, or a managed backend is also listed for removal.
 */
export function planWeightPatch(route: unknown, managed: readonly ManagedBackend[], opts: PlanOptions = {}): JsonPatchOp[] {
  const ns = routeNamespace(route);
  const name = describeRoute(route);
  for (const m of managed) {
    if (typeof m.name !== 'string' || m.name === '') throw new RoutePlanError(`${name}: a managed backend needs a Service name; got ${JSON.stringify(m.name)}`);
    if (!isInteger(m.weight) || m.weight < 0 || m.weight > MAX_WEIGHT) {
      throw new RoutePlanError(`${name}: weight of backend ${m.name} must be an integer from 0 to ${MAX_WEIGHT}; got ${JSON.stringify(m.weight)}`);
    }
    if ((opts.remove ?? []).some((k) => sameKey(k, m, ns))) {
      throw new RoutePlanError(`${name}: backend ${m.name} is both managed and listed for removal`);
    }
  }
  const rules = rulesOf(route);
  const indices = managedRuleIndices(route, managed, opts);
  if (indices.length === 0) {
    const wanted = opts.ruleName !== undefined ? `rule named ${JSON.stringify(opts.ruleName)}` : `rule with a backend rayshift owns (${managed.map((m) => m.name).join(', ') || 'none given'})`;
    throw new RoutePlanError(`${name}: spec.rules has no ${wanted}; rayshift only writes to rules it owns (name the rule with ruleName to adopt one)`);
  }

  const tests: JsonPatchOp[] = [];
  const writes: JsonPatchOp[] = [];
  if (opts.guard === 'generation') {
    tests.push({ op: 'test', path: '/metadata/generation', value: asObject(asObject(route).metadata).generation });
  } else if (opts.guard === 'resourceVersion') {
    tests.push({ op: 'test', path: '/metadata/resourceVersion', value: asObject(asObject(route).metadata).resourceVersion });
  }

  for (const i of indices) {
    const rule = asObject(rules[i]);
    const refs = asArray(rule.backendRefs);
    const base = ['spec', 'rules', i, 'backendRefs'] as const;
    const guarded = new Set<number>();
    const replaces: JsonPatchOp[] = [];
    const removes: number[] = [];
    const adds: JsonPatchOp[] = [];

    refs.forEach((ref, j) => {
      const m = managed.find((k) => backendMatches(ref, k, ns));
      if (m !== undefined) {
        const w = asObject(ref).weight;
        if (w === undefined ? m.weight !== DEFAULT_WEIGHT : w !== m.weight) {
          replaces.push({ op: w === undefined ? 'add' : 'replace', path: jsonPointer(...base, j, 'weight'), value: m.weight });
          guarded.add(j);
        }
        return;
      }
      if (isOwned(ref, [], opts, ns)) {
        removes.push(j);
        guarded.add(j);
      }
    });
    for (const m of managed) {
      if (!refs.some((ref) => backendMatches(ref, m, ns))) {
        adds.push({
          op: 'add',
          path: jsonPointer(...base, '-'),
          value: { name: m.name, ...(m.namespace !== undefined ? { namespace: m.namespace } : {}), port: m.port ?? opts.defaultPort ?? DEFAULT_SERVE_PORT, weight: m.weight },
        });
      }
    }
    if (replaces.length === 0 && removes.length === 0 && adds.length === 0) continue;

    if (opts.ruleName !== undefined) tests.push({ op: 'test', path: jsonPointer('spec', 'rules', i, 'name'), value: opts.ruleName });
    if (removes.length > 0 || adds.length > 0) {
      // The list changes shape: refuse the patch if anyone changed it since it was read.
      tests.push(rule.backendRefs === undefined ? { op: 'test', path: jsonPointer('spec', 'rules', i), value: rules[i] } : { op: 'test', path: jsonPointer(...base), value: refs });
    }
    for (const j of [...guarded].sort((a, b) => a - b)) {
      tests.push({ op: 'test', path: jsonPointer(...base, j, 'name'), value: asObject(refs[j]).name });
    }
    writes.push(...replaces);
    // Highest index first, so each removal leaves the indices still to remove in place.
    for (const j of removes.sort((a, b) => b - a)) writes.push({ op: 'remove', path: jsonPointer(...base, j) });
    if (adds.length > 0 && rule.backendRefs === undefined) {
      writes.push({ op: 'add', path: jsonPointer(...base), value: adds.map((a) => (a as { value: unknown }).value) });
    } else {
      writes.push(...adds);
    }
  }
  if (writes.length === 0) return [];
  return [...tests, ...writes];
}

function sameKey(a: BackendKey, b: BackendKey, ns: string | undefined): boolean {
  return a.name === b.name && (a.namespace ?? ns) === (b.namespace ?? ns);
}

/**
 * What the writer needs to read and patch the route `ref` names. Both reject on a non-2xx answer
 * with an error carrying the HTTP status as `status`, `statusCode` or `code` and, when the server
 * sent one, the `Status` object as `body` (or its `details` as `details`, as KubeApiError does).
 */
export interface RouteClient {
  /** GET the route, parsed. */
  get(ref: RouteRef): Promise<unknown>;
  /** PATCH the route with `ops` as a JSON patch (`application/json-patch+json`); resolves to the patched object. */
  patch(ref: RouteRef, ops: readonly JsonPatchOp[]): Promise<unknown>;
}

/** Which route to write. */
export interface RouteRef {
  /** `HTTPRoute` or `GRPCRoute`. */
  readonly kind: RouteObjectKind;
  /** Route namespace. */
  readonly namespace: string;
  /** Route name. */
  readonly name: string;
}

/** Options of `writeRouteWeights`. */
export interface WriteOptions extends PlanOptions {
  /** Attempts (read + patch) before giving up. @default 5 */
  readonly maxAttempts?: number;
  /** Milliseconds to wait before attempt `n` (2, 3, …). @default none */
  readonly backoffMs?: (attempt: number) => number;
}

/** Outcome of `writeRouteWeights`. */
export interface WriteResult {
  /** The route after the write (as the server returned it), or as read when nothing had to change. */
  readonly route: unknown;
  /** The patch that was applied; empty when the route already carried the weights. */
  readonly ops: readonly JsonPatchOp[];
  /** Attempts used (1 when the first patch applied). */
  readonly attempts: number;
}

/** Every attempt was refused because the route kept moving. */
export class RouteWriteConflictError extends Error {
  constructor(
    message: string,
    /** The last refusal. */
    readonly lastError: unknown,
  ) {
    super(message);
    this.name = 'RouteWriteConflictError';
  }
}

/**
 * Gives the managed backends of a live route their weights (see `planWeightPatch` for exactly what
 * is touched), retrying from a fresh read while the server refuses the patch as a conflict. A route
 * that already carries the weights costs one GET and no PATCH.
 */
export async function writeRouteWeights(
  client: RouteClient,
  ref: RouteRef,
  managed: readonly ManagedBackend[],
  opts: WriteOptions = {},
): Promise<WriteResult> {
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
  const backoffMs = opts.backoffMs;
  try {
    return await retryOnConflict(
      async (attempt) => {
        const route = await client.get(ref);
        const ops = planWeightPatch(route, managed, opts);
        if (ops.length === 0) return { route, ops, attempts: attempt };
        return { route: await client.patch(ref, ops), ops, attempts: attempt };
      },
      // retryOnConflict numbers a delay by the attempt that failed; backoffMs by the one it precedes.
      { attempts: maxAttempts, isConflict: isPatchConflict, backoff: (failed) => backoffMs?.(failed + 1) ?? 0 },
    );
  } catch (e) {
    if (!isPatchConflict(e)) throw e;
    throw new RouteWriteConflictError(
      `${ref.kind} ${ref.namespace}/${ref.name}: the route changed under every one of ${maxAttempts} weight patches (each guarded by test ops); last refusal: ${describeError(e)}`,
      e,
    );
  }
}

/** The part of a Kubernetes client the route writer reads and patches through. */
export type RouteKube = Pick<KubeClient, 'get' | 'patchJson'>;

/**
 * The executors' `RouteClient` over a Kubernetes client. `read` is the route as the caller's pass
 * already read it: the first plan is made against it, and only a refused patch reads again.
 */
export function kubeRouteClient(kube: RouteKube, read?: unknown): RouteClient {
  let first = read;
  const typeOf = (ref: RouteRef) => (ref.kind === GRPCROUTE.kind ? GRPCROUTE : HTTPROUTE);
  return {
    get: (ref) => {
      const route = first ?? kube.get(typeOf(ref), ref.name, ref.namespace);
      first = undefined;
      return Promise.resolve(route);
    },
    patch: (ref, ops) => kube.patchJson(typeOf(ref), ref.name, ref.namespace, ops),
  };
}

function describeError(e: unknown): string {
  const body = asObject(asObject(e).body);
  if (typeof body.message === 'string') return `HTTP ${errorStatus(e) ?? '?'} ${body.message}`;
  return e instanceof Error ? e.message : String(e);
}
