/**
 * The simulated Serve's placement (serve-simulator-placement.ts), which the shrinkFirst cluster case
 * relies on: replicas wait for a worker of their own and report it as Ray does, move off workers as
 * target_capacity falls, and a worker left empty has its proxy drain. Fake clock, no timers.
 */
import * as http from 'node:http';
import { SimulatedServeDashboard, SimulatedServeNode, startSimulatedServeDashboard } from './serve-simulator';

let clock = 0;
let nodes: SimulatedServeNode[] = [];
let dash: SimulatedServeDashboard;

const config = (targetCapacity?: number) => ({
  applications: [{ name: 'app', import_path: 'rayshift_testapp.app:build', route_prefix: '/', deployments: [{ name: 'Version', num_replicas: 4 }] }],
  ...(targetCapacity !== undefined ? { target_capacity: targetCapacity } : {}),
});

/** A deploy, as rayshift's client sends it (node:http: fetch's `sec-fetch-mode` header trips Ray's browser rule). */
async function put(body: object): Promise<void> {
  const status = await new Promise<number | undefined>((resolve, reject) => {
    const req = http.request(`${dash.url}/api/serve/applications/`, { method: 'PUT', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  expect(status).toBe(200);
}

/** Each replica as `state@node_instance_id`, and each proxy as `node_instance_id:status`. */
function seen(): { replicas: string[]; proxies: string[] } {
  const d = dash.details() as any;
  return {
    replicas: d.applications.app.deployments.Version.replicas.map((r: any) => `${r.state}@${r.node_instance_id}`).sort(),
    proxies: Object.values(d.proxies).map((p: any) => `${p.node_instance_id}:${p.status}`).sort(),
  };
}

beforeEach(async () => {
  clock = 1000;
  nodes = [{ name: 'svc-head', kind: 'head', ip: '10.0.0.1' }];
  dash = await startSimulatedServeDashboard({ now: () => clock, replicaStartDelayMs: 10, proxyDrainMs: 100, placement: () => nodes });
});

afterEach(() => dash.close());

test('a replica waits, unplaced (node_instance_id null), until a worker of its own is up, then runs there', async () => {
  await put(config());
  expect(seen()).toEqual({ replicas: ['STARTING@null', 'STARTING@null', 'STARTING@null', 'STARTING@null'], proxies: ['svc-head:HEALTHY'] });
  nodes.push({ name: 'w-a', kind: 'worker', ip: '10.0.0.2' }, { name: 'w-b', kind: 'worker', ip: '10.0.0.3' });
  clock += 10;
  expect(seen().replicas).toEqual(['STARTING@null', 'STARTING@null', 'STARTING@w-a', 'STARTING@w-b']);
  clock += 10;
  expect(seen().replicas).toEqual(['RUNNING@w-a', 'RUNNING@w-b', 'STARTING@null', 'STARTING@null']);
  expect(seen().proxies).toEqual(['svc-head:HEALTHY', 'w-a:HEALTHY', 'w-b:HEALTHY']);
  const replica = (dash.details() as any).applications.app.deployments.Version.replicas.find((r: any) => r.node_instance_id === 'w-a');
  expect(replica).toEqual(expect.objectContaining({ node_ip: '10.0.0.2', node_id: expect.stringMatching(/^[0-9a-f]{56}$/) }));
});

test('as target_capacity falls, replicas leave their workers; an empty worker\'s proxy drains, then is DRAINED; a replica whose node goes dies and is replaced', async () => {
  nodes.push(...['w-a', 'w-b', 'w-c', 'w-d'].map((name, i) => ({ name, kind: 'worker' as const, ip: `10.0.0.${i + 2}` })));
  await put(config());
  clock += 10;
  expect(seen().replicas).toEqual(['RUNNING@w-a', 'RUNNING@w-b', 'RUNNING@w-c', 'RUNNING@w-d']);
  await put(config(50));
  const after = seen();
  expect(after.replicas).toHaveLength(2);
  const empty = ['w-a', 'w-b', 'w-c', 'w-d'].filter((w) => !after.replicas.some((r) => r.endsWith(`@${w}`)));
  expect(empty).toHaveLength(2);
  expect(after.proxies).toEqual(expect.arrayContaining(empty.map((w) => `${w}:DRAINING`)));
  clock += 100;
  expect(seen().proxies).toEqual(expect.arrayContaining(empty.map((w) => `${w}:DRAINED`)));
  // The freed workers go; a busy one dies too: its replica is replaced, and waits for a worker.
  const busy = after.replicas[0].split('@')[1];
  nodes = nodes.filter((n) => !empty.includes(n.name) && n.name !== busy);
  expect(seen().replicas.sort()).toEqual([after.replicas[1], 'STARTING@null'].sort());
});
