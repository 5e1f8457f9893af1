/**
 * The simulated pod network (support/netns.ts, support/pod-network.ts) behaves like a pod network
 * where the suites depend on it: a peer that still holds a keep-alive connection to a Pod IP which
 * has since moved to another host gets a reset, which an HTTP client answers by retrying on a new
 * connection, not silence. Stop 42's CI saw the silence: kwok gave 10.244.1.2 to a Pod bound to
 * Ray head a while Traefik still held idle connections from when it was head b's, head a had no
 * route back to head b's link address, and each request sent on those connections hung until the
 * load's 10 s timeout. Needs root for network namespaces, as every e2e suite does.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as http from 'node:http';
import { NetnsHost, createNetnsHost } from './support/netns';
import { plug, unplug } from './support/pod-network';

/** Indexes far from the heads' (1, 2, …), so a run beside a live stack would not collide. */
const HOSTS = [
  { label: 'pnx', index: 248 },
  { label: 'pny', index: 249 },
];
/** An address outside kwok's node CIDRs in the e2e stacks. */
const POD_IP = '10.244.250.2';
const PORT = 8000;
/** Bounds a request that never ends, so a hang fails the test with a message instead of its timeout. */
const HANG_MS = 20_000;

const hosts: NetnsHost[] = [];
const servers: ChildProcess[] = [];

/** One GET through `agent`; resolves with the body or rejects with the socket's error. */
function get(agent: http.Agent, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port: PORT, path: '/', agent, timeout: HANG_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`GET http://${host}:${PORT}/ got no answer in ${HANG_MS} ms`), { code: 'HUNG' })));
    req.on('error', reject);
  });
}

/** Retries `get` on a fresh agent until the host's server answers (it starts in the background). */
async function answered(host: string): Promise<string> {
  for (;;) {
    const agent = new http.Agent({ keepAlive: false });
    try {
      return await get(agent, host);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNREFUSED') throw err;
      await new Promise((r) => setImmediate(r));
    } finally {
      agent.destroy();
    }
  }
}

beforeAll(async () => {
  for (const { label, index } of HOSTS) {
    const host = createNetnsHost(label, index);
    hosts.push(host);
    // Each host's server names its host and keeps connections open far longer than the test lasts.
    const server = `require('http').createServer((q, s) => s.end(${JSON.stringify(label)})).setTimeout(0).listen(${PORT}).keepAliveTimeout = 600000`;
    servers.push(spawn('ip', ['netns', 'exec', host.name, process.execPath, '-e', server], { stdio: 'ignore' }));
    await answered(host.address);
  }
});

afterAll(() => {
  unplug(HOSTS[0].label, POD_IP);
  unplug(HOSTS[1].label, POD_IP);
  for (const s of servers) s.kill('SIGKILL');
  for (const h of hosts) h.remove();
});

test('a keep-alive connection to a Pod IP that moved to another head is reset, and a new connection reaches the new head', async () => {
  const [first, second] = HOSTS;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    plug(first.label, POD_IP);
    const before = await get(agent, POD_IP);
    // The Pod goes and kwok gives its address to a Pod bound to the other head.
    unplug(first.label, POD_IP);
    plug(second.label, POD_IP);
    const onStale = await get(agent, POD_IP).then(
      (body) => `answered ${body}`,
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    );
    const after = await get(agent, POD_IP);
    expect({ before, onStale, after }).toEqual({ before: first.label, onStale: 'ECONNRESET', after: second.label });
  } finally {
    agent.destroy();
  }
});
