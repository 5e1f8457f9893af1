/**
 * Whether a request's `Host` (or an `Origin`'s authority) names a server listening on this machine:
 * the one rule of the two servers that answer browsers without a token, `api-server
 * --insecure-local` and `rayshift dashboard`. A DNS-rebinding page reaches them under its own host
 * name, which then resolves to this machine; only the `Host` it sends tells it apart. Free of the
 * API server's packages, so that `rayshift dashboard` runs without them.
 */
import * as net from 'node:net';
import { isLoopbackHost } from '../runtime/net/loopback';

/** Where a server listens: the address it bound and its port. */
export interface LocalBinding {
  readonly host: string;
  readonly port: number;
}

/** The names of the addresses that mean "every interface". */
const WILDCARDS = new Set(['', '0.0.0.0', '::']);

/**
 * Whether `authority` (`host:port`, as in `Host`) names the server bound at `local`: a loopback name
 * or the bound address, with the bound port (`anyPort`: with any port, for an authority a proxy in
 * front of it was reached at). A server bound to every interface also answers to any IP address
 * literal: a rebinding page's host is a name, and an address can be reached only by the address.
 */
export function isLocalAuthority(authority: string, local: LocalBinding, anyPort = false): boolean {
  let url: URL;
  try {
    url = new URL(`http://${authority}`);
  } catch {
    return false;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return false;
  // URL leaves out http's default port.
  if (!anyPort && (url.port || '80') !== String(local.port)) return false;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const bound = local.host.toLowerCase();
  return isLoopbackHost(host) || host === bound || (WILDCARDS.has(bound) && net.isIP(host) !== 0);
}

/** What `isLocalAuthority` accepts, in words for an error message. */
export function localAuthoritiesText(local: LocalBinding): string {
  const bound = WILDCARDS.has(local.host) ? 'any IP address of this machine' : local.host;
  return `loopback names (localhost, 127.0.0.0/8, [::1]) and ${bound}, on port ${local.port}`;
}
