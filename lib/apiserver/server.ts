/**
 * The rayshift core API server: one port serving gRPC, gRPC-Web and Connect (ConnectRPC) and REST
 * (the project's `google.api.http` transcoder) from one handler per RPC, plus `/openapi.json`,
 * `/healthz`, `/readyz` and `/metrics`, and, with `dashboardDir`, the built dashboard under `/ui/`
 * (same origin as the API, so the page calls it directly).
 *
 * Every RPC is authenticated before its body is read: a bearer token checked by TokenReview
 * (audience `rayshift`; a start-up check warns when that audience is not a dedicated one), then every
 * Kubernetes call made as the caller through impersonation. Bodies
 * are limited on every protocol while they are read, and compressed ones while they are inflated.
 * Client-sent `Impersonate-*` headers are dropped on arrival. Request messages are checked on every
 * protocol (`rpc-guard.ts`, `request-checks.ts`), and each call leaves one access-log line
 * (`access-log.ts`). Connections, their idle time and age, HTTP/2 streams and each caller's watches
 * are bounded (`server-limits.ts`). TLS is required unless `insecureLocal` is set, which binds to
 * loopback only and acts as the server's own identity.
 */
import { setMaxListeners } from 'node:events';
import type { Message } from '@bufbuild/protobuf';
import type { KubeConfig } from '@kubernetes/client-node';
import { Code, ConnectError, createContextValues, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import pino, { type Logger } from 'pino';
import { serveDashboardFile } from '../dashboard/static-files';
import { KubeClient } from '../runtime/kube/client';
import { AccessReviewer } from './auth/access-reviewer';
import { REQUEST_SCOPE, type RequestScope, type ScopeResolver } from './auth/request-scope';
import { ImpersonatingScopeResolver, LocalScopeResolver } from './auth/scope-resolvers';
import { DEFAULT_AUDIENCE, TokenAuthenticator } from './auth/token-authenticator';
import { warnOnSharedAudience } from './auth/audience-overlap';
import { AccessLog, CALL_RECORD, noteSubject, type CallRecord } from './access-log';
import { BOUNDED_COMPRESSIONS } from './compression';
import { publicError } from './errors';
import { ImpersonatingClients } from './kube/impersonation';
import type { LocalBinding } from './local-authority';
import { localRequestRefusal } from './local-guard';
import { ConnectionLimits, DualRequestListener, Listener, TlsMaterial, listenCleartext, listenTls } from './listen';
import { ApiMetrics } from './metrics';
import { buildOpenApi } from './openapi/build-openapi';
import { embeddedComments } from './openapi/proto-comments';
import { httpRoutes } from './rest/http-rules';
import { createRestHandler, sendError, type NodeRequest, type NodeResponse } from './rest/rest-handler';
import { requireKnownEnums, requireObjectIdentity } from './request-checks';
import { rpcProtocolOf, sendRpcError } from './rpc-errors';
import { guardHandlers } from './rpc-guard';
import { SERVER_LIMITS, limitValue, type ServerLimitName, type ServerLimitValues } from './server-limits';
import { API_SERVICES, serviceBindings } from './services';
import { isLoopbackHost } from '../runtime/net/loopback';

/**
 * Options of `startApiServer`. The tunable limits (`ServerLimitValues`: `maxBodyBytes`,
 * `tokenRecheckSeconds`, `idleTimeoutSeconds`, `http1IdleTimeoutSeconds`, `sessionTimeoutSeconds`, `maxSessions`,
 * `maxStreamsPerSession`, `maxWatchesPerCaller`) default to `SERVER_LIMITS`, which also gives their ranges.
 */
export interface ApiServerOptions extends ServerLimitValues {
  /** The server's own kubeconfig: a user with `system:auth-delegator` and the right to impersonate. */
  readonly kubeConfig: KubeConfig;
  /** Address to bind; default `0.0.0.0` (`127.0.0.1` with `insecureLocal`). */
  readonly host?: string;
  /** Port; default 8443; 0 picks a free one. */
  readonly port?: number;
  /** Serving certificate and key (PEM); required unless `insecureLocal`. */
  readonly tls?: TlsMaterial;
  /** Development mode: no authentication, the server's own identity, loopback only, cleartext. */
  readonly insecureLocal?: boolean;
  /** Audience callers' tokens must carry; default `rayshift`. */
  readonly audience?: string;
  /** Default heartbeat interval of watch streams, seconds; default 15. */
  readonly heartbeatSeconds?: number;
  /** Version reported in the OpenAPI document. */
  readonly version?: string;
  /** Logger; default silent. */
  readonly log?: Logger;
  /** One `info` line per call on `log` (see `access-log.ts`); default true. */
  readonly accessLog?: boolean;
  /** Folder of the built dashboard (`npm run build:ui`) to serve under `/ui/`; unset: no dashboard. */
  readonly dashboardDir?: string;
  /**
   * The clock of the token cache, the failure budgets and the tokens remembered as accepted (epoch
   * ms); default `Date.now`. Tests move it to expire cached answers without waiting.
   */
  readonly authClock?: () => number;
}

/** A running API server. */
export interface RunningApiServer {
  /** `https://host:port` (or `http://` with `insecureLocal`). */
  readonly url: string;
  readonly port: number;
  /** The OpenAPI document served at `/openapi.json`. */
  readonly openApi: Record<string, unknown>;
  /** Stops listening, ends streams and releases Kubernetes connections. */
  close(): Promise<void>;
}

/** Fails naming the option, its range and the value when a limit set in `opts` is out of its range. */
function checkLimits(opts: ServerLimitValues): void {
  for (const name of Object.keys(SERVER_LIMITS) as ServerLimitName[]) {
    const value = opts[name];
    const { min, max } = SERVER_LIMITS[name];
    if (value !== undefined && !(value >= min && value <= max)) throw new Error(`${name} (${SERVER_LIMITS[name].flag}) must be from ${min} to ${max}; got ${value}`);
  }
}

/**
 * Records metrics for every Connect-router call, refuses unknown enum values and objects Kubernetes
 * could not name, notes what the call is about for the access log and hides internal errors.
 */
function connectInterceptor(metrics: ApiMetrics, onInternalError: (err: unknown) => void): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const protocol = rpcProtocolOf(req.header.get('content-type'));
    try {
      const record = req.contextValues.get(CALL_RECORD);
      const check = (message: Message) => {
        if (record) noteSubject(record, message);
        requireKnownEnums(req.method.input, message);
        requireObjectIdentity(req.method.input, message);
      };
      if (!req.stream) check(req.message);
      // A server stream's one request message arrives as a stream too: checked as the handler reads it.
      const res = await next(req.stream ? { ...req, message: checkedMessages(req.message, check) } : req);
      metrics.observe(rpc, protocol, 'ok', (performance.now() - started) / 1000);
      if (!res.stream) return res;
      const messages = res.message;
      return {
        ...res,
        message: (async function* () {
          try {
            yield* messages;
          } catch (e) {
            throw publicError(e, onInternalError);
          }
        })(),
      };
    } catch (e) {
      const err = publicError(e, onInternalError);
      metrics.observe(rpc, protocol, Code[err.code], (performance.now() - started) / 1000);
      throw err;
    }
  };
}

/** The messages of `messages`, each passed to `check` (which may throw) before it is handed on. */
async function* checkedMessages<T extends Message>(messages: AsyncIterable<T>, check: (message: T) => void): AsyncGenerator<T> {
  for await (const message of messages) {
    check(message);
    yield message;
  }
}

/** Starts the server; resolves once it listens. */
export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const log = opts.log ?? pino({ level: 'silent' });
  const host = opts.host ?? (opts.insecureLocal ? '127.0.0.1' : '0.0.0.0');
  if (opts.insecureLocal && !isLoopbackHost(host)) throw new Error(`--insecure-local binds to loopback only; got host ${host}`);
  if (!opts.insecureLocal && !opts.tls) throw new Error('TLS is required: pass a certificate and key (or --insecure-local for development on loopback)');
  checkLimits(opts);

  const server = KubeClient.fromKubeConfig(opts.kubeConfig, { fieldManager: 'rayshift-apiserver' });
  const clients = new ImpersonatingClients(opts.kubeConfig);
  const authenticator = opts.insecureLocal ? undefined : new TokenAuthenticator(server, { audience: opts.audience, now: opts.authClock });
  const resolver: ScopeResolver = authenticator ? new ImpersonatingScopeResolver(authenticator, clients, new AccessReviewer(server)) : new LocalScopeResolver(server);
  const metrics = new ApiMetrics();
  const shutdown = new AbortController();
  // Every call listens on the shutdown signal.
  setMaxListeners(0, shutdown.signal);
  const onInternalError = (err: unknown) => log.error({ err }, 'internal error');
  const bindings = serviceBindings(
    { server },
    { heartbeatSeconds: opts.heartbeatSeconds, tokenRecheckSeconds: opts.tokenRecheckSeconds, maxWatchesPerCaller: opts.maxWatchesPerCaller },
  );
  const openApi = buildOpenApi(httpRoutes(API_SERVICES), { title: 'rayshift core API', version: opts.version ?? 'v1' }, embeddedComments());
  const openApiText = JSON.stringify(openApi);
  const maxBodyBytes = limitValue('maxBodyBytes', opts.maxBodyBytes);
  const accessLog = new AccessLog(opts.accessLog === false ? undefined : log);
  const rest = createRestHandler({ bindings, resolver, metrics, onInternalError, shutdownSignal: shutdown.signal, maxBodyBytes, accessLog });
  // RPC path → name, for the requests the listener authenticates before the Connect router reads them.
  const rpcPaths = new Map<string, string>(bindings.flatMap((b) => b.service.methods.map((m) => [`/${b.service.typeName}/${m.name}`, `${b.service.typeName}/${m.name}`] as const)));
  const scopes = new WeakMap<NodeRequest, RequestScope>();
  const records = new WeakMap<NodeRequest, CallRecord>();

  let readyUntil = 0;
  const ready = async (): Promise<boolean> => {
    if (Date.now() < readyUntil) return true;
    try {
      await server.request('GET', '/readyz', { timeoutMs: 5_000 });
      readyUntil = Date.now() + 2_000;
      return true;
    } catch {
      return false;
    }
  };

  const text = (res: NodeResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8') => {
    res.writeHead(status, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  };

  const fallback = async (req: NodeRequest, res: NodeResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') return text(res, 200, 'ok\n');
    if (req.method === 'GET' && path === '/readyz') return (await ready()) ? text(res, 200, 'ok\n') : text(res, 503, 'the Kubernetes API is not reachable\n');
    if (req.method === 'GET' && path === '/metrics') return text(res, 200, await metrics.registry.metrics(), metrics.registry.contentType);
    if (req.method === 'GET' && path === '/openapi.json') return text(res, 200, openApiText, 'application/json');
    if (opts.dashboardDir !== undefined && req.method === 'GET' && (path === '/ui' || path.startsWith('/ui/'))) {
      if (path === '/ui') {
        res.writeHead(302, { location: '/ui/' });
        res.end();
        return;
      }
      if (serveDashboardFile(opts.dashboardDir, path, res)) return;
      return sendError(res, new ConnectError(`no such page: ${path}`, Code.NotFound));
    }
    if (await rest(req, res)) return;
    sendError(res, new ConnectError(`no route for ${req.method} ${path}`, Code.NotFound));
  };

  const connectHandler = connectNodeAdapter({
    routes: (router) => {
      for (const b of bindings) router.service(b.service, b.impl as never);
      guardHandlers(router.handlers, maxBodyBytes);
    },
    interceptors: [connectInterceptor(metrics, onInternalError)],
    contextValues: (req) => createContextValues().set(REQUEST_SCOPE, scopes.get(req)).set(CALL_RECORD, records.get(req)),
    // Checked while reading (the Content-Length first), per message and after decompression.
    readMaxBytes: maxBodyBytes,
    acceptCompression: [...BOUNDED_COMPRESSIONS],
    shutdownSignal: shutdown.signal,
    fallback: (req, res) => {
      fallback(req, res).catch((err: unknown) => {
        onInternalError(err);
        if (!res.headersSent) sendError(res, new ConnectError('internal error', Code.Internal));
      });
    },
  });

  // RPCs are authenticated here, before the router reads (and inflates) their bodies; REST
  // authenticates in its handler, also before reading.
  const listener: DualRequestListener = (req, res) => {
    for (const name of Object.keys(req.headers)) if (name.toLowerCase().startsWith('impersonate-')) delete req.headers[name];
    const rpc = rpcPaths.get((req.url ?? '/').split('?')[0]);
    const record = rpc === undefined ? undefined : accessLog.start(req, res as NodeResponse, rpcProtocolOf(req.headers['content-type']), rpc);
    if (opts.insecureLocal) {
      const refusal = localRequestRefusal(req, local);
      if (record && refusal) record.code = refusal.code;
      if (refusal) return rpc === undefined ? sendError(res as NodeResponse, refusal) : sendRpcError(req, res as NodeResponse, refusal);
    }
    if (rpc === undefined || record === undefined) return connectHandler(req, res);
    const started = performance.now();
    resolver.resolve(req.headers.authorization ?? null, req.socket.remoteAddress).then(
      (scope) => {
        scopes.set(req, scope);
        records.set(req, record);
        record.caller = scope.caller.username;
        connectHandler(req, res);
      },
      (e: unknown) => {
        const err = publicError(e, onInternalError);
        record.code = err.code;
        metrics.observe(rpc, record.protocol, Code[err.code], (performance.now() - started) / 1000);
        sendRpcError(req, res as NodeResponse, err);
      },
    );
  };

  // Empty until the port is known: nothing is answered in local mode before then.
  let local: LocalBinding = { host, port: -1 };
  let bound: Listener;
  const limits: ConnectionLimits = {
    idleTimeoutMs: limitValue('idleTimeoutSeconds', opts.idleTimeoutSeconds) * 1000,
    http1IdleTimeoutMs: limitValue('http1IdleTimeoutSeconds', opts.http1IdleTimeoutSeconds) * 1000,
    sessionTimeoutMs: limitValue('sessionTimeoutSeconds', opts.sessionTimeoutSeconds) * 1000,
    maxSessions: limitValue('maxSessions', opts.maxSessions),
    maxStreamsPerSession: limitValue('maxStreamsPerSession', opts.maxStreamsPerSession),
  };
  try {
    bound = opts.tls ? await listenTls(listener, opts.tls, host, opts.port ?? 8443, limits) : await listenCleartext(listener, host, opts.port ?? 8443, limits);
  } catch (e) {
    server.close();
    throw e;
  }
  local = { host, port: bound.port };
  if (authenticator) void warnOnSharedAudience(opts.kubeConfig, authenticator, opts.audience ?? DEFAULT_AUDIENCE, log);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  log.info({ port: bound.port, host, tls: !!opts.tls }, 'rayshift API server listening');
  return {
    url: `${opts.tls ? 'https' : 'http'}://${shownHost}:${bound.port}`,
    port: bound.port,
    openApi,
    async close() {
      shutdown.abort();
      await bound.close();
      clients.close();
      server.close();
    },
  };
}
