/**
 * A wrapper around each handler of the Connect router (gRPC, gRPC-Web, Connect), for what Connect
 * leaves out:
 *
 * - Request bytes that are no message are INVALID_ARGUMENT. Connect answers a binary message it
 *   cannot parse with INTERNAL (HTTP 500, "parse binary: ..."), which blames the server for the
 *   client's bytes; and its JSON parser drops enum names it does not know, silently. So each request
 *   message is decoded here as it arrives (inflated first when compressed), and a failure is thrown
 *   from the body stream, where Connect answers it in the caller's protocol before parsing anything
 *   (a Connect GET's message, in the query, is checked before the handler and answered here,
 *   inflated first when compressed). Envelope flags other than "compressed" are refused too: Connect
 *   would parse such a frame's bytes anyway and blame itself when they are no message.
 * - Messages are measured against `STRUCT_LIMITS` before they are decoded (`input-shape.ts`), so
 *   that nesting or a mass of values costs no decoding: INVALID_ARGUMENT naming the field and the limit.
 * - The access log learns the code the caller got (gRPC trailers, gRPC-Web trailer frame, Connect
 *   error JSON or end-stream message) and the body sizes.
 */
import { fromBinary, fromJson, type DescMessage, type JsonValue } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { createAsyncIterable, type Compression, type UniversalHandler, type UniversalServerRequest, type UniversalServerResponse } from '@connectrpc/connect/protocol';
import { codeFromHttpStatus, codeFromString, codeToHttpStatus, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import { CALL_RECORD, type CallRecord } from './access-log';
import { BOUNDED_COMPRESSIONS } from './compression';
import { tooComplex, wellFormed } from './errors';
import { binaryShapeProblem, jsonShapeProblem } from './input-shape';
import { requireKnownEnums } from './request-checks';
import { rpcProtocolOf, type RpcProtocol } from './rpc-errors';

/** How the request messages of one call are framed and encoded, from its headers. */
interface RequestFormat {
  readonly protocol: RpcProtocol;
  readonly json: boolean;
  /** gRPC, gRPC-Web and Connect streams frame messages in 5-byte-headed envelopes; Connect unary does not. */
  readonly enveloped: boolean;
  /** The negotiated compression; undefined for none, null for one this server does not know (Connect refuses it). */
  readonly compression: Compression | undefined | null;
}

function formatOf(header: Headers): RequestFormat {
  const media = (header.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const unary = media === 'application/json' || media === 'application/proto';
  const protocol = rpcProtocolOf(media);
  const encodingHeader = protocol === 'connect' ? (unary ? 'content-encoding' : 'connect-content-encoding') : 'grpc-encoding';
  const encoding = (header.get(encodingHeader) ?? 'identity').trim().toLowerCase();
  const compression = encoding === 'identity' ? undefined : (BOUNDED_COMPRESSIONS.find((c) => c.name === encoding) ?? null);
  return { protocol, json: media.endsWith('json'), enveloped: !unary, compression };
}

const notAMessage = (desc: DescMessage, e: unknown) => new ConnectError(`the request is not a valid ${desc.typeName} message: ${wellFormed((e as Error).message)}`, Code.InvalidArgument);

/**
 * Fails with INVALID_ARGUMENT unless `bytes` are a message of type `desc` whose enum names are known.
 * JSON is decoded here too (as Connect does: unknown keys ignored), since Connect's own message for
 * a value that does not decode quotes it, unpaired surrogates included, which gRPC cannot send.
 */
function checkMessage(desc: DescMessage, bytes: Uint8Array, json: boolean): void {
  if (!json) {
    const shape = binaryShapeProblem(desc, bytes);
    if (shape) throw tooComplex(shape);
    try {
      fromBinary(desc, bytes);
    } catch (e) {
      throw notAMessage(desc, e);
    }
    return;
  }
  const text = Buffer.from(bytes).toString('utf8');
  const shape = jsonShapeProblem(text);
  if (shape) throw tooComplex(shape);
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    // Connect's own parser answers malformed JSON with INVALID_ARGUMENT.
    return;
  }
  requireKnownEnums(desc, value);
  try {
    fromJson(desc, value, { ignoreUnknownFields: true });
  } catch (e) {
    throw notAMessage(desc, e);
  }
}

/**
 * Checks the message of a Connect unary GET, which travels in the query (`?encoding=json&message=…`,
 * `base64=1` for binary, `compression=gzip` inflated here within `maxBytes`) rather than in the body.
 * A compression this server does not know is left to Connect, which refuses it (UNIMPLEMENTED).
 */
async function checkQueryMessage(desc: DescMessage, url: string, maxBytes: number): Promise<void> {
  const query = new URL(url).searchParams;
  const encoding = (query.get('compression') ?? 'identity').toLowerCase();
  const compression = encoding === 'identity' ? undefined : BOUNDED_COMPRESSIONS.find((c) => c.name === encoding);
  if (encoding !== 'identity' && !compression) return;
  const raw = query.get('message') ?? '';
  const bytes = query.get('base64') === '1' ? Buffer.from(raw, 'base64url') : Buffer.from(raw, 'utf8');
  checkMessage(desc, compression ? await compression.decompress(bytes, maxBytes) : bytes, query.get('encoding') === 'json');
}

/** A Connect unary error response (what Connect itself answers), for refusals made before its handler runs. */
function connectErrorResponse(err: ConnectError): UniversalServerResponse {
  return { status: codeToHttpStatus(err.code), header: new Headers({ 'content-type': 'application/json' }), body: createAsyncIterable([errorToJsonBytes(err, {})]) };
}

async function checkPayload(desc: DescMessage, format: RequestFormat, payload: Uint8Array, compressed: boolean, maxBytes: number): Promise<void> {
  if (compressed && format.compression === undefined) throw compressedWithoutEncoding(format);
  // An encoding this server does not know: Connect refuses the call (UNIMPLEMENTED) before reading.
  if (compressed && format.compression === null) return;
  checkMessage(desc, compressed ? await format.compression!.decompress(payload, maxBytes) : payload, format.json);
}

/**
 * A message whose compressed flag is set in a call that names no encoding. gRPC's compression spec
 * (grpc/grpc doc/compression.md, test case 6) prescribes INTERNAL with a description of the flag,
 * for gRPC-Web too; the Connect protocol only says the bit "must be 0", so there it is the client's
 * fault: INVALID_ARGUMENT.
 */
function compressedWithoutEncoding(format: RequestFormat): ConnectError {
  if (format.protocol === 'connect') return new ConnectError('the message is flagged compressed, but the call names no Connect-Content-Encoding', Code.InvalidArgument);
  return new ConnectError('the message has its Compressed-Flag set, but the call names no grpc-encoding (gRPC answers this with INTERNAL)', Code.Internal);
}

/**
 * Refuses an envelope flag a request message cannot carry: only bit 0 (compressed) is defined for
 * requests; 0x02 (Connect end-stream) and 0x80 (gRPC-Web trailers) are the server's, the rest reserved.
 */
function requireRequestFlags(flags: number): void {
  if ((flags & ~1) !== 0) {
    throw new ConnectError(`envelope flags 0x${flags.toString(16).padStart(2, '0')} do not mark a request message (only 0x01, compressed, is defined for requests)`, Code.InvalidArgument);
  }
}

/** One framed message: flags (1 compressed; higher bits mark end-stream and trailer frames) and payload. */
interface Envelope {
  readonly flags: number;
  readonly payload: Buffer;
}

/**
 * Splits a byte stream into envelopes as it arrives: each call takes the next chunk and returns the
 * envelopes it completes. An envelope declared larger than `maxBytes` is skipped, not kept (Connect
 * refuses it by its header).
 */
function envelopeSplitter(maxBytes: number): (chunk: Uint8Array) => Envelope[] {
  let header = Buffer.alloc(0);
  let parts: Buffer[] = [];
  let have = 0;
  let skip = 0;
  return (chunk) => {
    const done: Envelope[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length - at);
        skip -= n;
        at += n;
        continue;
      }
      if (header.length < 5) {
        const n = Math.min(5 - header.length, chunk.length - at);
        header = Buffer.concat([header, chunk.subarray(at, at + n)]);
        at += n;
        if (header.length < 5) continue;
        if (header.readUInt32BE(1) > maxBytes) {
          skip = header.readUInt32BE(1);
          header = Buffer.alloc(0);
          continue;
        }
      }
      const length = header.readUInt32BE(1);
      const n = Math.min(length - have, chunk.length - at);
      parts.push(Buffer.from(chunk.subarray(at, at + n)));
      have += n;
      at += n;
      if (have === length) {
        done.push({ flags: header[0], payload: Buffer.concat(parts) });
        header = Buffer.alloc(0);
        parts = [];
        have = 0;
      }
    }
    return done;
  };
}

/**
 * The request body, passed on chunk by chunk, with each message checked before the chunk that
 * completes it is passed on. Keeps at most one message of at most `maxBytes`.
 */
async function* checkedBody(body: AsyncIterable<Uint8Array>, desc: DescMessage, format: RequestFormat, maxBytes: number, record: CallRecord | undefined): AsyncGenerator<Uint8Array> {
  const split = format.enveloped ? envelopeSplitter(maxBytes) : undefined;
  const whole: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (record) record.bytesIn = total;
    if (split) {
      for (const e of split(chunk)) {
        requireRequestFlags(e.flags);
        await checkPayload(desc, format, e.payload, (e.flags & 1) === 1, maxBytes);
      }
    } else if (total <= maxBytes) {
      whole.push(Buffer.from(chunk));
    }
    yield chunk;
  }
  // An unframed (Connect unary) body over the limit is Connect's to refuse.
  if (!split && total <= maxBytes) await checkPayload(desc, format, Buffer.concat(whole), format.compression !== undefined, maxBytes);
}

/** The code a finished RPC response carries, or undefined for OK. */
function answeredCode(requestHeader: Headers, res: UniversalServerResponse, last: Uint8Array | undefined): Code | undefined {
  const grpcStatus = res.trailer?.get('grpc-status') ?? res.header?.get('grpc-status');
  if (grpcStatus !== null && grpcStatus !== undefined) return Number(grpcStatus) === 0 ? undefined : (Number(grpcStatus) as Code);
  const media = (requestHeader.get('content-type') ?? '').toLowerCase();
  const protocol = rpcProtocolOf(media);
  const frame = (flag: number) => (last && last.length >= 5 && (last[0] & flag) === flag ? Buffer.from(last.subarray(5)) : undefined);
  if (protocol === 'grpc-web') {
    const trailer = frame(0x80);
    if (!trailer) return undefined;
    const status = /grpc-status:\s*(\d+)/i.exec(trailer.toString('latin1'));
    return status ? (Number(status[1]) === 0 ? undefined : (Number(status[1]) as Code)) : Code.Unknown;
  }
  if (protocol !== 'connect') return undefined;
  const parse = (bytes: Buffer | Uint8Array | undefined): { code?: unknown; error?: { code?: unknown } } | undefined => {
    try {
      return bytes ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as { code?: unknown; error?: { code?: unknown } }) : undefined;
    } catch {
      return undefined;
    }
  };
  if (media.startsWith('application/connect+')) {
    const end = frame(0x02);
    if (!end) return undefined;
    const error = parse(end)?.error;
    return error ? (codeFromString(String(error.code)) ?? Code.Unknown) : undefined;
  }
  if (res.status === 200) return undefined;
  return codeFromString(String(parse(last)?.code)) ?? codeFromHttpStatus(res.status);
}

/** The response body passed on, its size and final code noted in `record`. */
async function* observedBody(body: AsyncIterable<Uint8Array>, requestHeader: Headers, res: UniversalServerResponse, record: CallRecord): AsyncGenerator<Uint8Array> {
  let last: Uint8Array | undefined;
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    record.bytesOut = size;
    last = chunk;
    yield chunk;
  }
  record.code = answeredCode(requestHeader, res, last);
}

function guarded(handler: UniversalHandler, maxBytes: number): UniversalHandler {
  const fn = async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
    const record = req.contextValues?.get(CALL_RECORD);
    if (req.method === 'GET') {
      try {
        await checkQueryMessage(handler.method.input, req.url, maxBytes);
      } catch (e) {
        const err = ConnectError.from(e);
        if (record) record.code = err.code;
        return connectErrorResponse(err);
      }
    }
    const body = req.body !== null && typeof req.body === 'object' && Symbol.asyncIterator in req.body
      ? checkedBody(req.body as AsyncIterable<Uint8Array>, handler.method.input, formatOf(req.header), maxBytes, record)
      : req.body;
    const res = await handler({ ...req, body });
    if (!record) return res;
    if (!res.body) {
      record.code = answeredCode(req.header, res, undefined);
      return res;
    }
    return { ...res, body: observedBody(res.body, req.header, res, record) };
  };
  return Object.assign(fn, {
    protocolNames: handler.protocolNames,
    service: handler.service,
    method: handler.method,
    requestPath: handler.requestPath,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  });
}

/**
 * Wraps each of the router's handlers in place (call it from `connectNodeAdapter`'s `routes`, after
 * registering the services). `maxBytes` is the router's `readMaxBytes`.
 */
export function guardHandlers(handlers: UniversalHandler[], maxBytes: number): void {
  for (const [i, handler] of handlers.entries()) handlers[i] = guarded(handler, maxBytes);
}
