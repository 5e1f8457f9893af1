/**
 * Writes managed weights to a live route through a minimal injected client: read, plan, JSON-patch,
 * and when the server refuses the patch because a `test` op failed (someone moved the route between
 * our read and our write), read again and plan again. Decoupled from any Kubernetes client library.
 */
import { asObject, isObject } from '../../spec/read';
import { WriteRefusal, isWriteConflict } from '../../engine/write-refusal';
import { sleep } from '../kube/retry';
import { PlanOptions, planWeightPatch } from './plan';
import { JsonPatchOp, ManagedBackend, RouteObjectKind } from './types';

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

/** HTTP status of a client error (`status`, `statusCode`, `code`, or `body.code`), if any. */
export function errorStatus(error: unknown): number | undefined {
  if (!isObject(error) && !(error instanceof Error)) return undefined;
  const e = error as unknown as Record<string, unknown>;
  for (const v of [e.status, e.statusCode, e.code, asObject(e.body).code, asObject(e.response).statusCode]) {
    if (typeof v === 'number') return v;
  }
  return undefined;
}

/**
 * The API server's refusal of a write (an HTTP error with a status), in the engine's terms; undefined
 * for anything else (a connection error, a bug).
 */
export function writeRefusalOf(error: unknown): WriteRefusal | undefined {
  const status = errorStatus(error);
  if (status === undefined) return undefined;
  const e = asObject(error);
  const causes = [asObject(asObject(e.body).details).causes, asObject(e.details).causes].find((c) => Array.isArray(c) && c.length > 0);
  return { status, fieldCauses: Array.isArray(causes) ? causes.length : 0 };
}

/** True when the API server refused a patch because the object moved (the engine's `isWriteConflict`). */
export function isPatchConflict(error: unknown): boolean {
  return isWriteConflict(writeRefusalOf(error));
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
  let lastError: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (attempt > 1 && opts.backoffMs) {
      const ms = opts.backoffMs(attempt);
      if (ms > 0) await sleep(ms);
    }
    const route = await client.get(ref);
    const ops = planWeightPatch(route, managed, opts);
    if (ops.length === 0) return { route, ops, attempts: attempt };
    try {
      const patched = await client.patch(ref, ops);
      return { route: patched, ops, attempts: attempt };
    } catch (e) {
      if (!isPatchConflict(e)) throw e;
      lastError = e;
    }
  }
  throw new RouteWriteConflictError(
    `${ref.kind} ${ref.namespace}/${ref.name}: the route changed under every one of ${maxAttempts} weight patches (each guarded by test ops); last refusal: ${describeError(lastError)}`,
    lastError,
  );
}

function describeError(e: unknown): string {
  const body = asObject(asObject(e).body);
  if (typeof body.message === 'string') return `HTTP ${errorStatus(e) ?? '?'} ${body.message}`;
  return e instanceof Error ? e.message : String(e);
}
