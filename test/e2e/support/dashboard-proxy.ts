/**
 * TEST-ONLY stand-in for `kubectl proxy` in front of the Ray dashboards: the Pulumi executor's
 * dynamic provider runs in its own process (launched by the Pulumi CLI) and reaches dashboards
 * through a URL template, as it would outside a cluster, e.g.
 * `http://127.0.0.1:8001/api/v1/namespaces/{namespace}/services/{cluster}-head-svc:dashboard/proxy`.
 * This server answers that path shape on loopback and forwards each request (method, headers,
 * body, answer) to the real head the simulated pod network bound the cluster's head Pod to
 * (pod-network.ts; the pool's resolver, the same seam the in-process operator uses). It dials only the heads' dashboard addresses.
 */
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { DashboardResolver } from '../../../lib/runtime/serve/resolver';

/** A running proxy. */
export interface DashboardProxy {
  /** The dashboard address template for `dashboardAddressTemplate` (`{namespace}`, `{cluster}`). */
  readonly template: string;
  /** Requests forwarded so far, and those that could not be (no head bound, head unreachable). */
  readonly forwarded: number;
  readonly refused: number;
  close(): Promise<void>;
}

const PATH = /^\/api\/v1\/namespaces\/([a-z0-9-]+)\/services\/([a-z0-9-]+)-head-svc:dashboard\/proxy(\/.*)?$/;

/** Starts the proxy on 127.0.0.1 (a free port) in front of `resolver`'s dashboards. */
export async function startDashboardProxy(resolver: DashboardResolver): Promise<DashboardProxy> {
  let forwarded = 0;
  let refused = 0;
  const refuse = (res: http.ServerResponse, status: number, message: string) => {
    refused++;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(`rayshift e2e dashboard proxy: ${message}\n`);
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const m = PATH.exec(url.pathname);
    if (!m) {
      refuse(res, 404, `unknown path ${url.pathname}`);
      return;
    }
    const [, namespace, cluster, rest] = m;
    void (async () => {
      let base: URL;
      try {
        base = new URL(await resolver.resolve({ namespace, name: cluster }));
      } catch (err) {
        refuse(res, 503, (err as Error).message);
        return;
      }
      const headers = { ...req.headers, host: base.host };
      const upstream = http.request(
        { protocol: base.protocol, hostname: base.hostname, port: base.port, method: req.method, path: `${rest ?? '/'}${url.search}`, headers, timeout: 120_000 },
        (answer) => {
          forwarded++;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('timeout', () => upstream.destroy(new Error('timed out')));
      upstream.on('error', (err) => {
        if (!res.headersSent) refuse(res, 502, `head of ${namespace}/${cluster}: ${err.message}`);
        else res.destroy(err);
      });
      req.pipe(upstream);
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    template: `http://127.0.0.1:${port}/api/v1/namespaces/{namespace}/services/{cluster}-head-svc:dashboard/proxy`,
    get forwarded() {
      return forwarded;
    },
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
