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
import { isLoopbackHost } from '../runtime/net/loopback';
import type { NodeRequest } from './rest/rest-handler';

/** Where a local server listens: the address it bound and its port. */
export interface LocalBinding {
  readonly host: string;
  readonly port: number;
}

/** Whether `authority` (`host:port`) names this local server: a loopback name or the bound address, and its port. */
function isLocalAuthority(authority: string, local: LocalBinding): boolean {
  let url: URL;
  try {
    url = new URL(`http://${authority}`);
  } catch {
    return false;
  }
  if (url.username || url.password || url.pathname !== '/' || url.port !== String(local.port)) return false;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isLoopbackHost(host) || host === local.host.toLowerCase();
}

/** PERMISSION_DENIED when `req` names a foreign host or comes from a foreign origin; undefined when it may proceed. */
export function localRequestRefusal(req: NodeRequest, local: LocalBinding): ConnectError | undefined {
  const authority = String(req.headers[':authority'] ?? req.headers.host ?? '');
  const answersTo = `loopback names (localhost, 127.0.0.0/8, [::1]) and ${local.host}, on port ${local.port}`;
  if (!isLocalAuthority(authority, local)) {
    return new ConnectError(`--insecure-local answers only to ${answersTo}; got host ${JSON.stringify(authority)}`, Code.PermissionDenied);
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !(origin.toLowerCase().startsWith('http://') && isLocalAuthority(origin.slice('http://'.length), local))) {
    return new ConnectError(`--insecure-local refuses cross-origin requests (it serves pages from ${answersTo}); got origin ${JSON.stringify(origin)}`, Code.PermissionDenied);
  }
  return undefined;
}
