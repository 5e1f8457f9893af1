/**
 * What keeps a web page from driving an `--insecure-local` server, which acts as the kubeconfig's
 * user without a token: any page the user visits can send it requests (cross-origin "simple"
 * requests need no CORS preflight), and a DNS-rebinding page can even read the answers, because its
 * own host name then resolves to 127.0.0.1. So in local mode the Host must be a loopback name with
 * the server's port, and a request carrying an `Origin` must come from such a host too. (REST writes
 * additionally need a JSON content type in every mode, see the REST handler, so a cross-origin
 * write needs a preflight the server never grants.)
 *
 * Behind `rayshift dashboard`, the page's origin is the dashboard's, not the server's: the dashboard
 * checks the browser's `Host` itself and sends it on as `X-Forwarded-Host`, keeping `Origin`. Here a
 * forwarded host must be a local name too (on any port: the dashboard's), and an `Origin` must be
 * that host's. A page cannot add `X-Forwarded-Host` to a cross-origin request without a CORS
 * preflight, which the server never grants, so the header can only make a request more constrained.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { isLocalAuthority, localAuthoritiesText, type LocalBinding } from './local-authority';
import type { NodeRequest } from './rest/rest-handler';

/** PERMISSION_DENIED when `req` names a foreign host or comes from a foreign origin; undefined when it may proceed. */
export function localRequestRefusal(req: NodeRequest, local: LocalBinding): ConnectError | undefined {
  const authority = String(req.headers[':authority'] ?? req.headers.host ?? '');
  const answersTo = localAuthoritiesText(local);
  if (!isLocalAuthority(authority, local)) {
    return new ConnectError(`--insecure-local answers only to ${answersTo}; got host ${JSON.stringify(authority)}`, Code.PermissionDenied);
  }
  const forwarded = req.headers['x-forwarded-host'];
  if (forwarded !== undefined && (typeof forwarded !== 'string' || !isLocalAuthority(forwarded, local, true))) {
    return new ConnectError(`--insecure-local answers only to proxies reached at a loopback name or ${local.host}; got x-forwarded-host ${JSON.stringify(forwarded)}`, Code.PermissionDenied);
  }
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  const pageAuthority = origin.toLowerCase().startsWith('http://') ? origin.slice('http://'.length) : undefined;
  const sameOrigin = pageAuthority !== undefined && (forwarded === undefined ? isLocalAuthority(pageAuthority, local) : pageAuthority.toLowerCase() === forwarded.toLowerCase());
  if (!sameOrigin) {
    const from = forwarded === undefined ? answersTo : `http://${forwarded}, the page's own proxy`;
    return new ConnectError(`--insecure-local refuses cross-origin requests (it serves pages from ${from}); got origin ${JSON.stringify(origin)}`, Code.PermissionDenied);
  }
  return undefined;
}
