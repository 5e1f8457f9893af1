/**
 * The oracle of the protocol fuzzer: what a well-formed answer is in each protocol, written from the
 * protocols' specifications (not from the server's code), and which answers are server errors.
 *
 * - REST: an error is google.rpc.Status JSON (`code` 1–16, `message`) with the HTTP status of its code
 *   in gRPC transcoding, or one of the refusals the server documents (405, 413, 415).
 * - Connect unary: an error is `{"code": "<name>", "message"?}` JSON with the Connect HTTP status of the
 *   code; protocol negotiation may refuse with a bare 405 or 415.
 * - Connect streaming, gRPC, gRPC-Web: HTTP 200 with the status in an end-stream message, in the
 *   trailers (or trailers-only headers), or in a trailer frame; `grpc-message` percent-encoded.
 *
 * A server error is an HTTP 5xx or a status meaning UNKNOWN, INTERNAL, DATA_LOSS or UNAVAILABLE
 * (the Kubernetes API is up during the run, so UNAVAILABLE is the server's own failure too), except
 * the one INTERNAL gRPC's compression spec prescribes for a client's fault (`compressedWithoutEncoding`).
 */
import * as zlib from 'node:zlib';
import type { WireAnswer, WireRequest } from './wire';

/** The protocol a request speaks, as the server must read it from its path and content type. */
export type Surface = 'rest' | 'connect' | 'connect-stream' | 'grpc' | 'grpc-web';

/** One thing wrong with an answer. */
export interface Finding {
  readonly kind: 'server-error' | 'malformed' | 'no-answer';
  readonly detail: string;
}

/** The Connect name of each gRPC status code, by number. */
const CONNECT_NAMES = ['ok', 'canceled', 'unknown', 'invalid_argument', 'deadline_exceeded', 'not_found', 'already_exists', 'permission_denied', 'resource_exhausted', 'failed_precondition', 'aborted', 'out_of_range', 'unimplemented', 'internal', 'unavailable', 'data_loss', 'unauthenticated'];

/**
 * The HTTP status of each code, by number: gRPC transcoding's (google/rpc/code.proto) and the Connect
 * protocol's (connectrpc.com/docs/protocol#error-codes) agree on every code.
 */
const HTTP_STATUS = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401];

/**
 * Codes that say the server failed rather than the request: UNKNOWN, INTERNAL, UNAVAILABLE,
 * DATA_LOSS. Not UNIMPLEMENTED on gRPC, which prescribes it for a message encoding the server lacks
 * (and connect-node answers it to a unary call without a message); on Connect it is a 501, a
 * server error unless the request named an encoding the server lacks.
 */
const SERVER_FAILURES = new Set([2, 13, 14, 15]);

/** Encodings the server advertises; a request naming another may be answered UNIMPLEMENTED (501), as gRPC and Connect prescribe. */
const SUPPORTED_ENCODINGS = new Set(['gzip', 'br', 'identity']);

/** Whether the request names a message encoding the server does not support. */
function unsupportedEncoding(req: WireRequest): boolean {
  const query = /[?&]compression=([^&]*)/.exec(req.path)?.[1];
  const names = [req.headers['content-encoding'], req.headers['connect-content-encoding'], req.headers['grpc-encoding'], query === undefined ? undefined : decodeSafe(query)];
  return names.some((n) => n !== undefined && !SUPPORTED_ENCODINGS.has(n));
}

/**
 * Whether the request's header block is past what Node's HTTP layers take (16 KiB on HTTP/1.1, 64 KiB
 * or 128 fields on HTTP/2) or its path is not one HTTP/2 allows: they refuse it before the server
 * sees it (431, or a reset stream), which is theirs to do.
 */
function refusedByHttpLayer(req: WireRequest, answer: WireAnswer): boolean {
  const bytes = Object.entries(req.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, req.path.length);
  const oversized = bytes > 16 * 1024 || Object.keys(req.headers).length > 100;
  if (oversized && answer.status === 431 && answer.body.length === 0) return true;
  if (oversized && /REFUSED_STREAM|ENHANCE_YOUR_CALM/.test(answer.broken ?? '')) return true;
  return req.http === 2 && !req.path.startsWith('/') && /PROTOCOL_ERROR/.test(answer.broken ?? '');
}

/** REST refusals the server documents, with the code their body carries. */
const REST_REFUSALS: Record<number, number> = { 405: 12, 413: 8, 415: 3 };

/** The request's surface: RPC paths by content type (Connect when none), every other path REST. */
export function surfaceOf(req: WireRequest, rpcPaths: ReadonlySet<string>): Surface {
  const path = req.path.split('?')[0];
  if (!rpcPaths.has(path)) return 'rest';
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/grpc-web')) return 'grpc-web';
  if (type.startsWith('application/grpc')) return 'grpc';
  if (type.startsWith('application/connect+')) return 'connect-stream';
  return 'connect';
}

function json(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A `grpc-status` value: 0–16 as decimal digits. */
function grpcStatusOf(value: string | undefined): number | undefined {
  return value !== undefined && /^(0|[1-9][0-9]?)$/.test(value) && Number(value) <= 16 ? Number(value) : undefined;
}

function percentDecodes(value: string): boolean {
  try {
    decodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
}

/** The envelopes of a gRPC / Connect-stream body: flags and payloads; undefined when the framing is broken. */
export function envelopes(body: Buffer): { flags: number; payload: Buffer }[] | undefined {
  const out: { flags: number; payload: Buffer }[] = [];
  for (let at = 0; at < body.length; ) {
    if (body.length - at < 5) return undefined;
    const length = body.readUInt32BE(at + 1);
    if (body.length - at - 5 < length) return undefined;
    out.push({ flags: body[at], payload: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}

/**
 * Whether the request holds a complete message with its Compressed-Flag set while naming no
 * `grpc-encoding` (or `identity`): gRPC's compression spec (grpc/grpc doc/compression.md, test case
 * 6) says such an ill-constructed message "MUST fail with INTERNAL status, its associated description
 * indicating the invalid Compressed-Flag condition". gRPC-Web keeps gRPC's semantics.
 */
function compressedWithoutEncoding(req: WireRequest): boolean {
  const encoding = req.headers['grpc-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return false;
  for (let at = 0; req.body.length - at >= 5; ) {
    const length = req.body.readUInt32BE(at + 1);
    if (req.body.length - at - 5 < length) return false;
    if ((req.body[at] & 1) === 1) return true;
    at += 5 + length;
  }
  return false;
}

/** A compressed message of `encoding` (gzip or br) inflated; undefined when it does not inflate. */
function inflate(payload: Buffer, encoding: string | undefined): Buffer | undefined {
  try {
    return encoding === 'gzip' ? zlib.gunzipSync(payload) : encoding === 'br' ? zlib.brotliDecompressSync(payload) : undefined;
  } catch {
    return undefined;
  }
}

function checkGrpc(req: WireRequest, answer: WireAnswer, web: boolean): Finding[] {
  if (answer.status === 415) return []; // not a gRPC subtype the server speaks: refused before gRPC starts
  if (answer.status !== 200) return [{ kind: answer.status >= 500 ? 'server-error' : 'malformed', detail: `HTTP ${answer.status} instead of 200 with a grpc-status` }];
  let raw: string | undefined = answer.trailers['grpc-status'] ?? answer.headers['grpc-status'];
  let message: string | undefined = answer.trailers['grpc-message'] ?? answer.headers['grpc-message'];
  if (raw === undefined && web) {
    const frames = envelopes(answer.body);
    const trailer = frames?.find((f) => (f.flags & 0x80) !== 0);
    // PROTOCOL-WEB.md: 0x81 is "a compressed trailer", in the response's grpc-encoding.
    const text = (trailer && (trailer.flags & 1) === 1 ? inflate(trailer.payload, answer.headers['grpc-encoding']) : trailer?.payload)?.toString('latin1') ?? '';
    raw = /^grpc-status:\s*(\S+)\s*$/im.exec(text)?.[1];
    message = /^grpc-message:\s*(.*?)\s*$/im.exec(text)?.[1];
  }
  const code = grpcStatusOf(raw);
  if (code === undefined) return [{ kind: 'malformed', detail: `grpc-status ${JSON.stringify(raw)} is not a status code` }];
  const findings: Finding[] = [];
  if (message !== undefined && !percentDecodes(message)) findings.push({ kind: 'malformed', detail: `grpc-message ${JSON.stringify(message)} is not percent-encoded` });
  // INTERNAL where the gRPC spec prescribes it, and only with the description it asks for.
  const prescribed = code === 13 && compressedWithoutEncoding(req) && /compress/i.test(decodeSafe(message));
  if (SERVER_FAILURES.has(code) && !prescribed) findings.push({ kind: 'server-error', detail: `grpc-status ${code} (${CONNECT_NAMES[code]}): ${decodeSafe(message)}` });
  if (!web && envelopes(answer.body) === undefined) findings.push({ kind: 'malformed', detail: 'the answer body is not length-prefixed messages' });
  return findings;
}

function decodeSafe(message: string | undefined): string {
  return message === undefined ? '' : percentDecodes(message) ? decodeURIComponent(message) : message;
}

function checkConnectError(body: unknown, status: number, unsupportedEncodingAllowed: boolean): Finding[] {
  if (!isRecord(body) || typeof body.code !== 'string' || !CONNECT_NAMES.includes(body.code) || body.code === 'ok') {
    return [{ kind: 'malformed', detail: `not a Connect error: ${JSON.stringify(body)?.slice(0, 200)}` }];
  }
  const findings: Finding[] = [];
  if (body.message !== undefined && typeof body.message !== 'string') findings.push({ kind: 'malformed', detail: 'Connect error message is not a string' });
  const code = CONNECT_NAMES.indexOf(body.code);
  if (status !== 0 && HTTP_STATUS[code] !== status) findings.push({ kind: 'malformed', detail: `HTTP ${status} for Connect code ${body.code} (the protocol says ${HTTP_STATUS[code]})` });
  if (SERVER_FAILURES.has(code) || (code === 12 && !unsupportedEncodingAllowed)) findings.push({ kind: 'server-error', detail: `Connect ${body.code}: ${String(body.message)}` });
  return findings;
}

function checkConnect(req: WireRequest, answer: WireAnswer): Finding[] {
  if (answer.status === 405 || answer.status === 415) return [];
  const type = answer.headers['content-type'] ?? '';
  if (answer.status === 200) {
    if (req.method === 'HEAD') return [];
    if (type.startsWith('application/json') && json(answer.body) === undefined) return [{ kind: 'malformed', detail: 'HTTP 200 with a JSON content type but no JSON' }];
    return type.startsWith('application/json') || type.startsWith('application/proto') ? [] : [{ kind: 'malformed', detail: `HTTP 200 with content type ${JSON.stringify(type)}` }];
  }
  if (answer.status >= 500 && !type.startsWith('application/json')) return [{ kind: 'server-error', detail: `HTTP ${answer.status}: ${answer.body.toString('utf8', 0, 200)}` }];
  if (req.method === 'HEAD') return answer.status >= 500 ? [{ kind: 'server-error', detail: `HTTP ${answer.status} to HEAD` }] : [];
  if (!type.startsWith('application/json')) return [{ kind: 'malformed', detail: `HTTP ${answer.status} with content type ${JSON.stringify(type)}, not a Connect error` }];
  return checkConnectError(json(answer.body), answer.status, unsupportedEncoding(req));
}

function checkConnectStream(req: WireRequest, answer: WireAnswer): Finding[] {
  if (answer.status === 405 || answer.status === 415) return [];
  if (answer.status !== 200) return [{ kind: answer.status >= 500 ? 'server-error' : 'malformed', detail: `HTTP ${answer.status} to a Connect stream` }];
  const frames = envelopes(answer.body);
  if (frames === undefined) return answer.cut ? [] : [{ kind: 'malformed', detail: 'the Connect stream is not enveloped messages' }];
  const end = frames.find((f) => (f.flags & 0x02) !== 0);
  if (!end) return answer.cut ? [] : [{ kind: 'malformed', detail: 'the Connect stream has no end-stream message' }];
  // The compressed bit applies to the end-stream message too, in the response's Connect-Content-Encoding.
  const payload = (end.flags & 1) === 1 ? inflate(end.payload, answer.headers['connect-content-encoding']) : end.payload;
  const parsed = payload === undefined ? undefined : json(payload);
  if (!isRecord(parsed)) return [{ kind: 'malformed', detail: 'the end-stream message is not a JSON object' }];
  return parsed.error === undefined ? [] : checkConnectError(parsed.error, 0, unsupportedEncoding(req));
}

function checkRest(req: WireRequest, answer: WireAnswer): Finding[] {
  const type = answer.headers['content-type'] ?? '';
  if (answer.status < 400) {
    if (answer.status === 200 && type.startsWith('application/json') && req.method !== 'HEAD' && json(answer.body) === undefined) return [{ kind: 'malformed', detail: 'HTTP 200 JSON that does not parse' }];
    return [];
  }
  if (answer.status === 431 && answer.body.length === 0) return []; // Node's own answer to oversized headers
  const findings: Finding[] = [];
  if (answer.status >= 500) findings.push({ kind: 'server-error', detail: `HTTP ${answer.status}: ${answer.body.toString('utf8', 0, 300)}` });
  if (req.method === 'HEAD') return findings;
  const body = json(answer.body);
  if (!type.startsWith('application/json') || !isRecord(body) || typeof body.code !== 'number' || !(body.code >= 1 && body.code <= 16) || typeof body.message !== 'string') {
    return [...findings, { kind: 'malformed', detail: `HTTP ${answer.status} is not google.rpc.Status JSON: ${JSON.stringify(type)} ${answer.body.toString('utf8', 0, 200)}` }];
  }
  if (body.details !== undefined && !Array.isArray(body.details)) findings.push({ kind: 'malformed', detail: 'google.rpc.Status details is not a list' });
  const expected = REST_REFUSALS[answer.status] === body.code ? answer.status : HTTP_STATUS[body.code];
  if (expected !== answer.status) findings.push({ kind: 'malformed', detail: `HTTP ${answer.status} for code ${body.code} (transcoding says ${HTTP_STATUS[body.code]})` });
  if (SERVER_FAILURES.has(body.code) && answer.status < 500) findings.push({ kind: 'server-error', detail: `code ${body.code}: ${body.message}` });
  return findings;
}

/** Everything wrong with `answer` to `req`. */
export function checkAnswer(req: WireRequest, answer: WireAnswer, rpcPaths: ReadonlySet<string>): Finding[] {
  if (answer.hung) return [{ kind: 'no-answer', detail: 'no answer within the deadline' }];
  if (refusedByHttpLayer(req, answer)) return [];
  if (answer.status === 0) return [{ kind: 'no-answer', detail: `no answer: ${answer.broken ?? 'unknown'}` }];
  const surface = surfaceOf(req, rpcPaths);
  if (answer.cut) {
    // A stream still open when the client stopped reading: only its head can be judged.
    return answer.status >= 500 ? [{ kind: 'server-error', detail: `HTTP ${answer.status} opening a stream` }] : [];
  }
  const findings =
    surface === 'rest'
      ? checkRest(req, answer)
      : surface === 'connect'
        ? checkConnect(req, answer)
        : surface === 'connect-stream'
          ? checkConnectStream(req, answer)
          : checkGrpc(req, answer, surface === 'grpc-web');
  if (answer.broken && !answer.cut && surface !== 'rest' && surface !== 'connect') findings.push({ kind: 'no-answer', detail: `the answer broke off: ${answer.broken}` });
  return findings;
}
