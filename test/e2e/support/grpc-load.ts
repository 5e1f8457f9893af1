/**
 * gRPC load for the end-to-end tests: unary calls of `rayshift.test.Echo/Version`
 * (test/e2e/rayapp/rayshift_test.proto) over one h2c HTTP/2 connection (node:http2), for the
 * fixed-rate generator in load.ts. The two tiny messages are encoded by hand (string fields 1 and
 * 2), so no gRPC library is needed. A call succeeds when the answer has `grpc-status: 0` and a reply
 * naming a version.
 */
import * as http2 from 'node:http2';
import { SendResult, Sender } from './load';

/** Full method path of the test service's RPC. */
export const ECHO_VERSION_PATH = '/rayshift.test.Echo/Version';

function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

/** Protobuf encoding of a message made of string fields. */
export function encodeStrings(fields: Readonly<Record<number, string>>): Buffer {
  const parts: Buffer[] = [];
  for (const [num, value] of Object.entries(fields)) {
    const data = Buffer.from(value, 'utf8');
    parts.push(varint((Number(num) << 3) | 2), varint(data.length), data);
  }
  return Buffer.concat(parts);
}

/** Decodes the string (length-delimited) fields of a protobuf message; other wire types are skipped. */
export function decodeStrings(buf: Buffer): Record<number, string> {
  const out: Record<number, string> = {};
  let i = 0;
  const readVarint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++];
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
    }
  };
  while (i < buf.length) {
    const key = readVarint();
    const field = Math.floor(key / 8);
    const wire = key & 7;
    if (wire === 2) {
      const len = readVarint();
      out[field] = buf.subarray(i, i + len).toString('utf8');
      i += len;
    } else if (wire === 0) readVarint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

/** A gRPC message frame: compression flag 0, 4-byte big-endian length, message. */
export function grpcFrame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/**
 * A sender of `Echo/Version` calls to `http://host:port` (h2c), with gRPC metadata
 * `application: <app>` (Serve's choice of application).
 */
export function grpcSender(host: string, port: number, app: string): { send: Sender; close(): void } {
  let session: http2.ClientHttp2Session | undefined;
  const connect = (): http2.ClientHttp2Session => {
    if (session && !session.closed && !session.destroyed) return session;
    const s = http2.connect(`http://${host}:${port}`);
    s.on('error', () => undefined); // each stream reports its own failure
    s.on('close', () => {
      if (session === s) session = undefined;
    });
    session = s;
    return s;
  };
  const body = grpcFrame(encodeStrings({ 1: 'rayshift-e2e' }));
  const send: Sender = (signal) =>
    new Promise<SendResult>((resolve, reject) => {
      let stream: http2.ClientHttp2Stream;
      try {
        stream = connect().request(
          { ':method': 'POST', ':path': ECHO_VERSION_PATH, 'content-type': 'application/grpc', te: 'trailers', application: app },
          { signal },
        );
      } catch (err) {
        reject(err);
        return;
      }
      const chunks: Buffer[] = [];
      let grpcStatus: string | undefined;
      let grpcMessage: string | undefined;
      let httpStatus = 0;
      stream.on('response', (headers) => {
        httpStatus = Number(headers[':status'] ?? 0);
        if (headers['grpc-status'] !== undefined) grpcStatus = String(headers['grpc-status']);
        if (headers['grpc-message'] !== undefined) grpcMessage = String(headers['grpc-message']);
      });
      stream.on('trailers', (trailers) => {
        if (trailers['grpc-status'] !== undefined) grpcStatus = String(trailers['grpc-status']);
        if (trailers['grpc-message'] !== undefined) grpcMessage = String(trailers['grpc-message']);
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', reject);
      stream.on('close', () => {
        if (httpStatus !== 200) {
          resolve({ ok: false, detail: `HTTP ${httpStatus || 'no status'}` });
          return;
        }
        if (grpcStatus !== '0') {
          resolve({ ok: false, detail: `grpc-status ${grpcStatus ?? 'missing'}${grpcMessage ? `: ${decodeURIComponent(grpcMessage)}` : ''}` });
          return;
        }
        const data = Buffer.concat(chunks);
        if (data.length < 5) {
          resolve({ ok: false, detail: 'no reply message' });
          return;
        }
        try {
          const reply = decodeStrings(data.subarray(5, 5 + data.readUInt32BE(1)));
          resolve({ ok: reply[1] !== undefined, version: reply[1], cluster: reply[2], ...(reply[1] === undefined ? { detail: 'reply without a version' } : {}) });
        } catch (err) {
          resolve({ ok: false, detail: `undecodable reply: ${(err as Error).message}` });
        }
      });
      stream.end(body);
    });
  return {
    send,
    close() {
      session?.close();
      session?.destroy();
    },
  };
}
