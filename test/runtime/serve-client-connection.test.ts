/**
 * How the Ray dashboard client connects, against the TEST-ONLY simulated dashboard over real HTTP:
 * token auth, timeouts, aborts, Ray's browser-traffic check, refused redirects, connection errors,
 * and dashboard address resolution (default and template resolvers, unusable addresses).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServeDashboardClient, buildServeDeployBody } from '../../lib/runtime/serve/client';
import { defaultDashboardResolver, templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { ServeApiError } from '../../lib/runtime/serve/errors';
import { rejectionOf } from '../support/rejection';
import { CLUSTER, SERVE_CONFIG_V2, clientFor, closeServers, rawRequest, servers, simulator } from './support/serve-client-harness';

const TOKEN = 'tok-3f9a2c1e7b5d4a60';

afterEach(closeServers);

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
      const err = await rejectionOf(call(clientFor(sim, { token: wrong })), ServeApiError);
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
    const err = await rejectionOf(clientFor(sim).getServeDetails(CLUSTER), ServeApiError);
    expect(err).toMatchObject({ kind: 'unauthorized', status: 401, body: 'Unauthorized: Missing authentication token' });
    expect(err.message).toMatch(/requires a token \(RAY_AUTH_MODE=token\) and none is configured/);
  });
});

describe('transport behaviour', () => {
  test('a stalled dashboard gives a typed timeout', async () => {
    const sim = await simulator();
    sim.setStalled(true);
    const err = await rejectionOf(clientFor(sim, { timeoutMs: 100 }).getServeDetails(CLUSTER), ServeApiError);
    expect(err).toMatchObject({ kind: 'timeout', cluster: 'team/ray-a', address: sim.url, method: 'GET', path: '/api/serve/applications/' });
    expect(err.status).toBeUndefined();
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/no complete answer within 100 ms/);
    const perCall = await rejectionOf(clientFor(sim).putServeConfig(CLUSTER, SERVE_CONFIG_V2, 0, { timeoutMs: 50 }), ServeApiError);
    expect(perCall.kind).toBe('timeout');
  });

  test('an AbortSignal cancels the call', async () => {
    const sim = await simulator();
    sim.setStalled(true);
    const controller = new AbortController();
    const pending = clientFor(sim).getServeDetails(CLUSTER, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect((await rejectionOf(pending, ServeApiError)).kind).toBe('aborted');
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
      const err = await rejectionOf(call(), ServeApiError);
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
    const err = await rejectionOf(client.getServeDetails(CLUSTER), ServeApiError);
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
      const err = await rejectionOf(client.getServeDetails(CLUSTER), ServeApiError);
      expect(err.kind).toBe('address');
      expect(err.message).toMatch(why);
      expect(err.message).not.toContain('secret');
    }
    const failing = new ServeDashboardClient({ resolver: { resolve: () => Promise.reject(new Error('no such cluster')) } });
    const err = await rejectionOf(failing.getServeDetails(CLUSTER), ServeApiError);
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
