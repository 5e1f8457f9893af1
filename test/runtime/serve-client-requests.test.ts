/**
 * The Ray dashboard client's GET and PUT of /api/serve/applications/ against the TEST-ONLY simulated
 * dashboard over real HTTP: parsing the answers, what is sent (serveConfigV2 as JSON plus
 * target_capacity), capacities refused before sending, and Ray's validation errors as typed 400s.
 */
import { buildServeDeployBody } from '../../lib/runtime/serve/client';
import { ServeApiError } from '../../lib/runtime/serve/errors';
import { rejectionOf } from '../support/rejection';
import { CLUSTER, SERVE_CONFIG_V2, clientFor, closeServers, rawRequest, simulator } from './support/serve-client-harness';

afterEach(closeServers);

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
      const err = await rejectionOf(clientFor(sim).putServeConfig(CLUSTER, SERVE_CONFIG_V2, tc), ServeApiError);
      expect(err.kind).toBe('config');
      expect(err.message).toMatch(new RegExp(`target_capacity must be an integer between 0 and 100 .*got ${tc}`));
    }
    expect(() => buildServeDeployBody('applications: [', 10)).toThrow(/not valid YAML/);
    expect(sim.requests).toEqual([]);
  });

  test("Ray's validation errors come back as typed 400s", async () => {
    const sim = await simulator();
    const dup = { applications: [{ name: 'a', import_path: 'x:y' }, { name: 'a', import_path: 'x:y', route_prefix: '/b' }] };
    const err = await rejectionOf(clientFor(sim).putServeConfig(CLUSTER, dup, 10), ServeApiError);
    expect(err).toMatchObject({ kind: 'http', status: 400, cluster: 'team/ray-a', address: sim.url });
    expect(err.message).toMatch(/duplicate or empty application name 'a'/);
    expect(err.retryable).toBe(false);
    // The simulator's own target_capacity check, as Ray answers a raw PUT of 101.
    const raw = await rawRequest(`${sim.url}/api/serve/applications/`, 'PUT', { 'content-type': 'application/json' }, JSON.stringify({ applications: [], target_capacity: 101 }));
    expect(raw.status).toBe(400);
    expect(raw.body).toMatch(/target_capacity\n {2}ensure this value is less than or equal to 100/);
  });
});
