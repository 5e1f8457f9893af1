/**
 * One HTTP(S) exchange bounded in time (one timer from connect to the last byte: a socket timeout
 * would only bound silences) and in answer size, with no redirect followed: the one request helper
 * of the clients that talk plain HTTP (the Ray dashboard's Serve API, Prometheus). The Kubernetes
 * client has its own transport (kube/transport.ts: watches, client certificates, reachability).
 */
import * as http from 'node:http';
import * as https from 'node:https';

/** What a `boundedRequest` sends and how it is bounded. */
export interface BoundedRequest {
  readonly method: string;
  readonly headers: http.OutgoingHttpHeaders;
  readonly body?: string | Buffer;
  /** Longest time for the whole exchange, ms. */
  readonly timeoutMs: number;
  /** Largest answer body, bytes. */
  readonly maxBodyBytes: number;
  /** Connection pooling; none (a fresh connection) when unset. */
  readonly agent?: http.Agent;
  /** CA bundle for an https URL, when not the system's. */
  readonly ca?: string | Buffer;
  readonly signal?: AbortSignal;
}

/** The answer, whatever its status (a redirect is returned, never followed). */
export interface BoundedAnswer {
  readonly status: number;
  readonly body: string;
  /** The `Location` header of a redirect. */
  readonly location?: string;
}

/** Why an exchange gave no answer. */
export class BoundedRequestError extends Error {
  constructor(
    /** `timeout` (no complete answer in time), `too-large` (the body passed the bound), `aborted` (by the signal) or `network`. */
    readonly kind: 'timeout' | 'too-large' | 'aborted' | 'network',
    message: string,
    /** The status of an answer cut off for its size. */
    readonly status?: number,
    readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'BoundedRequestError';
  }
}

/** Errors of a connection the server closed while it sat idle in a pool. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Sends one request to `url` under `r`'s bounds; rejects with a `BoundedRequestError`. A request
 * that went out on a pooled connection the server had closed (reset before any answer) is sent once
 * more on a new connection, within the same time bound.
 */
export function boundedRequest(url: URL, r: BoundedRequest): Promise<BoundedAnswer> {
  return new Promise<BoundedAnswer>((resolve, reject) => {
    if (r.signal?.aborted) {
      reject(new BoundedRequestError('aborted', 'was aborted before it was sent'));
      return;
    }
    const options: https.RequestOptions = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: r.method,
      headers: r.headers,
      agent: r.agent ?? false,
      ...(r.ca !== undefined ? { ca: r.ca } : {}),
    };
    let settled = false;
    let failure: BoundedRequestError | undefined;
    let req: http.ClientRequest;
    const finish = (err: BoundedRequestError | undefined, value?: BoundedAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      r.signal?.removeEventListener('abort', onAbort);
      if (err !== undefined) reject(err);
      else resolve(value as BoundedAnswer);
    };
    const send = (resend: boolean): void => {
      let answered = false;
      req = (url.protocol === 'https:' ? https : http).request(options, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > r.maxBodyBytes) {
            failure = new BoundedRequestError('too-large', `answered ${res.statusCode} with a body over ${r.maxBodyBytes} bytes`, res.statusCode);
            req.destroy(failure);
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          const location = res.headers.location;
          finish(undefined, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ...(location !== undefined ? { location } : {}) });
        });
        res.on('error', (err) => finish(failure ?? new BoundedRequestError('network', `failed while reading the answer: ${err.message}`, undefined, err)));
      });
      const sent = req;
      sent.on('error', (err) => {
        const code = (err as NodeJS.ErrnoException).code;
        if (!resend && !answered && failure === undefined && !settled && sent.reusedSocket && code !== undefined && STALE_CONNECTION.has(code)) {
          send(true);
          return;
        }
        finish(failure ?? new BoundedRequestError('network', `failed: ${code ?? err.message}`, undefined, err));
      });
      sent.end(r.body);
    };
    const timer = setTimeout(() => {
      failure = new BoundedRequestError('timeout', `got no complete answer within ${r.timeoutMs} ms`);
      req.destroy(failure);
    }, r.timeoutMs);
    const onAbort = (): void => {
      failure = new BoundedRequestError('aborted', 'was aborted by the caller');
      req.destroy(failure);
    };
    r.signal?.addEventListener('abort', onAbort, { once: true });
    send(false);
  });
}
