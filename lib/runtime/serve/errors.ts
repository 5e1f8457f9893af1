/** Typed failures of the Ray dashboard client. Messages name the cluster and address, never a token. */

/** A reference to one RayCluster. */
export interface ClusterRef {
  /** RayCluster `metadata.name`. */
  readonly name: string;
  /** RayCluster namespace. */
  readonly namespace: string;
}

/**
 * What went wrong:
 * - `address`: the resolver gave no usable dashboard address (nothing was sent);
 * - `config`: the request could not be built (bad target capacity, config or token);
 * - `network`: connection refused/reset, DNS failure;
 * - `timeout`: no complete answer within the per-request timeout;
 * - `aborted`: the caller's AbortSignal fired;
 * - `redirect`: the dashboard answered 3xx; redirects are never followed;
 * - `unauthorized`: 401, no token was accepted (none configured, or the cluster expects one);
 * - `forbidden`: 403, the configured token was rejected;
 * - `http`: any other non-2xx answer (400 validation, 405 browser check, 5xx, …);
 * - `invalid-response`: a 2xx answer whose body is not Ray's JSON shape.
 */
export type ServeApiErrorKind =
  | 'address'
  | 'config'
  | 'network'
  | 'timeout'
  | 'aborted'
  | 'redirect'
  | 'unauthorized'
  | 'forbidden'
  | 'http'
  | 'invalid-response';

/** Details of a `ServeApiError`. */
export interface ServeApiErrorInit {
  /** What went wrong. */
  readonly kind: ServeApiErrorKind;
  /** The cluster the request was for. */
  readonly cluster: ClusterRef;
  /** Dashboard base address used (or the unusable one the resolver returned). */
  readonly address: string;
  /** HTTP method. */
  readonly method: string;
  /** Request path, e.g. `/api/serve/applications/`. */
  readonly path: string;
  /** HTTP status, when the dashboard answered. */
  readonly status?: number;
  /** Response body excerpt (at most 500 characters, token redacted). */
  readonly body?: string;
  /** Underlying error. */
  readonly cause?: unknown;
}

/** A failed call to the Ray dashboard's Serve REST API. Retries are left to the caller (see `retryable`). */
export class ServeApiError extends Error {
  /** What went wrong. */
  readonly kind: ServeApiErrorKind;
  /** HTTP status, when the dashboard answered. */
  readonly status?: number;
  /** The cluster, as `namespace/name`. */
  readonly cluster: string;
  /** Dashboard base address. */
  readonly address: string;
  /** HTTP method. */
  readonly method: string;
  /** Request path. */
  readonly path: string;
  /** Response body excerpt (token redacted). */
  readonly body?: string;

  /** Builds the error; `detail` is appended to the standard prefix naming cluster, address and request. */
  constructor(init: ServeApiErrorInit, detail: string) {
    const cluster = `${init.cluster.namespace}/${init.cluster.name}`;
    super(`Ray dashboard of cluster ${cluster} at ${init.address}: ${init.method} ${init.path} ${detail}`, {
      cause: init.cause,
    });
    this.name = 'ServeApiError';
    this.kind = init.kind;
    if (init.status !== undefined) this.status = init.status;
    this.cluster = cluster;
    this.address = init.address;
    this.method = init.method;
    this.path = init.path;
    if (init.body !== undefined) this.body = init.body;
  }

  /**
   * A hint for the caller's retry loop: true for network errors, timeouts and 5xx/503/429 answers
   * (transient); false for address/config errors, redirects, auth failures and 4xx validation.
   */
  get retryable(): boolean {
    if (this.kind === 'network' || this.kind === 'timeout') return true;
    return this.kind === 'http' && this.status !== undefined && (this.status >= 500 || this.status === 429);
  }
}
