/**
 * Raw requests for the size-limit tests: large bodies streamed from one reused chunk (so the client
 * side allocates nothing that grows with the body), the upload stopped as soon as the server answers,
 * gzip bombs built as streams, and the peak RSS growth of this process while a request runs (the
 * server under test runs in this process).
 */
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as zlib from 'node:zlib';

/** What a raw request got back: HTTP status, headers and trailers merged, and the body text. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** A body: a prefix, `size` bytes of `fill`, and a suffix, produced chunk by chunk. */
export interface StreamedBody {
  readonly prefix?: Buffer;
  readonly size: number;
  readonly fill?: number;
  readonly suffix?: Buffer;
}

/** Total length of `body` in bytes. */
export function bodyLength(body: StreamedBody): number {
  return (body.prefix?.length ?? 0) + body.size + (body.suffix?.length ?? 0);
}

function* chunksOf(body: StreamedBody): Generator<Buffer> {
  if (body.prefix) yield body.prefix;
  const chunk = Buffer.alloc(64 * 1024, body.fill ?? 0x61);
  for (let left = body.size; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  if (body.suffix) yield body.suffix;
}

/** Writes `body` to `req` with backpressure until it is all written or `stopped()` says the server answered. */
async function pump(req: NodeJS.WritableStream & { destroyed: boolean }, body: StreamedBody, stopped: () => boolean): Promise<void> {
  for (const chunk of chunksOf(body)) {
    if (stopped() || req.destroyed) return;
    if (!req.write(chunk)) await new Promise<void>((r) => req.once('drain', () => r()).once('close', () => r()));
  }
  if (!stopped() && !req.destroyed) req.end();
}

/** An HTTP/1.1 POST with a streamed body (`content-length` sent unless `chunked`), over TLS for `https:` URLs. */
export function h1Request(url: string, ca: string | Buffer | undefined, headers: Record<string, string>, body: StreamedBody, chunked = false): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const all = chunked ? headers : { ...headers, 'content-length': String(bodyLength(body)) };
    const request = url.startsWith('https:') ? https.request : http.request;
    const req = request(url, { method: 'POST', headers: all, ca, agent: false }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: { ...res.headers }, text });
        req.destroy();
      });
    });
    // The server may close the connection while the rest of an oversized body is still being sent.
    req.on('error', (e) => (answered ? undefined : reject(e)));
    void pump(req, body, () => answered);
  });
}

/** An HTTP/2 POST (gRPC) with a streamed body, over TLS for an `https:` origin; trailers are merged into the headers. */
export function h2Request(origin: string, ca: string | Buffer | undefined, path: string, headers: Record<string, string>, body: StreamedBody): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(origin, { ca });
    session.on('error', reject);
    let answered = false;
    const merged: Record<string, string | string[] | undefined> = {};
    let status = 0;
    let text = '';
    const req = session.request({ ':method': 'POST', ':path': path, ...headers });
    req.on('response', (h) => {
      answered = true;
      status = Number(h[':status']);
      Object.assign(merged, h);
    });
    req.on('trailers', (t) => Object.assign(merged, t));
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    const done = () => {
      session.close();
      resolve({ status, headers: merged, text });
    };
    req.on('end', done);
    req.on('error', (e) => (answered ? done() : reject(e)));
    void pump(req, body, () => answered);
  });
}

/** A gzip stream of `size` zero bytes (a decompression bomb: about 1/1000 of its inflated size). */
export async function gzipBomb(size: number): Promise<Buffer> {
  const gzip = zlib.createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise<void>((r) => gzip.on('end', () => r()));
  for (const chunk of chunksOf({ size, fill: 0 })) if (!gzip.write(chunk)) await new Promise<void>((r) => gzip.once('drain', () => r()));
  gzip.end();
  await ended;
  return Buffer.concat(out);
}

/** A gRPC / gRPC-Web envelope header: flags (1 = compressed) and the payload length. */
export function envelopeHeader(compressed: boolean, length: number): Buffer {
  const h = Buffer.alloc(5);
  h[0] = compressed ? 1 : 0;
  h.writeUInt32BE(length, 1);
  return h;
}

/** Runs `work`, sampling this process's RSS every few ms; resolves with its result and the peak growth in MB. */
export async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growthMb: (peak - before) / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}
