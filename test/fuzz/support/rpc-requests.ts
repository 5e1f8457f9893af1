/**
 * Generated RPC requests: Connect (unary JSON and proto, POST and GET, streaming envelopes) over
 * HTTP/1.1 and HTTP/2, and gRPC (HTTP/2) and gRPC-Web: every method of the API, paths that are not,
 * any token, wrong and missing content types, compressed and badly compressed bodies, broken
 * length prefixes and flags, timeouts of any form, oversized and forbidden headers.
 */
import * as zlib from 'node:zlib';
import type { DescMethod } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { API_SERVICES } from '../../../lib/apiserver/services';
import { jsonBody, protoBody } from './messages';
import type { WireRequest } from './wire';

/** Who a request claims to be; the sender turns it into an Authorization header. */
export type AuthKind = 'alice' | 'bob' | 'none' | 'garbage' | 'malformed' | 'huge';

/** A generated request: the wire request plus its caller. */
export interface FuzzRequest extends WireRequest {
  readonly auth: AuthKind;
}

/** Every RPC method of the API. */
export const RPC_METHODS: readonly DescMethod[] = API_SERVICES.flatMap((s) => s.methods);

/** `/package.Service/Method` of every RPC. */
export const RPC_PATHS: ReadonlySet<string> = new Set(RPC_METHODS.map(pathOf));

function pathOf(m: DescMethod): string {
  return `/${m.parent.typeName}/${m.name}`;
}

/** Valid callers mostly (so requests get past authentication to the handlers), the rest refused. */
export const authKind: fc.Arbitrary<AuthKind> = fc.oneof(
  { arbitrary: fc.constant('alice' as const), weight: 12 },
  { arbitrary: fc.constant('bob' as const), weight: 2 },
  { arbitrary: fc.constantFrom('none' as const, 'garbage' as const, 'malformed' as const, 'huge' as const), weight: 2 },
);

/** The path of an RPC, or one next to it that is not an RPC (the fallback and REST must answer those). */
const rpcPath = (m: DescMethod) =>
  fc.oneof(
    { arbitrary: fc.constant(pathOf(m)), weight: 24 },
    {
      arbitrary: fc.constantFrom(
        `/${m.parent.typeName}/Nope`,
        `/rayshift.v1.NopeService/${m.name}`,
        pathOf(m).toLowerCase(),
        `${pathOf(m)}/`,
        `${pathOf(m)}?x=1`,
        `/${m.parent.typeName}//${m.name}`,
        `/${m.parent.typeName}/${m.name}%00`,
        `/${m.parent.typeName}`,
      ),
      weight: 1,
    },
  );

/** Headers added to some requests: oversized, numerous, impersonation attempts, odd timeouts. */
const extraHeaders = (http: 1 | 2): fc.Arbitrary<Record<string, string>> =>
  fc.oneof(
    { arbitrary: fc.constant({}), weight: 16 },
    { arbitrary: fc.constant({ 'x-pad': 'a'.repeat(http === 1 ? 20_000 : 70_000) }), weight: 1 },
    { arbitrary: fc.constant(Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`x-h-${i}`, 'v']))), weight: 1 },
    { arbitrary: fc.constant({ 'impersonate-user': 'system:admin', 'impersonate-group': 'system:masters' }), weight: 1 },
    { arbitrary: fc.record({ 'connect-timeout-ms': fc.constantFrom('0', '1', '-1', 'abc', '99999999999', '1.5') }), weight: 1 },
  );

const gzip = (b: Buffer) => zlib.gzipSync(b);
const brotli = (b: Buffer) => zlib.brotliCompressSync(b);

/** A body's encoding: none mostly; gzip or br done right, or a name with bytes that are not that encoding, or an unknown name. */
const compression = fc.oneof(
  { arbitrary: fc.constant({ name: undefined as string | undefined, apply: (b: Buffer) => b }), weight: 10 },
  { arbitrary: fc.constant({ name: 'gzip', apply: gzip }), weight: 2 },
  { arbitrary: fc.constant({ name: 'br', apply: brotli }), weight: 1 },
  { arbitrary: fc.constantFrom('gzip', 'br').map((name) => ({ name, apply: (b: Buffer) => Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), b]) })), weight: 1 },
  { arbitrary: fc.constantFrom('identity', 'deflate', 'snappy', 'gzip, br', '').map((name) => ({ name, apply: (b: Buffer) => b })), weight: 1 },
);

/** One envelope: flags and a 32-bit length prefix. */
function envelope(flags: number, payload: Buffer, length = payload.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(length >>> 0, 1);
  return Buffer.concat([head, payload]);
}

/** How a message is framed: right, or with a lying length, bad flags, two messages, none, or no framing. */
const framing = fc.oneof(
  { arbitrary: fc.constant('one' as const), weight: 12 },
  { arbitrary: fc.constantFrom('long' as const, 'short' as const, 'two' as const, 'none' as const, 'flag80' as const, 'flag02' as const, 'huge' as const, 'bare' as const, 'compressed-flag' as const), weight: 1 },
);

function frame(kind: typeof framing extends fc.Arbitrary<infer K> ? K : never, payload: Buffer, compressedFlag: boolean): Buffer {
  const flags = compressedFlag ? 1 : 0;
  switch (kind) {
    case 'one':
      return envelope(flags, payload);
    case 'long':
      return envelope(flags, payload, payload.length + 7);
    case 'short':
      return envelope(flags, payload, Math.max(0, payload.length - 1));
    case 'two':
      return Buffer.concat([envelope(flags, payload), envelope(flags, payload)]);
    case 'none':
      return Buffer.alloc(0);
    case 'flag80':
      return envelope(0x80, payload);
    case 'flag02':
      return envelope(0x02, payload);
    case 'huge':
      return envelope(flags, payload.subarray(0, 3), 0xfffffff0);
    case 'bare':
      return payload;
    case 'compressed-flag':
      return envelope(1, payload);
  }
}

/** A Connect request: unary POST (JSON or proto, maybe compressed), unary GET, or a streaming envelope. */
export const connectRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.constantFrom(...RPC_METHODS),
    http: fc.oneof({ arbitrary: fc.constant(1 as const), weight: 4 }, { arbitrary: fc.constant(2 as const), weight: 1 }),
    style: fc.oneof(
      { arbitrary: fc.constant('post' as const), weight: 14 },
      { arbitrary: fc.constant('get' as const), weight: 3 },
      { arbitrary: fc.constant('stream' as const), weight: 2 },
      { arbitrary: fc.constant('odd-method' as const), weight: 1 },
    ),
    codec: fc.oneof({ arbitrary: fc.constant('json' as const), weight: 3 }, { arbitrary: fc.constant('proto' as const), weight: 2 }),
    contentType: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 14 },
      { arbitrary: fc.constantFrom('', 'text/plain', 'application/x-www-form-urlencoded', 'application/JSON', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'application/protobuf', 'multipart/form-data; boundary=x'), weight: 2 },
    ),
    version: fc.oneof({ arbitrary: fc.constant('1'), weight: 8 }, { arbitrary: fc.constantFrom(undefined, '2', 'v1', ''), weight: 1 }),
    auth: authKind,
    compression,
    framing,
    oddMethod: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE'),
  })
  .chain((d) =>
    fc.record({ d: fc.constant(d), path: rpcPath(d.method), body: d.codec === 'json' ? jsonBody(d.method.input) : protoBody(d.method.input), extra: extraHeaders(d.http) }),
  )
  .map(({ d, path, body, extra }): FuzzRequest => {
    const headers: Record<string, string> = { ...extra };
    if (d.version !== undefined) headers['connect-protocol-version'] = d.version;
    const streaming = d.method.methodKind === 'server_streaming';
    if (d.style === 'get') {
      const base64 = d.codec === 'proto' || d.compression.name !== undefined;
      const payload = d.compression.apply(body);
      const message = base64 ? payload.toString('base64url') : encodeURIComponent(payload.toString('utf8'));
      const query = `connect=v1${base64 ? '&base64=1' : ''}${d.compression.name !== undefined ? `&compression=${encodeURIComponent(d.compression.name)}` : ''}&encoding=${d.codec}&message=${message}`;
      return { http: d.http, method: 'GET', path: `${path}${path.includes('?') ? '&' : '?'}${query}`, headers, body: Buffer.alloc(0), auth: d.auth, streaming };
    }
    if (d.style === 'stream') {
      headers['content-type'] = d.contentType ?? `application/connect+${d.codec}`;
      if (d.compression.name !== undefined) headers['connect-content-encoding'] = d.compression.name;
      const compressed = d.compression.name !== undefined && d.compression.name !== 'identity';
      return { http: d.http, method: 'POST', path, headers, body: frame(d.framing, d.compression.apply(body), compressed), auth: d.auth, streaming };
    }
    headers['content-type'] = d.contentType ?? `application/${d.codec}`;
    if (d.compression.name !== undefined) headers['content-encoding'] = d.compression.name;
    return { http: d.http, method: d.style === 'odd-method' ? d.oddMethod : 'POST', path, headers, body: d.compression.apply(body), auth: d.auth, streaming };
  });

/** A gRPC request over HTTP/2, or a gRPC-Web one over either version. */
export const grpcRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.constantFrom(...RPC_METHODS),
    contentType: fc.oneof(
      { arbitrary: fc.constant('application/grpc'), weight: 10 },
      { arbitrary: fc.constant('application/grpc+proto'), weight: 3 },
      { arbitrary: fc.constant('application/grpc+json'), weight: 2 },
      { arbitrary: fc.constant('application/grpc-web+proto'), weight: 3 },
      { arbitrary: fc.constantFrom('application/grpc+xml', 'application/grpc-web-text', 'application/grpc-web+json', 'application/grpc; charset=utf-8'), weight: 1 },
    ),
    webOverH1: fc.boolean(),
    te: fc.oneof({ arbitrary: fc.constant('trailers'), weight: 8 }, { arbitrary: fc.constantFrom(undefined, 'gzip'), weight: 1 }),
    timeout: fc.oneof({ arbitrary: fc.constant(undefined), weight: 10 }, { arbitrary: fc.constantFrom('1S', '100m', '5H', '0n', 'garbage', '123456789H', '1'), weight: 1 }),
    compression,
    framing,
    auth: authKind,
  })
  .chain((d) =>
    fc.record({
      d: fc.constant(d),
      path: rpcPath(d.method),
      body: d.contentType.includes('json') ? jsonBody(d.method.input) : protoBody(d.method.input),
      extra: extraHeaders(2),
    }),
  )
  .map(({ d, path, body, extra }): FuzzRequest => {
    const web = d.contentType.startsWith('application/grpc-web');
    const http = web && d.webOverH1 ? 1 : 2;
    const headers: Record<string, string> = { ...(http === 2 ? extra : {}), 'content-type': d.contentType };
    if (d.te !== undefined && http === 2) headers.te = d.te;
    if (d.timeout !== undefined) headers['grpc-timeout'] = d.timeout;
    if (d.compression.name !== undefined) headers['grpc-encoding'] = d.compression.name;
    const compressed = d.compression.name !== undefined && d.compression.name !== 'identity';
    const payload = compressed ? d.compression.apply(body) : body;
    return { http, method: 'POST', path, headers, body: frame(d.framing, payload, compressed), auth: d.auth, streaming: d.method.methodKind === 'server_streaming' };
  });

/** The Authorization header of `kind`, given the test users' tokens. */
export function authorization(kind: AuthKind, tokens: { alice: string; bob: string }): Record<string, string> {
  switch (kind) {
    case 'alice':
      return { authorization: `Bearer ${tokens.alice}` };
    case 'bob':
      return { authorization: `Bearer ${tokens.bob}` };
    case 'none':
      return {};
    case 'garbage':
      return { authorization: 'Bearer not-a-token' };
    case 'malformed':
      return { authorization: `Basic ${Buffer.from('alice:secret').toString('base64')}` };
    case 'huge':
      return { authorization: `Bearer ${'t'.repeat(8_000)}` };
  }
}
