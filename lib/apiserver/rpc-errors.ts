/**
 * Errors answered to an RPC (Connect, gRPC, gRPC-Web) before the Connect router sees it, in the
 * caller's protocol: the server refuses requests whose token fails before reading their bodies, so
 * these answers are written here rather than by the router (which parses the body first).
 */
import type { ConnectError } from '@connectrpc/connect';
import { setTrailerStatus } from '@connectrpc/connect/protocol-grpc';
import { codeToHttpStatus, endStreamFlag, errorToJson } from '@connectrpc/connect/protocol-connect';
import type { NodeRequest, NodeResponse } from './rest/rest-handler';

/**
 * `Connection: close` for an HTTP/1.1 request answered before its body was read: Node would
 * otherwise read (and discard) the rest of the body, however long, to reuse the connection.
 */
export function closeUnread(req: NodeRequest): Record<string, string> {
  return 'stream' in req || req.complete ? {} : { connection: 'close' };
}

/** The wire protocol of an RPC request, from its content type. */
export type RpcProtocol = 'grpc' | 'grpc-web' | 'connect';

/** The protocol of a request to an RPC path (Connect unary requests may be GETs without a content type). */
export function rpcProtocolOf(contentType: string | null | undefined): RpcProtocol {
  if (contentType?.startsWith('application/grpc-web')) return 'grpc-web';
  if (contentType?.startsWith('application/grpc')) return 'grpc';
  return 'connect';
}

/**
 * Answers `req` with `err` without reading its body: gRPC and gRPC-Web as a trailers-only response
 * (status in the headers), Connect streams as an end-stream message, Connect unary as error JSON
 * with the code's HTTP status.
 */
export function sendRpcError(req: NodeRequest, res: NodeResponse, err: ConnectError): void {
  const contentType = req.headers['content-type'];
  const protocol = rpcProtocolOf(contentType);
  const close = closeUnread(req);
  if (protocol !== 'connect') {
    const headers: Record<string, string> = { 'content-type': contentType!, ...close };
    setTrailerStatus(new Headers(), err).forEach((value, name) => (headers[name] = value));
    res.writeHead(200, headers);
    res.end();
    return;
  }
  const error = errorToJson(err, undefined);
  if (contentType?.startsWith('application/connect+')) {
    const payload = Buffer.from(JSON.stringify({ error }));
    const header = Buffer.alloc(5);
    header[0] = endStreamFlag;
    header.writeUInt32BE(payload.length, 1);
    res.writeHead(200, { 'content-type': contentType, ...close });
    res.end(Buffer.concat([header, payload]));
    return;
  }
  const json = JSON.stringify(error);
  res.writeHead(codeToHttpStatus(err.code), { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)), ...close });
  res.end(json);
}
