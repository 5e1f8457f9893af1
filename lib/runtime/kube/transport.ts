/**
 * HTTP(S) to the API server. Authentication and TLS material come from `@kubernetes/client-node`'s
 * `KubeConfig.applyToHTTPSOptions` on every request (so rotated ServiceAccount tokens, exec plugins and
 * OIDC refreshes keep working); the requests themselves go through `node:https` with a keep-alive agent
 * per distinct TLS identity. Nothing here logs, and errors carry no headers.
 */
import * as crypto from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeConnectionError } from './errors';

/** One request to the API server. */
export interface HttpRequest {
  /** HTTP method. */
  readonly method: string;
  /** Path and query, e.g. `/api/v1/namespaces/x/configmaps?limit=500` (the server's own path prefix is added). */
  readonly path: string;
  /** Request body, already serialized. */
  readonly body?: string;
  /** Content-Type of the body. */
  readonly contentType?: string;
  /** Socket inactivity timeout in ms; default the transport's. */
  readonly timeoutMs?: number;
}

/** A complete response. */
export interface HttpResponse {
  /** HTTP status code. */
  readonly status: number;
  /** Response headers. */
  readonly headers: http.IncomingHttpHeaders;
  /** Response body as text. */
  readonly text: string;
}

/** An open streaming response (a watch). */
export interface StreamHandle {
  /** HTTP status code; when not 2xx, `text` holds the whole body and no line was delivered. */
  readonly status: number;
  /** The body of a non-2xx answer. */
  readonly text?: string;
  /** Resolves when the server ends the stream or `abort()` is called; rejects with `KubeConnectionError` on network errors. */
  readonly done: Promise<void>;
  /** Closes the stream (idempotent); `done` then resolves. */
  abort(): void;
}

/** What `KubeClient` needs from the wire; tests may substitute it. */
export interface Transport {
  /** The API server URL (for messages; never contains credentials). */
  readonly server: string;
  /** Sends one request and reads the whole response. Rejects only with `KubeConnectionError`. */
  request(req: HttpRequest): Promise<HttpResponse>;
  /** Opens a streaming request and calls `onLine` for every complete line of a 2xx body. */
  stream(req: HttpRequest, onLine: (line: string) => void): Promise<StreamHandle>;
  /** Releases pooled connections. */
  close(): void;
}

/** Options of `KubeConfigTransport`. */
export interface KubeConfigTransportOptions {
  /** Socket inactivity timeout of ordinary requests in ms; default 60 000. */
  readonly requestTimeoutMs?: number;
}

/** A `Transport` whose server, credentials and TLS settings come from a client-node `KubeConfig`. */
export class KubeConfigTransport implements Transport {
  readonly server: string;
  readonly #kc: KubeConfig;
  readonly #base: URL;
  readonly #prefix: string;
  readonly #useConfigAgent: boolean;
  readonly #agents = new Map<string, http.Agent>();
  readonly #requestTimeoutMs: number;

  constructor(kc: KubeConfig, opts: KubeConfigTransportOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster (check current-context)');
    this.#kc = kc;
    this.#base = new URL(cluster.server);
    this.server = `${this.#base.protocol}//${this.#base.host}${this.#base.pathname.replace(/\/$/, '')}`;
    this.#prefix = this.#base.pathname.replace(/\/$/, '');
    this.#useConfigAgent = !!cluster.proxyUrl;
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
  }

  /** Never prints credentials when the transport is logged or inspected. */
  toJSON(): Record<string, unknown> {
    return { server: this.server };
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    for (let attempt = 0; ; attempt++) {
      const opts = await this.#options(req);
      try {
        return await new Promise<HttpResponse>((resolve, reject) => {
          const r = this.#module().request(opts, (res) => {
            res.setEncoding('utf8');
            let text = '';
            res.on('data', (c: string) => (text += c));
            res.on('error', reject);
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
          });
          r.setTimeout(req.timeoutMs ?? this.#requestTimeoutMs, () => r.destroy(timeoutError(req.timeoutMs ?? this.#requestTimeoutMs)));
          r.on('error', (e: NodeJS.ErrnoException) => {
            // A pooled keep-alive socket the server had already closed: the request never reached it.
            if (attempt === 0 && r.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) reject(new RetryableSocketError());
            else reject(e);
          });
          r.end(req.body);
        });
      } catch (e) {
        if (e instanceof RetryableSocketError) continue;
        throw new KubeConnectionError(req.method, req.path, e);
      }
    }
  }

  async stream(req: HttpRequest, onLine: (line: string) => void): Promise<StreamHandle> {
    const opts = await this.#options(req);
    return new Promise<StreamHandle>((resolveOpen, rejectOpen) => {
      let opened = false;
      let aborted = false;
      let settle: { resolve: () => void; reject: (e: unknown) => void } | undefined;
      const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
      done.catch(() => undefined); // the caller awaits it; avoid an unhandled rejection if it does not
      const r = this.#module().request(opts, (res) => {
        const status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        if (status < 200 || status >= 300) {
          let text = '';
          res.on('data', (c: string) => (text += c));
          res.on('error', (e) => fail(e));
          res.on('end', () => {
            opened = true;
            settle!.resolve();
            resolveOpen({ status, text, done, abort: () => undefined });
          });
          return;
        }
        opened = true;
        let buf = '';
        const deliver = (line: string) => {
          if (!line || aborted) return;
          try {
            onLine(line);
          } catch (e) {
            // A consumer failure ends the stream with that error (it must not escape the socket callback).
            aborted = true;
            r.destroy();
            settle!.reject(e);
          }
        };
        res.on('data', (c: string) => {
          buf += c;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            deliver(line);
          }
        });
        res.on('error', (e) => fail(e));
        res.on('close', () => {
          if (!res.complete && !aborted) fail(Object.assign(new Error('stream closed before its end'), { code: 'ECONNRESET' }));
          else settle!.resolve();
        });
        res.on('end', () => {
          const line = buf.trim();
          buf = '';
          deliver(line);
          settle!.resolve();
        });
        resolveOpen({
          status,
          done,
          abort: () => {
            aborted = true;
            r.destroy();
            settle!.resolve();
          },
        });
      });
      const timeoutMs = req.timeoutMs ?? this.#requestTimeoutMs;
      r.setTimeout(timeoutMs, () => r.destroy(timeoutError(timeoutMs)));
      const fail = (e: unknown) => {
        if (aborted) {
          settle!.resolve();
          return;
        }
        const err = new KubeConnectionError(req.method, req.path, e);
        if (!opened) rejectOpen(err);
        settle!.reject(err);
      };
      r.on('error', fail);
      r.end(req.body);
    });
  }

  close(): void {
    for (const a of this.#agents.values()) a.destroy();
    this.#agents.clear();
  }

  #module(): typeof https | typeof http {
    return this.#base.protocol === 'http:' ? http : https;
  }

  async #options(req: HttpRequest): Promise<https.RequestOptions> {
    const o: https.RequestOptions = { headers: {} };
    await this.#kc.applyToHTTPSOptions(o);
    const headers: http.OutgoingHttpHeaders = { ...(o.headers as http.OutgoingHttpHeaders), Accept: 'application/json' };
    if (req.body !== undefined) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(req.body);
    }
    const agent = this.#useConfigAgent ? o.agent : this.#agentFor(o);
    return {
      protocol: this.#base.protocol,
      hostname: this.#base.hostname.replace(/^\[|\]$/g, ''),
      port: this.#base.port || (this.#base.protocol === 'http:' ? 80 : 443),
      method: req.method,
      path: this.#prefix + req.path,
      headers,
      auth: o.auth,
      agent,
      ca: o.ca,
      cert: o.cert,
      key: o.key,
      rejectUnauthorized: o.rejectUnauthorized,
      servername: o.servername,
    };
  }

  /** A keep-alive agent per distinct TLS identity (CA, client certificate and key, verification settings). */
  #agentFor(o: https.RequestOptions): http.Agent {
    const h = crypto.createHash('sha256');
    const add = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(add);
      else if (Buffer.isBuffer(v)) h.update(v);
      else if (v !== undefined && v !== null && typeof v === 'object') h.update(JSON.stringify(v));
      else h.update(String(v));
      h.update('\x01');
    };
    for (const v of [o.ca, o.cert, o.key, o.pfx, o.passphrase, o.rejectUnauthorized, o.servername]) add(v);
    const key = h.digest('hex');
    let agent = this.#agents.get(key);
    if (!agent) {
      if (this.#base.protocol === 'http:') {
        agent = new http.Agent({ keepAlive: true });
      } else {
        agent = new https.Agent({
          keepAlive: true,
          ca: o.ca,
          cert: o.cert,
          key: o.key,
          pfx: o.pfx,
          passphrase: o.passphrase,
          rejectUnauthorized: o.rejectUnauthorized,
          servername: o.servername,
        });
      }
      // Rotated client certificates leave old agents behind: forget the oldest (its sockets, maybe a
      // watch in flight, close on their own) so the map stays small.
      if (this.#agents.size >= 4) this.#agents.delete(this.#agents.keys().next().value as string);
      this.#agents.set(key, agent);
    }
    return agent;
  }
}

class RetryableSocketError extends Error {}

function timeoutError(ms: number): NodeJS.ErrnoException {
  return Object.assign(new Error(`no data for ${ms} ms`), { code: 'ETIMEDOUT' });
}
