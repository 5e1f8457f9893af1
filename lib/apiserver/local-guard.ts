/**
 * What keeps a web page from driving an `--insecure-local` server, which acts as the kubeconfig's
 * user without a token: any page the user visits can send it requests (cross-origin "simple"
 * requests need no CORS preflight), and a DNS-rebinding page can even read the answers, because its
 * own host name then resolves to 127.0.0.1. So in local mode the Host must be a loopback name with
 * the server's port, and a request carrying an `Origin` must come from such a host too. (REST writes
 * additionally need a JSON content type in every mode, see the REST handler, so a cross-origin
 * write needs a preflight the server never grants.)
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { NodeRequest } from './rest/rest-handler';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** The `host:port` authorities a local server on `port` answers to (loopback names and `bindHost`). */
export function localAuthorities(bindHost: string, port: number): Set<string> {
  const bound = bindHost.includes(':') ? `[${bindHost}]` : bindHost;
  return new Set([...LOOPBACK_NAMES, bound].map((h) => `${h}:${port}`));
}

/** PERMISSION_DENIED when `req` names a foreign host or comes from a foreign origin; undefined when it may proceed. */
export function localRequestRefusal(req: NodeRequest, authorities: ReadonlySet<string>): ConnectError | undefined {
  const authority = String(req.headers[':authority'] ?? req.headers.host ?? '').toLowerCase();
  if (!authorities.has(authority)) {
    return new ConnectError(`--insecure-local answers only to ${[...authorities].join(', ')}; got host ${JSON.stringify(authority)}`, Code.PermissionDenied);
  }
  const origin = req.headers.origin;
  if (origin !== undefined && ![...authorities].some((a) => origin.toLowerCase() === `http://${a}`)) {
    return new ConnectError(`--insecure-local refuses cross-origin requests; got origin ${JSON.stringify(origin)}`, Code.PermissionDenied);
  }
  return undefined;
}
