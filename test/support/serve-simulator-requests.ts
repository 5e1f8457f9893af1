/**
 * The request checks of the TEST-ONLY Serve simulator (serve-simulator.ts), in the order of the
 * dashboard's middleware chain, with Ray's status codes and texts:
 *
 * - POST/PUT that look like browser traffic get 405 "Method Not Allowed for browser traffic." with
 *   Ray's exact rule (`is_browser_request`): a `User-Agent` starting with `Mozilla`, or any of
 *   `Referer`, `Origin`, `Sec-Fetch-Mode|Dest|Site|User`, `Access-Control-Request-Method|Headers`.
 *   This check runs before token auth, as in the dashboard's middleware chain.
 * - With a token (`RAY_AUTH_MODE=token`): `Authorization`, `X-Ray-Authorization` (`Bearer <t>`) or
 *   cookie `ray-authentication-token`; missing → 401, wrong → 403 (Ray's texts). Public paths stay
 *   open.
 */
import type * as http from 'node:http';

const BROWSER_HEADERS = [
  'referer',
  'origin',
  'sec-fetch-mode',
  'sec-fetch-dest',
  'sec-fetch-site',
  'sec-fetch-user',
  'access-control-request-method',
  'access-control-request-headers',
];
const PUBLIC_PATHS = new Set(['/', '/api/authentication_mode', '/api/authenticate', '/api/healthz', '/api/gcs_healthz', '/api/local_raylet_healthz', '/-/healthz']);

/** Ray's `is_browser_request`. */
export function isSimulatedBrowserRequest(headers: http.IncomingHttpHeaders): boolean {
  const ua = headers['user-agent'];
  if (typeof ua === 'string' && ua.startsWith('Mozilla')) return true;
  return BROWSER_HEADERS.some((h) => headers[h] !== undefined);
}

/**
 * The status and text the dashboard's middleware answers a request with before any handler runs,
 * or undefined when it lets the request through. `token` undefined means auth is disabled.
 */
export function simulatedRequestRejection(method: string, pathname: string, headers: http.IncomingHttpHeaders, token: string | undefined): [number, string] | undefined {
  if ((method === 'POST' || method === 'PUT') && pathname !== '/api/authenticate' && isSimulatedBrowserRequest(headers)) {
    return [405, 'Method Not Allowed for browser traffic.'];
  }
  if (PUBLIC_PATHS.has(pathname)) return undefined;
  return authFailure(headers, token);
}

/** Ray's token check: 401 without a token, 403 with a wrong one. */
function authFailure(headers: http.IncomingHttpHeaders, token: string | undefined): [number, string] | undefined {
  if (token === undefined) return undefined;
  const header = headers.authorization ?? headers['x-ray-authorization'];
  let presented: string | undefined;
  if (typeof header === 'string' && header !== '') {
    presented = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '\u0000invalid';
  } else {
    const cookie = /(?:^|;\s*)ray-authentication-token=([^;]*)/.exec(headers.cookie ?? '');
    if (cookie !== null) presented = decodeURIComponent(cookie[1]);
  }
  if (presented === undefined) return [401, 'Unauthorized: Missing authentication token'];
  if (presented !== token) return [403, 'Forbidden: Invalid authentication token'];
  return undefined;
}
