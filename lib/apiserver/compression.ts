/**
 * The request compressions the server accepts (gzip, brotli), inflated by zlib with the body limit
 * as the output bound, so a small bomb stops at the limit instead of filling memory. Ours rather
 * than connect-node's because connect-node recognises zlib's "too large" error with `instanceof
 * Error`, which fails across realms (jest) and turns it into INTERNAL "decompression failed".
 */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Compression } from '@connectrpc/connect/protocol';

type Inflate = (bytes: Uint8Array, opts: zlib.ZlibOptions & zlib.BrotliOptions) => Promise<Buffer>;
type Deflate = (bytes: Uint8Array) => Promise<Buffer>;

function bounded(name: string, compress: Deflate, inflate: Inflate): Compression {
  return {
    name,
    compress: async (bytes) => new Uint8Array(await compress(bytes)),
    async decompress(bytes, readMaxBytes) {
      if (bytes.length === 0) return new Uint8Array(0);
      try {
        return new Uint8Array(await inflate(bytes, { maxOutputLength: readMaxBytes }));
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
          throw new ConnectError(`the request message exceeds the limit of ${readMaxBytes} bytes after ${name} decompression`, Code.ResourceExhausted);
        }
        throw new ConnectError(`the request message is not valid ${name}`, Code.InvalidArgument);
      }
    },
  };
}

/** gzip and brotli, each inflating to at most the server's body limit. */
export const BOUNDED_COMPRESSIONS: readonly Compression[] = [
  bounded('gzip', promisify(zlib.gzip), promisify(zlib.gunzip)),
  bounded('br', promisify(zlib.brotliCompress), promisify(zlib.brotliDecompress)),
];
