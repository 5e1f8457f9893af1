/**
 * Typed errors of the Kubernetes client. Messages name the operation (method and path) and the API
 * server's own `Status` message; they never include request headers, tokens or client certificates.
 * `writeRefusalOf` reads any client's HTTP error as a `WriteRefusal`, which the engine's
 * `isWriteConflict` judges (`isPatchConflict`), for every writer that re-reads on a conflict.
 */
import { WriteRefusal, isWriteConflict } from '../../engine/write-refusal';
import { asObject, isObject } from '../../spec/read';

/** One `Status.details.causes[]` entry (e.g. a failed validation rule). */
export interface StatusCause {
  /** Machine-readable reason, e.g. `FieldValueInvalid`. */
  readonly reason?: string;
  /** Human-readable message. */
  readonly message?: string;
  /** The field path, e.g. `spec.rules[0].backendRefs[0].weight`. */
  readonly field?: string;
}

/** A Kubernetes `Status` object as returned by the API server on failure. */
export interface KubeStatus {
  readonly kind?: 'Status';
  readonly apiVersion?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly uid?: string;
    readonly causes?: readonly StatusCause[];
    readonly retryAfterSeconds?: number;
  };
}

/** An HTTP error answer of the API server (status >= 400), or a `Status` sent as a watch `ERROR` event. */
export class KubeApiError extends Error {
  /** HTTP status code (e.g. 404, 409, 410, 403). */
  readonly statusCode: number;
  /** `Status.reason` (e.g. `NotFound`, `Conflict`, `AlreadyExists`, `Forbidden`, `Expired`, `Invalid`), or `Unknown`. */
  readonly reason: string;
  /** The API server's message (or the response text when it sent no `Status`). */
  readonly serverMessage: string;
  /** `Status.details`, when present (causes of `Invalid`, `retryAfterSeconds`, ...). */
  readonly details?: KubeStatus['details'];
  /** HTTP method of the failed request. */
  readonly method: string;
  /** Path of the failed request, without the query string. */
  readonly path: string;

  constructor(args: { statusCode: number; reason?: string; message?: string; details?: KubeStatus['details']; method: string; path: string }) {
    const reason = args.reason || defaultReason(args.statusCode);
    const serverMessage = args.message ?? '';
    const p = args.path.split('?')[0];
    super(`${args.method} ${p}: HTTP ${args.statusCode} ${reason}${serverMessage ? `: ${serverMessage}` : ''}`);
    this.name = 'KubeApiError';
    this.statusCode = args.statusCode;
    this.reason = reason;
    this.serverMessage = serverMessage;
    if (args.details) this.details = args.details;
    this.method = args.method;
    this.path = p;
  }

  /** Builds the error from a response body (a `Status` object, other JSON, or text). */
  static fromResponse(method: string, path: string, statusCode: number, body: unknown): KubeApiError {
    const st = asStatus(body);
    if (st) {
      return new KubeApiError({ statusCode: st.code && st.code >= 400 ? st.code : statusCode, reason: st.reason, message: st.message, details: st.details, method, path });
    }
    const text = typeof body === 'string' ? body.trim().slice(0, 500) : '';
    return new KubeApiError({ statusCode, message: text, method, path });
  }

  /** True for 404 Not Found. */
  get isNotFound(): boolean {
    return this.statusCode === 404;
  }
  /** True for a 409 with reason `Conflict` (stale resourceVersion or an SSA field conflict), not `AlreadyExists`. */
  get isConflict(): boolean {
    return this.statusCode === 409 && this.reason === 'Conflict';
  }
  /** True for 409 `AlreadyExists` (create of an existing name). */
  get isAlreadyExists(): boolean {
    return this.statusCode === 409 && this.reason === 'AlreadyExists';
  }
  /** True for 410 Gone / `Expired` (resourceVersion too old, expired continue token). */
  get isGone(): boolean {
    return this.statusCode === 410;
  }
  /** True for 403 Forbidden. */
  get isForbidden(): boolean {
    return this.statusCode === 403;
  }
  /** True for 401 Unauthorized. */
  get isUnauthorized(): boolean {
    return this.statusCode === 401;
  }
  /** True for 422 `Invalid` (schema, CEL rule or JSON patch `test` failure) and other 422s. */
  get isInvalid(): boolean {
    return this.statusCode === 422;
  }

  /** A plain view for structured logs (no request headers exist on this object to leak). */
  toJSON(): Record<string, unknown> {
    return { name: this.name, statusCode: this.statusCode, reason: this.reason, message: this.serverMessage, method: this.method, path: this.path };
  }
}

/** A network-level failure (connection refused/reset, TLS, timeout) talking to the API server. */
export class KubeConnectionError extends Error {
  /** The Node.js error code, e.g. `ECONNREFUSED`, `ECONNRESET`, `ETIMEDOUT`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`. */
  readonly code: string;
  /** HTTP method of the failed request. */
  readonly method: string;
  /** Path of the failed request, without the query string. */
  readonly path: string;

  constructor(method: string, path: string, cause: unknown) {
    const e = cause as NodeJS.ErrnoException;
    const code = e?.code ?? 'UNKNOWN';
    const p = path.split('?')[0];
    super(`${method} ${p}: ${code}: ${e?.message ?? String(cause)}`);
    this.name = 'KubeConnectionError';
    this.code = code;
    this.method = method;
    this.path = p;
  }
}

/** `resolve()` found no resource of that kind in the group/version (CRD missing or not yet served). */
export class UnknownKindError extends Error {
  constructor(apiVersion: string, kind: string) {
    super(`the API server serves no resource of kind ${kind} in ${apiVersion} (is its CRD installed?)`);
    this.name = 'UnknownKindError';
  }
}

/** True when `e` is a `KubeApiError` with the given HTTP status code. */
export function isStatus(e: unknown, statusCode: number): e is KubeApiError {
  return e instanceof KubeApiError && e.statusCode === statusCode;
}

/** True when `e` is a 404 `KubeApiError`. */
export function isNotFound(e: unknown): e is KubeApiError {
  return e instanceof KubeApiError && e.isNotFound;
}

/** True when `e` is a 409 `Conflict` `KubeApiError` (what `retryOnConflict` retries). */
export function isConflict(e: unknown): e is KubeApiError {
  return e instanceof KubeApiError && e.isConflict;
}

/** Returns `body` as a `Status` when it is one. */
export function asStatus(body: unknown): KubeStatus | undefined {
  if (body && typeof body === 'object' && (body as { kind?: unknown }).kind === 'Status') return body as KubeStatus;
  return undefined;
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

function defaultReason(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'Unknown';
  }
}
