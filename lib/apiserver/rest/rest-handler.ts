/**
 * The REST side of the server: requests matched against the `google.api.http` routes of the
 * descriptors, bound into RPC requests, authenticated like every RPC, and answered by the same
 * handler as gRPC and Connect. The caller is authenticated before the body is read, and the body is
 * limited while it is read (413 over the limit, as kube-apiserver answers). Unary answers are JSON (implicit zero values included, so `weight: 0`
 * does not vanish); server streams are server-sent events (`event: message` per message, `event:
 * error` with a google.rpc.Status on failure). Errors are google.rpc.Status JSON with the HTTP status
 * of their code.
 */
import type * as http from 'node:http';
import type * as http2 from 'node:http2';
import { create, isMessage, toJson, type DescMessage, type JsonValue, type Message } from '@bufbuild/protobuf';
import { Code, ConnectError, createContextValues, createHandlerContext } from '@connectrpc/connect';
import { noteSubject, type AccessLog } from '../access-log';
import { REQUEST_SCOPE, type ScopeResolver } from '../auth/request-scope';
import { publicError, tooComplex } from '../errors';
import { jsonShapeProblem } from '../input-shape';
import type { ApiMetrics } from '../metrics';
import type { ServiceBinding } from '../services';
import { HttpRoute, httpRoutes } from './http-rules';
import { matchPathTemplate, undecodablePathSegment } from './path-template';
import { bindRequest } from './request-binding';
import { statusJson } from './status-json';
import { closeUnread } from '../rpc-errors';

/** A Node request of either HTTP version. */
export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
/** A Node response of either HTTP version (`write`/`writeHead` unified as connect-node does). */
export type NodeResponse = (Omit<http.ServerResponse, 'write' | 'writeHead'> | Omit<http2.Http2ServerResponse, 'write' | 'writeHead'>) & {
  write(chunk: string | Uint8Array): boolean;
  writeHead(status: number, headers?: http.OutgoingHttpHeaders): unknown;
};

/** Options of `createRestHandler`. */
export interface RestHandlerOptions {
  readonly bindings: readonly ServiceBinding[];
  readonly resolver: ScopeResolver;
  readonly metrics: ApiMetrics;
  /** Receives errors that were not meant for clients. */
  readonly onInternalError: (err: unknown) => void;
  /** Aborted when the server shuts down (ends streams). */
  readonly shutdownSignal?: AbortSignal;
  /** Largest accepted request body in bytes; default 4 MiB. */
  readonly maxBodyBytes?: number;
  /** Where each call's line goes; default none. */
  readonly accessLog?: AccessLog;
}

/** Serves a request when a route matches its path; resolves false when none does (the caller answers 404). */
export type RestHandler = (req: NodeRequest, res: NodeResponse) => Promise<boolean>;

/** Sends `body` as JSON; returns its size in bytes. */
function sendJson(res: NodeResponse, status: number, body: unknown, headers: Record<string, string> = {}): number {
  const text = JSON.stringify(body);
  const size = Buffer.byteLength(text);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(size), ...headers });
  res.end(text);
  return size;
}

/** Sends an error as google.rpc.Status JSON. */
export function sendError(res: NodeResponse, err: ConnectError, headers: Record<string, string> = {}): void {
  const { httpStatus, body } = statusJson(err);
  sendJson(res, httpStatus, body, headers);
}

/**
 * A body refused before it is parsed, with the HTTP status kube-apiserver gives (413 too large, 415
 * not JSON). Not a ConnectError subclass: `instanceof` a ConnectError subclass matches every ConnectError.
 */
class BodyRefusal extends Error {
  constructor(
    message: string,
    readonly code: Code,
    readonly httpStatus: number,
  ) {
    super(message);
  }
}

const tooLarge = (maxBytes: number) => new BodyRefusal(`the request body exceeds the limit of ${maxBytes} bytes`, Code.ResourceExhausted, 413);

/** Whether the request carries a body (HTTP/2: its headers did not end the stream). */
function hasBody(req: NodeRequest): boolean {
  if ('stream' in req) return !req.stream.endAfterHeaders;
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** `application/json` or a `+json` type: what browsers cannot send cross-origin without a CORS preflight. */
function isJsonContentType(contentType: string | undefined): boolean {
  const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

async function readJsonBody(req: NodeRequest, maxBytes: number, onBytes: (size: number) => void): Promise<JsonValue | undefined> {
  if (!hasBody(req)) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new BodyRefusal(`request bodies must be JSON (Content-Type: application/json); got ${JSON.stringify(req.headers['content-type'] ?? '')}`, Code.InvalidArgument, 415);
  }
  // A declared length over the limit is refused before anything is read.
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    onBytes(size);
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  const shape = jsonShapeProblem(text);
  if (shape) throw tooComplex(shape);
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new ConnectError('the request body is not valid JSON', Code.InvalidArgument);
  }
}

/** Request headers as a Fetch `Headers` (HTTP/2 pseudo-headers dropped, repeated values joined). */
function headersOf(req: NodeRequest): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (k.startsWith(':') || v === undefined) continue;
    h.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return h;
}

function messageJson(desc: DescMessage, value: unknown, responseBody: string): JsonValue {
  const msg: Message = isMessage(value, desc) ? value : create(desc, value as never);
  const json = toJson(desc, msg, { alwaysEmitImplicit: true });
  if (!responseBody) return json;
  const field = desc.fields.find((f) => f.name === responseBody)!;
  return (json as Record<string, JsonValue>)[field.jsonName] ?? null;
}

/** The REST handler of `bindings`' annotated methods. */
export function createRestHandler(opts: RestHandlerOptions): RestHandler {
  const routes = httpRoutes(opts.bindings.map((b) => b.service));
  const impls = new Map(opts.bindings.flatMap((b) => b.service.methods.map((m) => [m, b.impl[m.localName]] as const)));
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;

  return async (req, res) => {
    // Appended to an origin rather than resolved against it: `//x` would otherwise parse as a host
    // (and `//` throw), where it is a path that no route matches.
    const url = new URL(`http://rest.invalid${(req.url ?? '/').startsWith('/') ? '' : '/'}${req.url ?? '/'}`);
    const undecodable = undecodablePathSegment(url.pathname);
    if (undecodable !== undefined) {
      // Malformed rather than missing: the client sent bytes no path can be, so 400 rather than 404.
      sendError(res, new ConnectError(`the request path ${url.pathname} is not valid: ${JSON.stringify(undecodable)} does not decode to UTF-8 text`, Code.InvalidArgument));
      return true;
    }
    const matches = routes.map((route) => ({ route, vars: matchPathTemplate(route.template, url.pathname) })).filter((m) => m.vars !== undefined);
    if (matches.length === 0) return false;
    const match = matches.find((m) => m.route.httpMethod === req.method);
    if (!match) {
      const allow = [...new Set(matches.map((m) => m.route.httpMethod))].join(', ');
      sendJson(res, 405, statusJson(new ConnectError(`${req.method} is not allowed here; allowed: ${allow}`, Code.Unimplemented)).body, { allow });
      return true;
    }
    const route: HttpRoute = match.route;
    const rpc = `${route.method.parent.typeName}/${route.method.name}`;
    const started = performance.now();
    let code = 'ok';
    const record = opts.accessLog?.start(req, res, 'rest', rpc, `${route.httpMethod} ${route.template.source}`);
    // From the path already, so that a request refused before binding is still logged with its object.
    if (record) Object.assign(record, { namespace: match.vars!.get('namespace'), name: match.vars!.get('name') });
    const requestAbort = new AbortController();
    res.on('close', () => requestAbort.abort());
    try {
      const scope = await opts.resolver.resolve(req.headers.authorization ?? null, req.socket.remoteAddress);
      if (record) record.caller = scope.caller.username;
      const body = await readJsonBody(req, maxBody, (size) => {
        if (record) record.bytesIn = size;
      });
      const request = bindRequest(route, match.vars!, url.searchParams, body);
      if (record) noteSubject(record, request);
      const ctx = createHandlerContext({
        service: route.method.parent,
        method: route.method,
        protocolName: 'rest',
        requestMethod: req.method ?? 'GET',
        url: url.toString(),
        requestHeader: headersOf(req),
        contextValues: createContextValues().set(REQUEST_SCOPE, scope),
        shutdownSignal: opts.shutdownSignal,
        requestSignal: requestAbort.signal,
      });
      const impl = impls.get(route.method)!;
      if (route.method.methodKind === 'server_streaming') {
        const failed = await streamEvents(res, route, impl(request, ctx) as AsyncIterable<unknown>, requestAbort.signal, opts.onInternalError);
        if (record && failed !== undefined) record.code = failed;
      } else {
        const size = sendJson(res, 200, messageJson(route.method.output, await impl(request, ctx), route.responseBody));
        if (record) record.bytesOut = size;
      }
    } catch (e) {
      const refusal = e instanceof BodyRefusal ? e : undefined;
      const err = refusal ? new ConnectError(refusal.message, refusal.code) : publicError(e, opts.onInternalError);
      code = Code[err.code];
      if (record) record.code = err.code;
      const { httpStatus, body } = statusJson(err);
      if (!res.headersSent) {
        const size = sendJson(res, refusal?.httpStatus ?? httpStatus, body, closeUnread(req));
        if (record) record.bytesOut = size;
      } else res.end();
    } finally {
      opts.metrics.observe(rpc, 'rest', code, (performance.now() - started) / 1000);
    }
    return true;
  };
}

/**
 * Writes a server stream as server-sent events until it ends or the client goes away (`closed`). A
 * failure before the first message is thrown (and answered as an ordinary error); later failures
 * become an `error` event that ends the stream, and their code is returned.
 */
async function streamEvents(res: NodeResponse, route: HttpRoute, stream: AsyncIterable<unknown>, closed: AbortSignal, onInternalError: (err: unknown) => void): Promise<Code | undefined> {
  const it = stream[Symbol.asyncIterator]();
  let next = await it.next();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  try {
    while (!next.done && !closed.aborted) {
      res.write(`event: message\ndata: ${JSON.stringify(messageJson(route.method.output, next.value, route.responseBody))}\n\n`);
      next = await it.next();
    }
  } catch (e) {
    const err = publicError(e, onInternalError);
    res.write(`event: error\ndata: ${JSON.stringify(statusJson(err).body)}\n\n`);
    return err.code;
  } finally {
    await it.return?.();
    res.end();
  }
  return undefined;
}
