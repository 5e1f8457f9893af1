/**
 * Shared harness of the serve-client-*.test.ts files: the Ray dashboard client against the
 * TEST-ONLY simulated dashboard (test/support/serve-simulator.ts), over real HTTP on 127.0.0.1,
 * with a user's serveConfigV2, and every simulator and server closed after each test.
 */
import * as http from 'node:http';
import { ServeDashboardClient } from '../../../lib/runtime/serve/client';
import { ClusterRef } from '../../../lib/runtime/serve/errors';
import { defaultDashboardResolver } from '../../../lib/runtime/serve/resolver';
import { SimulatedServeDashboard, startSimulatedServeDashboard } from '../../support/serve-simulator';

export const CLUSTER: ClusterRef = { name: 'ray-a', namespace: 'team' };

/** serveConfigV2 as a user writes it: YAML, one app with a fixed 3-replica deployment. */
export const SERVE_CONFIG_V2 = `
proxy_location: HeadOnly
http_options:
  host: 127.0.0.1
  port: 8001
applications:
  - name: web
    route_prefix: /
    import_path: rayshift_testapp.app:build
    args:
      version: v2
    deployments:
      - name: Version
        num_replicas: 3
        ray_actor_options:
          num_cpus: 0.25
`;

const sims: SimulatedServeDashboard[] = [];
/** Other servers a test starts (besides the simulators), closed after it by closeServers. */
export const servers: http.Server[] = [];

export async function simulator(options: Parameters<typeof startSimulatedServeDashboard>[0] = {}): Promise<SimulatedServeDashboard> {
  const sim = await startSimulatedServeDashboard(options);
  sims.push(sim);
  return sim;
}

export function clientFor(sim: SimulatedServeDashboard, extra: ConstructorParameters<typeof ServeDashboardClient>[0] = {}): ServeDashboardClient {
  return new ServeDashboardClient({ resolver: defaultDashboardResolver({ addresses: { 'team/ray-a': sim.url } }), ...extra });
}

export function rawRequest(url: string, method: string, headers: http.OutgoingHttpHeaders, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Closes every simulator and server the test started; each test file runs it after each test. */
export async function closeServers(): Promise<void> {
  await Promise.all(sims.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
}
