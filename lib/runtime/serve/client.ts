/**
 * Client for the Ray dashboard's Serve REST API (`/api/serve/applications/`), the calls KubeRay makes
 * (kuberay.md §4) plus the replica counts rayshift waits on.
 *
 * - Plain `node:http`/`node:https` with an explicit, minimal header set. Node's global `fetch`
 *   (undici) always adds `sec-fetch-mode`, which the dashboard's browser check answers with
 *   405 "Method Not Allowed for browser traffic." on every PUT/POST.
 * - Requests go only to the address the `DashboardResolver` returns. No redirect is followed (a 3xx
 *   answer is a `redirect` error), so the token is never sent anywhere else.
 * - One attempt per call, bounded by a timeout (default 5 s); retries are the caller's decision
 *   (`ServeApiError.retryable`). The first PUT on a fresh cluster blocks while the Serve controller
 *   starts (several seconds); pass a longer `timeoutMs` for it, or retry (the PUT is idempotent).
 */
import type * as http from 'node:http';
import { parse as parseYaml } from 'yaml';
import { JsonObject, isObject } from '../../spec/read';
import { BoundedAnswer, BoundedRequestError, boundedRequest } from '../net/bounded-request';
import type { ConnectionPool } from '../net/connection-pool';
import { ClusterRef, ServeApiError, ServeApiErrorKind } from './errors';
import { CapacityReadiness, evaluateCapacityReadiness } from './readiness';
import { DashboardResolver, defaultDashboardResolver } from './resolver';
import { ServeInstanceDetails, ServeShapeError, parseServeInstanceDetails } from './types';

/** Path of the Serve applications resource; the trailing slash is part of Ray's route. */
export const SERVE_APPLICATIONS_PATH = 'api/serve/applications/';

/** Header KubeRay uses for token auth (`RAY_AUTH_MODE=token`). */
export const RAY_AUTH_HEADER = 'x-ray-authorization';

/** Default per-request timeout. */
export const DEFAULT_SERVE_TIMEOUT_MS = 5000;

const USER_AGENT = 'rayshift-serve-client';
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

/** Where the client gets a cluster's dashboard token: a fixed string, or a per-cluster lookup (e.g. a Secret). */
export type TokenSource = string | ((cluster: ClusterRef) => string | undefined | Promise<string | undefined>);

/** Options of `ServeDashboardClient`. */
export interface ServeDashboardClientOptions {
  /** Maps clusters to dashboard addresses. @default defaultDashboardResolver() */
  readonly resolver?: DashboardResolver;
  /** Token for `x-ray-authorization: Bearer …`; omit for clusters without token auth. */
  readonly token?: TokenSource;
  /** Per-request timeout in milliseconds (connect to last body byte). @default 5000 */
  readonly timeoutMs?: number;
  /** CA bundle for `https:` dashboards. */
  readonly ca?: string | Buffer;
  /** Keep-alive connections to the dashboards (an operator's, shared by its passes). @default none: every request opens its own connection */
  readonly pool?: ConnectionPool;
}

/** Per-call options. */
export interface ServeRequestOptions {
  /** Overrides the client's timeout for this call. */
  readonly timeoutMs?: number;
  /** Cancels the call. */
  readonly signal?: AbortSignal;
}

/** The JSON body of a `PUT /api/serve/applications/` (`ServeDeploySchema`). */
export type ServeDeployBody = JsonObject;

/**
 * Turns a Serve config (the `serveConfigV2` YAML string or its parsed object) into the PUT body:
 * a JSON copy with the top-level `target_capacity` set to `targetCapacity` (integer 0–100), or
 * without it when `targetCapacity` is null (Serve then resets it to null = full capacity; this is
 * how to clear ray#62682's sticky 100). A `target_capacity` already in the config is replaced.
 * Throws `RangeError`/`TypeError` naming the field, value and allowed range.
 */
export function buildServeDeployBody(serveConfig: string | object, targetCapacity: number | null): ServeDeployBody {
  if (targetCapacity !== null && (!Number.isInteger(targetCapacity) || targetCapacity < 0 || targetCapacity > 100)) {
    throw new RangeError(`target_capacity must be an integer between 0 and 100 (or null to omit it); got ${targetCapacity}`);
  }
  let value: unknown = serveConfig;
  if (typeof serveConfig === 'string') {
    try {
      value = parseYaml(serveConfig);
    } catch (err) {
      throw new TypeError(`serveConfigV2 is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  if (!isObject(value) || !Array.isArray(value.applications)) {
    throw new TypeError('serveConfigV2 must be a mapping with an "applications" list');
  }
  const body = JSON.parse(JSON.stringify(value)) as JsonObject;
  delete body.target_capacity;
  if (targetCapacity !== null) body.target_capacity = targetCapacity;
  return body;
}

interface Target {
  readonly address: string;
  readonly url: URL;
}

type RawAnswer = BoundedAnswer;

/** Talks to the Serve REST API of Ray dashboards; one instance serves any number of clusters. */
export class ServeDashboardClient {
  private readonly resolver: DashboardResolver;
  private readonly token?: TokenSource;
  private readonly timeoutMs: number;
  private readonly ca?: string | Buffer;
  private readonly pool?: ConnectionPool;

  /** Creates a client; nothing is sent until a method is called. */
  constructor(options: ServeDashboardClientOptions = {}) {
    const timeout = options.timeoutMs ?? DEFAULT_SERVE_TIMEOUT_MS;
    if (!Number.isFinite(timeout) || timeout <= 0) {
      throw new RangeError(`timeoutMs must be a positive number of milliseconds; got ${timeout}`);
    }
    this.resolver = options.resolver ?? defaultDashboardResolver();
    if (options.token !== undefined) this.token = options.token;
    this.timeoutMs = timeout;
    if (options.ca !== undefined) this.ca = options.ca;
    if (options.pool !== undefined) this.pool = options.pool;
  }

  /** The dashboard base address the client will use for `cluster` (validated; nothing is sent). */
  async dashboardAddress(cluster: ClusterRef): Promise<string> {
    return (await this.target(cluster, 'GET', `/${SERVE_APPLICATIONS_PATH}`)).address;
  }

  /** `GET /api/serve/applications/?api_type=declarative`, checked and trimmed to `ServeInstanceDetails`. */
  async getServeDetails(cluster: ClusterRef, options: ServeRequestOptions = {}): Promise<ServeInstanceDetails> {
    const pathAndQuery = `${SERVE_APPLICATIONS_PATH}?api_type=declarative`;
    const { answer, target, path } = await this.send(cluster, 'GET', pathAndQuery, undefined, options);
    let json: unknown;
    try {
      json = JSON.parse(answer.body);
    } catch {
      throw this.error(
        { kind: 'invalid-response', cluster, address: target.address, method: 'GET', path, status: answer.status },
        `answered ${answer.status} with a body that is not JSON`,
      );
    }
    try {
      return parseServeInstanceDetails(json);
    } catch (err) {
      if (!(err instanceof ServeShapeError)) throw err;
      throw this.error(
        { kind: 'invalid-response', cluster, address: target.address, method: 'GET', path, status: answer.status, cause: err },
        `answered ${answer.status} with a body that is not ServeInstanceDetails: ${err.message}`,
      );
    }
  }

  /**
   * `PUT /api/serve/applications/` with the config and `target_capacity` (see `buildServeDeployBody`).
   * Resolves with the body sent once the dashboard accepted it (2xx); Serve applies it asynchronously,
   * so wait with `evaluateCapacityReadiness(details, { targetCapacity, config: body })`.
   */
  async putServeConfig(
    cluster: ClusterRef,
    serveConfig: string | object,
    targetCapacity: number | null,
    options: ServeRequestOptions = {},
  ): Promise<ServeDeployBody> {
    let body: ServeDeployBody;
    try {
      body = buildServeDeployBody(serveConfig, targetCapacity);
    } catch (err) {
      const target = await this.target(cluster, 'PUT', `/${SERVE_APPLICATIONS_PATH}`);
      throw this.error(
        { kind: 'config', cluster, address: target.address, method: 'PUT', path: target.url.pathname, cause: err },
        `was not sent: ${(err as Error).message}`,
      );
    }
    await this.send(cluster, 'PUT', SERVE_APPLICATIONS_PATH, JSON.stringify(body), options);
    return body;
  }

  /** GET, then `evaluateCapacityReadiness` against what the last PUT asked for. */
  async getCapacityReadiness(
    cluster: ClusterRef,
    expected: { readonly targetCapacity: number | null; readonly config?: unknown },
    options: ServeRequestOptions = {},
  ): Promise<CapacityReadiness & { readonly details: ServeInstanceDetails }> {
    const details = await this.getServeDetails(cluster, options);
    return { ...evaluateCapacityReadiness(details, expected), details };
  }

  private error(init: ConstructorParameters<typeof ServeApiError>[0], detail: string): ServeApiError {
    return new ServeApiError(init, detail);
  }

  private async target(cluster: ClusterRef, method: string, path: string): Promise<Target> {
    let raw: string;
    try {
      raw = await this.resolver.resolve(cluster);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw this.error(
        { kind: 'address', cluster, address: '(unresolved)', method, path, cause: err },
        `was not sent: the dashboard address could not be resolved: ${reason}`,
      );
    }
    const bad = (why: string): ServeApiError =>
      this.error({ kind: 'address', cluster, address: String(raw), method, path }, `was not sent: ${why}`);
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw bad('the dashboard address is not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(`unsupported protocol ${url.protocol}`);
    if (url.username !== '' || url.password !== '') {
      throw this.error(
        { kind: 'address', cluster, address: `${url.protocol}//${url.host}`, method, path },
        'was not sent: the dashboard address must not contain credentials',
      );
    }
    if (url.search !== '' || url.hash !== '') throw bad('the dashboard address must not have a query or fragment');
    if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
    const address = `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '')}`;
    return { address, url };
  }

  private async tokenFor(cluster: ClusterRef, target: Target, method: string, path: string): Promise<string | undefined> {
    if (this.token === undefined) return undefined;
    let token: string | undefined;
    try {
      token = typeof this.token === 'string' ? this.token : await this.token(cluster);
    } catch (err) {
      throw this.error(
        { kind: 'config', cluster, address: target.address, method, path },
        `was not sent: the token lookup failed (${err instanceof Error ? err.name : 'error'})`,
      );
    }
    if (token === undefined || token === '') return undefined;
    if (!TOKEN_CHARS.test(token)) {
      throw this.error(
        { kind: 'config', cluster, address: target.address, method, path },
        'was not sent: the configured token contains characters that are not allowed in an HTTP header',
      );
    }
    return token;
  }

  private async send(
    cluster: ClusterRef,
    method: 'GET' | 'PUT',
    relative: string,
    body: string | undefined,
    options: ServeRequestOptions,
  ): Promise<{ answer: RawAnswer; target: Target; path: string }> {
    const target = await this.target(cluster, method, `/${relative.split('?')[0]}`);
    const url = new URL(relative, target.url);
    const path = url.pathname;
    const token = await this.tokenFor(cluster, target, method, path);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const fail = (kind: ServeApiErrorKind, detail: string, extra: { status?: number; body?: string; cause?: unknown } = {}) =>
      this.error({ kind, cluster, address: target.address, method, path, ...extra }, detail);

    const headers: http.OutgoingHttpHeaders = { accept: 'application/json', 'user-agent': USER_AGENT };
    if (token !== undefined) headers[RAY_AUTH_HEADER] = `Bearer ${token}`;
    let payload: Buffer | undefined;
    if (body !== undefined) {
      payload = Buffer.from(body, 'utf8');
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    }

    let answer: RawAnswer;
    try {
      answer = await boundedRequest(url, { method, headers, ...(payload !== undefined ? { body: payload } : {}), timeoutMs, maxBodyBytes: MAX_BODY_BYTES, ...(this.pool !== undefined ? { agent: this.pool.agentFor(url) } : {}), ...(this.ca !== undefined ? { ca: this.ca } : {}), ...(options.signal !== undefined ? { signal: options.signal } : {}) });
    } catch (err) {
      const e = err as BoundedRequestError;
      const kind: ServeApiErrorKind = e.kind === 'too-large' ? 'invalid-response' : e.kind;
      throw fail(kind, e.message, e.cause !== undefined ? { cause: e.cause } : {});
    }

    const excerpt = redact(answer.body.slice(0, 500), token);
    if (answer.status >= 200 && answer.status < 300) return { answer, target, path };
    if (answer.status >= 300 && answer.status < 400) {
      throw fail(
        'redirect',
        `answered ${answer.status} redirecting to ${originOf(answer.location)}; redirects are never followed (the client only talks to ${target.address})`,
        { status: answer.status },
      );
    }
    const refused = AUTH_REFUSALS[answer.status];
    if (refused !== undefined) {
      throw fail(refused.kind, token === undefined ? refused.withoutToken : refused.withToken, { status: answer.status, body: excerpt });
    }
    const hint = answer.status === 405 ? ' (the dashboard took the request for browser traffic)' : '';
    throw fail('http', `answered ${answer.status}${hint}: ${excerpt || '(empty body)'}`, { status: answer.status, body: excerpt });
  }
}

/** The error of a 401 or 403 answer, worded by whether a token was sent. */
const AUTH_REFUSALS: Readonly<Partial<Record<number, { readonly kind: ServeApiErrorKind; readonly withoutToken: string; readonly withToken: string }>>> = {
  401: {
    kind: 'unauthorized',
    withoutToken: 'answered 401 Unauthorized: the cluster requires a token (RAY_AUTH_MODE=token) and none is configured for it',
    withToken: 'answered 401 Unauthorized: the dashboard did not accept the configured token',
  },
  403: {
    kind: 'forbidden',
    withoutToken: 'answered 403 Forbidden (no token is configured for this cluster)',
    withToken: 'answered 403 Forbidden: the configured token was rejected; check the token for this cluster',
  },
};

function redact(text: string, token: string | undefined): string {
  return token === undefined ? text : text.split(token).join('<redacted>');
}

function originOf(location: string | undefined): string {
  if (location === undefined) return '(no Location header)';
  try {
    const u = new URL(location);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'a relative location';
  }
}
