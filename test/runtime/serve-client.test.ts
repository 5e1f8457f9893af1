import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
/**
 * The Ray dashboard client against the TEST-ONLY simulated dashboard (test/support/serve-simulator.ts),
 * over real HTTP on 127.0.0.1.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServeDashboardClient, buildServeDeployBody } from '../../lib/runtime/serve/client';
import { ClusterRef, ServeApiError } from '../../lib/runtime/serve/errors';
import { evaluateCapacityReadiness } from '../../lib/runtime/serve/readiness';
import { defaultDashboardResolver } from '../../lib/runtime/serve/resolver';
import { SimulatedServeDashboard, startSimulatedServeDashboard } from '../support/serve-simulator';

const CLUSTER: ClusterRef = { name: 'ray-a', namespace: 'team' };
const TOKEN = 'tok-3f9a2c1e7b5d4a60';

/** serveConfigV2 as a user writes it: YAML, one app with a fixed 3-replica deployment. */
const SERVE_CONFIG_V2 = `
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
const servers: http.Server[] = [];

async function simulator(options: Parameters<typeof startSimulatedServeDashboard>[0] = {}): Promise<SimulatedServeDashboard> {
  const sim = await startSimulatedServeDashboard(options);
  sims.push(sim);
  return sim;
}

function clientFor(sim: SimulatedServeDashboard, extra: ConstructorParameters<typeof ServeDashboardClient>[0] = {}): ServeDashboardClient {
  return new ServeDashboardClient({ resolver: defaultDashboardResolver({ addresses: { 'team/ray-a': sim.url } }), ...extra });
}

async function caught(promise: Promise<unknown>): Promise<ServeApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ServeApiError);
    return err as ServeApiError;
  }
  throw new Error('expected a ServeApiError');
}

/** Polls `probe` until it returns true; bounded in iterations, not asserted on time. */
async function eventually(probe: () => Promise<boolean>, attempts = 300, pauseMs = 10): Promise<number> {
  for (let i = 0; i < attempts; i++) {
    if (await probe()) return i;
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  throw new Error(`condition not reached after ${attempts} polls`);
}

function rawRequest(url: string, method: string, headers: http.OutgoingHttpHeaders, body?: string): Promise<{ status: number; body: string }> {
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

afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe('GET /api/serve/applications/', () => {
  test('parses the "no Serve yet" answer and sends a minimal, non-browser request', async () => {
    const sim = await simulator();
    const details = await clientFor(sim).getServeDetails(CLUSTER);
    expect(details).toEqual({ target_capacity: null, applications: {}, proxies: {} });
    const [req] = sim.requests;
    expect(req.method).toBe('GET');
    expect(req.url).toBe('/api/serve/applications/?api_type=declarative');
    expect(req.headers['user-agent']).toBe('rayshift-serve-client');
    expect(req.headers.accept).toBe('application/json');
    expect(Object.keys(req.headers).filter((h) => h.startsWith('sec-fetch') || h === 'origin' || h === 'referer')).toEqual([]);
    expect(req.headers['x-ray-authorization']).toBeUndefined();
  });

  test('parses applications, deployments and replicas after a PUT', async () => {
    const sim = await simulator({ replicaStartDelayMs: 0 });
    const client = clientFor(sim);
    await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 100);
    const d = await client.getServeDetails(CLUSTER);
    expect(d.target_capacity).toBe(100);
    const app = d.applications.web;
    expect(app).toMatchObject({ name: 'web', status: 'RUNNING', route_prefix: '/', message: '' });
    expect(app.deployments.Version).toMatchObject({ status: 'HEALTHY', target_num_replicas: 3 });
    expect(app.deployments.Version.replicas.map((r) => r.state)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
    expect(app.deployments.Version.deployment_config).toMatchObject({ num_replicas: 3 });
    expect(d.proxies).toEqual({ [Object.keys(d.proxies)[0]]: { status: 'HEALTHY' } });
  });
});

describe('PUT /api/serve/applications/ with target_capacity', () => {
  test('sends the serveConfigV2 YAML as JSON plus target_capacity', async () => {
    const sim = await simulator({ manualReplicaStart: true });
    const sent = await clientFor(sim).putServeConfig(CLUSTER, SERVE_CONFIG_V2, 20);
    expect(sim.targetCapacity()).toBe(20);
    expect(sim.config()).toEqual(sent);
    expect(sent).toMatchObject({ proxy_location: 'HeadOnly', target_capacity: 20 });
    expect((sent.applications as any[])[0].deployments[0]).toEqual({ name: 'Version', num_replicas: 3, ray_actor_options: { num_cpus: 0.25 } });
    const put = sim.requests.find((r) => r.method === 'PUT')!;
    expect(put.url).toBe('/api/serve/applications/');
    expect(put.headers['content-type']).toBe('application/json');
    expect(JSON.parse(put.body)).toEqual(sent);
  });

  test('null omits target_capacity (Serve resets it to full capacity)', async () => {
    const sim = await simulator();
    const client = clientFor(sim);
    await client.putServeConfig(CLUSTER, `${SERVE_CONFIG_V2}target_capacity: 40\n`, 30);
    expect(sim.targetCapacity()).toBe(30);
    const sent = await client.putServeConfig(CLUSTER, `${SERVE_CONFIG_V2}target_capacity: 40\n`, null);
    expect('target_capacity' in sent).toBe(false);
    expect(sim.targetCapacity()).toBeNull();
  });

  test('a capacity outside 0..100 or not an integer is refused before sending', async () => {
    const sim = await simulator();
    for (const tc of [101, -1, 2.5]) {
      const err = await caught(clientFor(sim).putServeConfig(CLUSTER, SERVE_CONFIG_V2, tc));
      expect(err.kind).toBe('config');
      expect(err.message).toMatch(new RegExp(`target_capacity must be an integer between 0 and 100 .*got ${tc}`));
    }
    expect(() => buildServeDeployBody('applications: [', 10)).toThrow(/not valid YAML/);
    expect(sim.requests).toEqual([]);
  });

  test("Ray's validation errors come back as typed 400s", async () => {
    const sim = await simulator();
    const dup = { applications: [{ name: 'a', import_path: 'x:y' }, { name: 'a', import_path: 'x:y', route_prefix: '/b' }] };
    const err = await caught(clientFor(sim).putServeConfig(CLUSTER, dup, 10));
    expect(err).toMatchObject({ kind: 'http', status: 400, cluster: 'team/ray-a', address: sim.url });
    expect(err.message).toMatch(/duplicate or empty application name 'a'/);
    expect(err.retryable).toBe(false);
    // The simulator's own target_capacity check, as Ray answers a raw PUT of 101.
    const raw = await rawRequest(`${sim.url}/api/serve/applications/`, 'PUT', { 'content-type': 'application/json' }, JSON.stringify({ applications: [], target_capacity: 101 }));
    expect(raw.status).toBe(400);
    expect(raw.body).toMatch(/target_capacity\n {2}ensure this value is less than or equal to 100/);
  });
});

describe('readiness of new capacity against the simulator', () => {
  test('DEPLOYING/UPSCALING are not ready; ready only with counts reached and the capacity echoed', async () => {
    const sim = await simulator({ manualReplicaStart: true });
    const client = clientFor(sim);

    let sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 20);
    let r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent });
    expect(r).toMatchObject({ ready: false, readyReplicas: 0, targetReplicas: 1 });
    expect(r.details.applications.web.status).toBe('DEPLOYING');
    expect(r.details.applications.web.deployments.Version.status).toBe('UPDATING');
    expect(sim.releaseReplicas()).toBe(1);
    r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent });
    expect(r).toMatchObject({ ready: true, readyReplicas: 1, targetReplicas: 1 });

    sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 50);
    r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent });
    expect(r).toMatchObject({ ready: false, readyReplicas: 1, targetReplicas: 2 });
    expect(r.details.applications.web.status).toBe('DEPLOYING');
    expect(r.details.applications.web.deployments.Version).toMatchObject({
      status: 'UPSCALING',
      status_trigger: 'CONFIG_UPDATE_STARTED',
      message: 'Upscaling from 1 to 2 replicas.',
    });
    expect(r.reason).toMatch(/UPSCALING .* 1\/2 replicas RUNNING/);
    // The previous capacity is not "ready" for the new PUT, and vice versa.
    expect(evaluateCapacityReadiness(r.details, { targetCapacity: 20 }).reason).toMatch(/target_capacity is 50, expected 20/);
    sim.releaseReplicas();
    r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent });
    expect(r).toMatchObject({ ready: true, readyReplicas: 2, targetReplicas: 2 });
    expect(r.details.applications.web.deployments.Version.status_trigger).toBe('UPSCALE_COMPLETED');
    expect(r.details.applications.web.status).toBe('RUNNING');
  });

  test('timed replica start: polls see UPDATING first, then ready', async () => {
    // Long enough that the first poll comes before the replicas start even on a loaded machine.
    const sim = await simulator({ replicaStartDelayMs: 1500 });
    const client = clientFor(sim);
    const sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 100);
    const reasons: string[] = [];
    await eventually(async () => {
      const r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 100, config: sent });
      reasons.push(r.reason);
      return r.ready;
    });
    expect(reasons[0]).toMatch(/UPDATING; 0\/3 replicas RUNNING/);
    expect(reasons[reasons.length - 1]).toMatch(/3\/3 replicas RUNNING/);
  });

  test('a stale control-loop tick (capacity echoed, old target HEALTHY) is not ready', async () => {
    let clock = 1_000_000;
    const sim = await simulator({ now: () => clock, replicaStartDelayMs: 10, controlLoopLagMs: 100 });
    const client = clientFor(sim);
    let sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 20);
    clock += 100;
    expect((await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent })).ready).toBe(false);
    clock += 10;
    expect((await client.getCapacityReadiness(CLUSTER, { targetCapacity: 20, config: sent })).ready).toBe(true);

    sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 50);
    const stale = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent });
    // What KubeRay-style checks would see: app RUNNING, deployment HEALTHY, running >= target.
    expect(stale.details.target_capacity).toBe(50);
    expect(stale.details.applications.web.status).toBe('RUNNING');
    expect(stale.details.applications.web.deployments.Version).toMatchObject({ status: 'HEALTHY', target_num_replicas: 1 });
    expect(stale).toMatchObject({ ready: false, readyReplicas: 1, targetReplicas: 1 });
    expect(stale.reason).toMatch(/targets 1 replicas, expected 2 at target_capacity 50/);
    clock += 100;
    expect((await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent })).details.applications.web.deployments.Version.status).toBe('UPSCALING');
    clock += 10;
    expect(await client.getCapacityReadiness(CLUSTER, { targetCapacity: 50, config: sent })).toMatchObject({ ready: true, readyReplicas: 2 });
  });

  test('Ray rounding of target_num_replicas: 3@20→1, 3@50→2, 3@0→0, 5@50→3, 4@10→1, null→unchanged', async () => {
    const sim = await simulator({
      replicaStartDelayMs: 0,
      code: { 'rounding.app:build': { deployments: [{ name: 'Three', num_replicas: 3 }, { name: 'Five', num_replicas: 5 }, { name: 'Four', num_replicas: 4 }] } },
    });
    const client = clientFor(sim);
    const config = { applications: [{ name: 'r', import_path: 'rounding.app:build' }] };
    const targets = async (tc: number | null) => {
      const sent = await client.putServeConfig(CLUSTER, config, tc);
      const r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: tc, config: sent });
      expect(r.ready).toBe(true);
      const deps = r.details.applications.r.deployments;
      return [deps.Three.target_num_replicas, deps.Five.target_num_replicas, deps.Four.target_num_replicas];
    };
    expect(await targets(20)).toEqual([1, 1, 1]);
    expect(await targets(50)).toEqual([2, 3, 2]);
    expect(await targets(10)).toEqual([1, 1, 1]);
    expect(await targets(0)).toEqual([0, 0, 0]);
    expect(await targets(100)).toEqual([3, 5, 4]);
    expect(await targets(null)).toEqual([3, 5, 4]);
  });

  test('autoscaling bounds follow the capacity, including ray#62682 (floor stuck at initial_replicas)', async () => {
    const sim = await simulator({
      replicaStartDelayMs: 0,
      code: { 'auto.app:build': { deployments: [{ name: 'Auto', autoscaling_config: { min_replicas: 0, initial_replicas: 1, max_replicas: 4 } }] } },
    });
    const client = clientFor(sim);
    const config = { applications: [{ name: 'a', import_path: 'auto.app:build' }] };
    const target = async (tc: number | null) => {
      await client.putServeConfig(CLUSTER, config, tc);
      return (await client.getServeDetails(CLUSTER)).applications.a.deployments.Auto.target_num_replicas;
    };
    expect(await target(0)).toBe(0);
    expect(await target(100)).toBe(1); // direction UP: the floor is initial_replicas, not min_replicas 0
    expect(await target(null)).toBe(0); // the final PUT without target_capacity clears it
  });

  test('a bad import path makes the application DEPLOY_FAILED', async () => {
    const sim = await simulator();
    const client = clientFor(sim);
    const sent = await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2.replace('rayshift_testapp.app:build', 'nosuchpkg.app:build'), 100);
    const r = await client.getCapacityReadiness(CLUSTER, { targetCapacity: 100, config: sent });
    expect(r.details.applications.web.status).toBe('DEPLOY_FAILED');
    expect(r).toMatchObject({ ready: false, failed: true });
    expect(r.reason).toMatch(/No module named 'nosuchpkg'/);
  });
});

describe('token auth (RAY_AUTH_MODE=token)', () => {
  test('the configured token is sent as x-ray-authorization: Bearer', async () => {
    const sim = await simulator({ token: TOKEN, replicaStartDelayMs: 0 });
    const client = clientFor(sim, { token: (c) => (c.name === 'ray-a' ? TOKEN : undefined) });
    await client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 10);
    expect((await client.getServeDetails(CLUSTER)).target_capacity).toBe(10);
    expect(sim.requests.map((r) => r.headers['x-ray-authorization'])).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    expect(sim.requests.map((r) => r.status)).toEqual([200, 200]);
  });

  test('a wrong token is a typed 403 naming cluster and address, never a token', async () => {
    const sim = await simulator({ token: TOKEN });
    const wrong = 'wrong-token-0123456789';
    for (const call of [(c: ServeDashboardClient) => c.getServeDetails(CLUSTER), (c: ServeDashboardClient) => c.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 10)]) {
      const err = await caught(call(clientFor(sim, { token: wrong })));
      expect(err).toMatchObject({ kind: 'forbidden', status: 403, cluster: 'team/ray-a', address: sim.url });
      expect(err.message).toContain('team/ray-a');
      expect(err.message).toContain(sim.url);
      expect(err.message).toMatch(/token was rejected/);
      for (const text of [err.message, err.body ?? '', err.stack ?? '', JSON.stringify(err)]) {
        expect(text).not.toContain(wrong);
        expect(text).not.toContain(TOKEN);
      }
    }
    expect(sim.config()).toBeUndefined();
  });

  test('a missing token is a typed 401', async () => {
    const sim = await simulator({ token: TOKEN });
    const err = await caught(clientFor(sim).getServeDetails(CLUSTER));
    expect(err).toMatchObject({ kind: 'unauthorized', status: 401, body: 'Unauthorized: Missing authentication token' });
    expect(err.message).toMatch(/requires a token \(RAY_AUTH_MODE=token\) and none is configured/);
  });
});

describe('transport behaviour', () => {
  test('a stalled dashboard gives a typed timeout', async () => {
    const sim = await simulator();
    sim.setStalled(true);
    const err = await caught(clientFor(sim, { timeoutMs: 100 }).getServeDetails(CLUSTER));
    expect(err).toMatchObject({ kind: 'timeout', cluster: 'team/ray-a', address: sim.url, method: 'GET', path: '/api/serve/applications/' });
    expect(err.status).toBeUndefined();
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/no complete answer within 100 ms/);
    const perCall = await caught(clientFor(sim).putServeConfig(CLUSTER, SERVE_CONFIG_V2, 0, { timeoutMs: 50 }));
    expect(perCall.kind).toBe('timeout');
  });

  test('an AbortSignal cancels the call', async () => {
    const sim = await simulator();
    sim.setStalled(true);
    const controller = new AbortController();
    const pending = clientFor(sim).getServeDetails(CLUSTER, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect((await caught(pending)).kind).toBe('aborted');
  });

  test("global fetch's PUT is refused as browser traffic (405); our client's PUT succeeds", async () => {
    const sim = await simulator();
    const url = `${sim.url}/api/serve/applications/`;
    const body = JSON.stringify(buildServeDeployBody(SERVE_CONFIG_V2, 10));
    const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(405);
    expect(await res.text()).toBe('Method Not Allowed for browser traffic.');
    expect(sim.requests[0].headers['sec-fetch-mode']).toBe('cors');
    expect(sim.config()).toBeUndefined();
    expect((await fetch(url)).status).toBe(200); // GET is not blocked
    // Ray's other browser markers: a Mozilla user agent, an Origin header.
    expect((await rawRequest(url, 'PUT', { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)', 'content-type': 'application/json' }, body)).status).toBe(405);
    expect((await rawRequest(url, 'PUT', { origin: 'http://evil.example', 'content-type': 'application/json' }, body)).status).toBe(405);

    await clientFor(sim).putServeConfig(CLUSTER, SERVE_CONFIG_V2, 10);
    expect(sim.targetCapacity()).toBe(10);
  });

  test('the browser check runs before token auth (405, not 401)', async () => {
    const sim = await simulator({ token: TOKEN });
    const res = await fetch(`${sim.url}/api/serve/applications/`, { method: 'PUT', body: '{}' });
    expect(res.status).toBe(405);
    await res.text();
  });

  test('a redirect to another host is refused and the other host is never contacted', async () => {
    const sim = await simulator({ token: TOKEN });
    let reached = 0;
    const other = http.createServer((_req, res) => {
      reached += 1;
      res.end('{}');
    });
    servers.push(other);
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherPort = (other.address() as AddressInfo).port;
    sim.setRedirect(`http://localhost:${otherPort}/api/serve/applications/?api_type=declarative`);
    const client = clientFor(sim, { token: TOKEN });
    for (const call of [() => client.getServeDetails(CLUSTER), () => client.putServeConfig(CLUSTER, SERVE_CONFIG_V2, 10)]) {
      const err = await caught(call());
      expect(err).toMatchObject({ kind: 'redirect', status: 307, address: sim.url });
      expect(err.message).toContain(`redirecting to http://localhost:${otherPort}`);
      expect(err.message).toMatch(/never followed/);
      expect(err.message).not.toContain(TOKEN);
    }
    expect(reached).toBe(0);
    expect(sim.requests).toHaveLength(2);
  });

  test('connection refused is a typed, retryable network error', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const client = new ServeDashboardClient({ resolver: { resolve: () => `http://127.0.0.1:${port}` } });
    const err = await caught(client.getServeDetails(CLUSTER));
    expect(err).toMatchObject({ kind: 'network', address: `http://127.0.0.1:${port}` });
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(err.retryable).toBe(true);
  });
});

describe('address resolution', () => {
  test("the default resolver uses KubeRay's head Service name and port 8265", async () => {
    const resolver = defaultDashboardResolver();
    expect(await resolver.resolve(CLUSTER)).toBe('http://ray-a-head-svc.team.svc.cluster.local:8265');
    const custom = defaultDashboardResolver({ clusterDomain: 'k8s.internal', port: 18265, addresses: { 'ray-b': 'http://10.213.2.2:8265' } });
    expect(await custom.resolve(CLUSTER)).toBe('http://ray-a-head-svc.team.svc.k8s.internal:18265');
    expect(await custom.resolve({ name: 'ray-b', namespace: 'any' })).toBe('http://10.213.2.2:8265');
    expect(() => defaultDashboardResolver({ port: 0 })).toThrow(/between 1 and 65535/);
  });

  test('a path prefix in the configured address is kept (e.g. an API-server proxy)', async () => {
    const client = new ServeDashboardClient({ resolver: { resolve: () => 'https://example.test/api/v1/namespaces/team/services/ray-a-head-svc:dashboard/proxy' } });
    expect(await client.dashboardAddress(CLUSTER)).toBe('https://example.test/api/v1/namespaces/team/services/ray-a-head-svc:dashboard/proxy');
  });

  test('unusable addresses are refused before anything is sent', async () => {
    for (const [address, why] of [
      ['ftp://10.0.0.1:8265', /unsupported protocol ftp:/],
      ['10.0.0.1:8265', /unsupported protocol|not an absolute URL/],
      ['http://user:secret@10.0.0.1:8265', /must not contain credentials/],
      ['http://10.0.0.1:8265/?x=1', /query or fragment/],
    ] as const) {
      const client = new ServeDashboardClient({ resolver: { resolve: () => address } });
      const err = await caught(client.getServeDetails(CLUSTER));
      expect(err.kind).toBe('address');
      expect(err.message).toMatch(why);
      expect(err.message).not.toContain('secret');
    }
    const failing = new ServeDashboardClient({ resolver: { resolve: () => Promise.reject(new Error('no such cluster')) } });
    const err = await caught(failing.getServeDetails(CLUSTER));
    expect(err).toMatchObject({ kind: 'address', address: '(unresolved)' });
    expect(err.message).toMatch(/team\/ray-a.*no such cluster/);
  });
});

describe('templateDashboardResolver', () => {
  test('fills namespace and cluster into the configured template', () => {
    const r = templateDashboardResolver('http://127.0.0.1:8001/{namespace}/{cluster}');
    expect(r.resolve({ namespace: 'llm', name: 'llm-ab12c' })).toBe('http://127.0.0.1:8001/llm/llm-ab12c');
  });

  test('refuses templates without {cluster} or with another scheme', () => {
    expect(() => templateDashboardResolver('http://127.0.0.1:8001/')).toThrow('must contain {cluster}');
    expect(() => templateDashboardResolver('file:///{cluster}')).toThrow('must be an http(s) URL');
  });
});
