/**
 * Requests below what an HTTP client will send: raw HTTP/1.1 bytes (broken request lines, headers
 * without colons or with control characters, conflicting lengths, bad chunking, oversized heads) and
 * raw HTTP/2 frames after a valid preface (any type, flags, stream, length and payload), each on its
 * own TLS connection. Node's HTTP layers should refuse them; the property is that the server's
 * process survives, answers nothing 5xx, and keeps serving.
 */
import * as tls from 'node:tls';
import fc from 'fast-check';
import { RPC_PATHS } from './rpc-requests';

/** A raw exchange: the bytes sent and the ALPN protocol to speak. */
export interface RawExchange {
  readonly alpn: 'http/1.1' | 'h2';
  readonly bytes: Buffer;
}

/** What came back on a raw connection, up to 64 KiB. */
export interface RawAnswer {
  readonly data: Buffer;
  /** The connection was still open at the deadline (the client closed it). */
  readonly open: boolean;
}

const CRLF = '\r\n';
const anyRpcPath = fc.constantFrom(...RPC_PATHS);

/** A request line: usually well formed, else broken in one of the ways parsers trip on. */
const requestLine = fc.oneof(
  { arbitrary: fc.tuple(fc.constantFrom('GET', 'POST', 'PUT'), fc.oneof(anyRpcPath, fc.constantFrom('/healthz', '/apis/rayshift/v1/whoami'))).map(([m, p]) => `${m} ${p} HTTP/1.1`), weight: 3 },
  {
    arbitrary: fc.constantFrom(
      'GET /healthz',
      'GET  /healthz HTTP/1.1',
      'G\u0000T /healthz HTTP/1.1',
      'GET /\u0001 HTTP/1.1',
      'GET /healthz HTTP/9.9',
      'GET /healthz HTTP/2.0',
      'GET http://evil.example/healthz HTTP/1.1',
      `GET /${'a'.repeat(70_000)} HTTP/1.1`,
      'PRI * HTTP/2.0',
      '',
      '\u00ff\u00fe',
    ),
    weight: 2,
  },
);

/** Header lines, some malformed. */
const headerLines = fc.array(
  fc.oneof(
    { arbitrary: fc.constantFrom('Host: 127.0.0.1', 'Content-Type: application/json', 'Authorization: Bearer x', 'Connection: close'), weight: 4 },
    {
      arbitrary: fc.constantFrom(
        'NoColon',
        ': empty-name',
        'Bad Name: x',
        'X-Ctl: a\u0000b',
        'X-Fold: a\r\n b',
        'Content-Length: 5, 6',
        'Content-Length: -1',
        'Content-Length: 99999999999999999999',
        'Transfer-Encoding: chunked',
        'Transfer-Encoding: gzip, chunked',
        'Transfer-Encoding: chunked\r\nContent-Length: 3',
        `X-Big: ${'b'.repeat(20_000)}`,
        'Expect: 100-continue',
        'Upgrade: h2c',
      ),
      weight: 2,
    },
  ),
  { maxLength: 5 },
);

/** A body after the head: nothing, text, or chunked encoding done wrong. */
const rawBody = fc.oneof(fc.constant(''), fc.constantFrom('{}', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\nx\r\n', 'fffffffffffffffff\r\n', '3\r\nab'), fc.string({ maxLength: 30 }));

/** An HTTP/1.1 exchange of raw bytes. */
const h1Exchange: fc.Arbitrary<RawExchange> = fc
  .tuple(requestLine, headerLines, rawBody, fc.boolean())
  .map(([line, headers, body, endHead]) => ({ alpn: 'http/1.1' as const, bytes: Buffer.from(`${line}${CRLF}${headers.map((h) => h + CRLF).join('')}${endHead ? CRLF : ''}${body}`, 'latin1') }));

/** One HTTP/2 frame: 9-byte header (24-bit length, type, flags, 31-bit stream) and payload; the length may lie. */
const h2Frame = fc
  .record({
    type: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 10, max: 255 })),
    flags: fc.integer({ min: 0, max: 255 }),
    stream: fc.oneof(fc.constantFrom(0, 1, 3, 2, 0x7fffffff), fc.integer({ min: 0, max: 2 ** 31 - 1 })),
    payload: fc.uint8Array({ maxLength: 48 }),
    lie: fc.oneof({ arbitrary: fc.constant(0), weight: 5 }, { arbitrary: fc.integer({ min: -8, max: 70_000 }), weight: 1 }),
  })
  .map(({ type, flags, stream, payload, lie }) => {
    const head = Buffer.alloc(9);
    head.writeUIntBE(Math.max(0, Math.min(0xffffff, payload.length + lie)), 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(stream >>> 0, 5);
    return Buffer.concat([head, Buffer.from(payload)]);
  });

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);

/** An HTTP/2 exchange: the preface and empty SETTINGS (mostly), then random frames. */
const h2Exchange: fc.Arbitrary<RawExchange> = fc
  .tuple(fc.oneof({ arbitrary: fc.constant(true), weight: 8 }, { arbitrary: fc.constant(false), weight: 1 }), fc.array(h2Frame, { minLength: 1, maxLength: 6 }))
  .map(([preface, frames]) => ({ alpn: 'h2' as const, bytes: Buffer.concat([...(preface ? [PREFACE, EMPTY_SETTINGS] : []), ...frames]) }));

/** A raw exchange of either protocol. */
export const rawExchange: fc.Arbitrary<RawExchange> = fc.oneof(h1Exchange, h2Exchange);

/** Sends `exchange` on a new TLS connection and reads until the server closes it or `waitMs` pass. */
export function sendRaw(port: number, ca: string | Buffer, exchange: RawExchange, waitMs = 1_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const socket = tls.connect({ host: '127.0.0.1', port, ca, ALPNProtocols: [exchange.alpn], servername: 'localhost' });
    const done = (open: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), open });
    };
    const timer = setTimeout(() => done(true), waitMs);
    // end(): the server sees the end of the request at once instead of waiting for more bytes.
    socket.on('secureConnect', () => socket.end(exchange.bytes));
    socket.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 64 * 1024) chunks.push(c);
    });
    socket.on('end', () => done(false));
    socket.on('close', () => done(false));
    socket.on('error', () => done(false));
  });
}

/** The HTTP/1.1 statuses in a raw answer (several when a pipelined request was answered too). */
export function h1Statuses(data: Buffer): number[] {
  return [...data.toString('latin1').matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
}
