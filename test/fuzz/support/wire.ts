/**
 * Sends generated requests exactly as generated (raw paths, any headers, any bytes) over HTTP/1.1 or
 * HTTP/2 with TLS, and reads whole answers, trailers included. Answers are bounded (the client must
 * not be what runs out of memory), and a request the server neither answers nor closes within a
 * deadline comes back as `hung`, so a server that stops answering fails the property instead of the
 * test's timeout.
 */
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as zlib from 'node:zlib';

/** A generated request. */
export interface WireRequest {
  readonly http: 1 | 2;
  readonly method: string;
  /** Path and query exactly as sent (no client-side normalisation). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** A server stream that may legitimately stay open: the answer is taken as it is after `streamMs`. */
  readonly streaming?: boolean;
}

/** What came back. */
export interface WireAnswer {
  /** HTTP status; 0 when no response head arrived. */
  readonly status: number;
  /** Response headers (lowercase). */
  readonly headers: Readonly<Record<string, string>>;
  /** HTTP/2 trailers (lowercase). */
  readonly trailers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** The connection or stream failed before the answer was complete (reset, closed), with why. */
  readonly broken?: string;
  /** Nothing came back within the deadline. */
  readonly hung?: boolean;
  /** A streaming answer cut by the client after `streamMs`. */
  readonly cut?: boolean;
  /** The client itself refused to send the request (why): no answer is expected. */
  readonly unsent?: string;
}

const MAX_ANSWER = 2 * 1024 * 1024;

/** The answer body without its Content-Encoding (the server compresses answers when the request did), or as is when it does not decode. */
function decoded(body: Buffer, encoding: string | undefined): Buffer {
  try {
    if (encoding === 'gzip') return zlib.gunzipSync(body, { maxOutputLength: MAX_ANSWER });
    if (encoding === 'br') return zlib.brotliDecompressSync(body, { maxOutputLength: MAX_ANSWER });
  } catch {
    // left as sent: the oracle then finds it is not what the protocol wants
  }
  return body;
}

function flat(h: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !k.startsWith(':')) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

/**
 * The headers of an HTTP/1.1 request with a Content-Length for any body: Node's client frames a GET,
 * HEAD or DELETE body with neither length nor chunking, so the server would read the body as the next
 * request on the connection.
 */
function h1Headers(req: WireRequest): Record<string, string> {
  const framed = Object.keys(req.headers).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding');
  return req.body.length === 0 || framed ? { ...req.headers } : { ...req.headers, 'content-length': String(req.body.length) };
}

/** Clients of one server: a keep-alive HTTPS agent and one HTTP/2 session, reopened when the server closes it. */
export class WireClient {
  readonly #agent: https.Agent;
  readonly #url: URL;
  #session: http2.ClientHttp2Session | undefined;

  constructor(
    private readonly origin: string,
    private readonly ca: string | Buffer,
    private readonly deadlineMs = 15_000,
    private readonly streamMs = 300,
  ) {
    this.#agent = new https.Agent({ keepAlive: true, ca, maxSockets: 4 });
    this.#url = new URL(origin);
  }

  /** Sends `req`; never rejects (failures are in the answer). */
  async send(req: WireRequest): Promise<WireAnswer> {
    if (req.http === 1) return this.#h1(req);
    const answer = await this.#h2(req);
    // REFUSED_STREAM means "not processed, retry": a session the server had just closed (GOAWAY after
    // an earlier request) refuses the streams it never started. Once more, on a new session.
    if (!/REFUSED_STREAM/.test(answer.broken ?? '')) return answer;
    this.#session?.destroy();
    return this.#h2(req);
  }

  #h1(req: WireRequest): Promise<WireAnswer> {
    return new Promise((resolve) => {
      let done = false;
      let status = 0;
      let headers: Record<string, string> = {};
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (extra: Partial<WireAnswer> = {}) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(streamTimer);
        resolve({ status, headers, trailers: {}, body: decoded(Buffer.concat(chunks), headers['content-encoding']), ...extra });
      };
      let streamTimer: NodeJS.Timeout | undefined;
      let request: ReturnType<typeof https.request> | undefined;
      const timer = setTimeout(() => {
        request?.destroy();
        finish({ hung: status === 0 });
      }, this.deadlineMs);
      try {
        request = https.request({ host: this.#url.hostname, port: this.#url.port, path: req.path, method: req.method, headers: h1Headers(req), agent: this.#agent }, (res) => {
          status = res.statusCode ?? 0;
          headers = flat(res.headers);
          if (req.streaming) streamTimer = setTimeout(() => (request?.destroy(), finish({ cut: true })), this.streamMs);
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= MAX_ANSWER) chunks.push(c);
          });
          res.on('end', () => finish());
          res.on('error', (e) => finish({ broken: e.message }));
          res.on('close', () => finish(res.complete ? {} : { broken: 'closed before the end of the answer' }));
        });
      } catch (e) {
        // Node's client refuses to send some generated requests (characters it will not put in a path or header).
        return finish({ unsent: (e as Error).message });
      }
      request.on('error', (e) => finish({ broken: e.message }));
      request.end(req.body);
    });
  }

  #sessionFor(): http2.ClientHttp2Session {
    if (this.#session && !this.#session.closed && !this.#session.destroyed) return this.#session;
    const session = http2.connect(this.origin, { ca: this.ca });
    session.on('error', () => undefined); // each stream reports its own failure
    session.unref();
    this.#session = session;
    return session;
  }

  #h2(req: WireRequest): Promise<WireAnswer> {
    return new Promise((resolve) => {
      let done = false;
      let status = 0;
      let headers: Record<string, string> = {};
      let trailers: Record<string, string> = {};
      const chunks: Buffer[] = [];
      let size = 0;
      let streamTimer: NodeJS.Timeout | undefined;
      const finish = (extra: Partial<WireAnswer> = {}) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(streamTimer);
        resolve({ status, headers, trailers, body: decoded(Buffer.concat(chunks), headers['content-encoding']), ...extra });
      };
      let stream: http2.ClientHttp2Stream;
      try {
        // endStream explicit: Node ends GET, HEAD and DELETE streams at the headers by default, and generated requests may carry a body.
        stream = this.#sessionFor().request({ ':method': req.method, ':path': req.path, ...req.headers }, { endStream: req.body.length === 0 });
      } catch (e) {
        resolve({ status: 0, headers: {}, trailers: {}, body: Buffer.alloc(0), unsent: (e as Error).message });
        return;
      }
      const timer = setTimeout(() => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        finish({ hung: status === 0 });
      }, this.deadlineMs);
      stream.on('response', (h) => {
        status = Number(h[':status']);
        headers = flat(h);
        if (req.streaming) streamTimer = setTimeout(() => (stream.close(http2.constants.NGHTTP2_CANCEL), finish({ cut: true })), this.streamMs);
      });
      stream.on('trailers', (t) => (trailers = flat(t)));
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_ANSWER) chunks.push(c);
      });
      stream.on('end', () => finish());
      stream.on('error', (e) => finish({ broken: e.message }));
      stream.on('close', () => finish(stream.rstCode && stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR ? { broken: `stream reset with code ${stream.rstCode}` } : {}));
      if (req.body.length > 0) stream.end(req.body);
    });
  }

  /** Closes the connections. */
  close(): void {
    this.#agent.destroy();
    this.#session?.destroy();
  }
}
