/**
 * `rayshift dashboard`: serves the built dashboard (`dist-ui/`, from `npm run build:ui`) under
 * `/ui/` and proxies the core API's paths to the API server, so the browser talks to one origin
 * (no CORS) and keeps its own bearer token (forwarded as sent; the server strips `Impersonate-*`).
 * Server-sent events stream through unbuffered. Files are served by `lib/dashboard/static-files`,
 * which the API server (`--dashboard-dir`) uses too.
 *
 * A DNS-rebinding page (its own host name made to resolve to this machine) would reach the dashboard
 * as its own origin and read every answer, the page's token or an `--insecure-local` server's
 * identity doing the rest; only the `Host` it sends tells it apart. So every request must name the
 * dashboard's own address in `Host` (`isLocalAuthority`, the rule of `api-server --insecure-local`),
 * or it is 403; the proxied ones carry that `Host` on as `X-Forwarded-Host`, with the browser's
 * `Origin`, so that the API server can apply its own check.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import * as path from 'node:path';
import { isLocalAuthority, localAuthoritiesText, type LocalBinding } from '../apiserver/local-authority';
import { defaultDashboardDir, serveDashboardFile } from '../dashboard/static-files';
import { isLoopbackHost } from '../runtime/net/loopback';
import { EXIT, Output } from './commands';
import { parseListen } from './flag-parsers';

/** Options of `rayshift dashboard`. */
export interface DashboardOptions {
  /** The core API server, e.g. `https://rayshift-api.rayshift-system:8443`. */
  readonly apiServer: string;
  /** `host:port` to listen on. @default 127.0.0.1:8090 */
  readonly listen?: string;
  /** CA certificate file (PEM) the API server's certificate is checked against. @default the system's */
  readonly caFile?: string;
  /** Open the dashboard in the default browser. */
  readonly open?: boolean;
}

/** Options of `startDashboard` beyond the command's. */
export interface StartDashboardOptions extends Omit<DashboardOptions, 'caFile' | 'open'> {
  /** CA certificate(s) (PEM) of the API server. */
  readonly ca?: string | Buffer;
  /** Folder of the built dashboard. @default `<package>/dist-ui` */
  readonly staticDir?: string;
}

/** A running dashboard server. */
export interface RunningDashboard {
  /** `http://host:port/ui/`. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes every connection (open watch streams included). */
  close(): Promise<void>;
}

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_LISTEN = `${DEFAULT_HOST}:8090`;

/** Paths forwarded to the API server. */
const PROXIED = [/^\/apis\/rayshift\//, /^\/(healthz|readyz|openapi\.json)$/];

/** Hop-by-hop headers, which a proxy must not forward. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/** What a browser sent about proxies in front of the dashboard: replaced by what the dashboard saw, never passed on. */
const FORWARDING = new Set(['forwarded', 'x-forwarded-host', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-port']);

function sendStatus(res: http.ServerResponse, status: number, code: number, message: string): void {
  const body = JSON.stringify({ code, message, details: [] });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/** Starts the dashboard server; resolves once it listens. */
export async function startDashboard(opts: StartDashboardOptions): Promise<RunningDashboard> {
  const upstream = new URL(opts.apiServer);
  if (upstream.protocol !== 'https:' && upstream.protocol !== 'http:') throw new Error(`--api-server must be an http(s) URL; got ${opts.apiServer}`);
  const root = path.resolve(opts.staticDir ?? defaultDashboardDir());
  if (!fs.existsSync(path.join(root, 'index.html'))) throw new Error(`the dashboard is not built: ${path.join(root, 'index.html')} is missing (in a checkout of rayshift, run \`npm run build:ui\`; the npm package ships it)`);
  const { host = DEFAULT_HOST, port } = parseListen(opts.listen ?? DEFAULT_LISTEN);
  const secure = upstream.protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true, ...(opts.ca ? { ca: opts.ca } : {}) }) : new http.Agent({ keepAlive: true });
  const base = upstream.pathname.replace(/\/$/, '');

  const proxy = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(k) && !FORWARDING.has(k) && !k.startsWith('impersonate-') && k !== 'cookie' && v !== undefined) headers[k] = v;
    }
    // Checked by the listener below: the dashboard's own address.
    headers['x-forwarded-host'] = req.headers.host;
    const request = (secure ? https : http).request(
      { protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, path: `${base}${req.url}`, method: req.method, headers, agent },
      (answer) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
        res.writeHead(answer.statusCode ?? 502, out);
        if (String(answer.headers['content-type']).startsWith('text/event-stream')) res.flushHeaders();
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    request.on('error', () => {
      if (!res.headersSent) sendStatus(res, 503, 14, 'the API server is unreachable');
      else res.destroy();
    });
    // A browser that goes away ends its watch upstream too.
    res.on('close', () => request.destroy());
    req.pipe(request);
  };

  // Empty until the port is known: nothing is answered before then.
  let local: LocalBinding = { host, port: -1 };
  const server = http.createServer((req, res) => {
    const authority = req.headers.host ?? '';
    if (!isLocalAuthority(authority, local)) {
      return sendStatus(res, 403, 7, `the dashboard answers only to ${localAuthoritiesText(local)}; got host ${JSON.stringify(authority)}`);
    }
    const urlPath = (req.url ?? '/').split('?')[0];
    if (PROXIED.some((p) => p.test(urlPath))) return proxy(req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendStatus(res, 405, 12, `${req.method} is not allowed here`);
    if (urlPath === '/' || urlPath === '/ui') {
      res.writeHead(302, { location: '/ui/' });
      return res.end();
    }
    if (urlPath.startsWith('/ui/') && serveDashboardFile(root, urlPath, res)) return undefined;
    return sendStatus(res, 404, 5, `no such page: ${urlPath}`);
  });
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as net.AddressInfo).port;
  local = { host, port: bound };
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${bound}/ui/`,
    port: bound,
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      agent.destroy();
      await closed;
    },
  };
}

function openInBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(command, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => undefined);
  child.unref();
}

/**
 * Where viewers' tokens would cross a network in plain HTTP: the dashboard itself served beyond this
 * machine, and the API server it forwards them to reached over `http://` beyond it.
 */
export function plaintextTokenWarnings(opts: Pick<DashboardOptions, 'apiServer' | 'listen'>): string[] {
  const warnings: string[] = [];
  if (!isLoopbackHost(parseListen(opts.listen ?? DEFAULT_LISTEN).host ?? DEFAULT_HOST)) {
    warnings.push("the dashboard is served over plain HTTP beyond this machine: viewers' tokens cross the network unencrypted (put it behind TLS)");
  }
  const upstream = new URL(opts.apiServer);
  if (upstream.protocol === 'http:' && !isLoopbackHost(upstream.hostname)) {
    warnings.push(`viewers' tokens are forwarded to the API server ${upstream.origin} over plain HTTP, where anyone on the network path can read and reuse them (use an https:// --api-server)`);
  }
  return warnings;
}

/** `rayshift dashboard`; serves until `stop` resolves (SIGINT in the binary), then resolves to the exit code. */
export async function dashboardCommand(opts: DashboardOptions, io: Output, stop: Promise<void>): Promise<number> {
  let dashboard: RunningDashboard;
  try {
    dashboard = await startDashboard({ apiServer: opts.apiServer, listen: opts.listen, ca: opts.caFile ? fs.readFileSync(opts.caFile) : undefined });
  } catch (e) {
    io.err(`${io.errStyle.red('error:')} ${(e as Error).message}\n`);
    return EXIT.invalid;
  }
  io.out(`rayshift dashboard at ${dashboard.url} (API server ${opts.apiServer}); Ctrl-C stops it\n`);
  for (const warning of plaintextTokenWarnings(opts)) io.err(`${io.errStyle.yellow('warning:')} ${warning}\n`);
  if (opts.open) openInBrowser(dashboard.url);
  await stop;
  await dashboard.close();
  return EXIT.ok;
}
