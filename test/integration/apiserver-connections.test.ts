/**
 * Issue 31 items 3-5 against a real kube-apiserver:
 * - `rayshift dashboard` in front of `api-server --insecure-local` refuses a DNS-rebinding `Host`
 *   (reads too), serves its own address, and the local server accepts the dashboard page's writes
 *   (its `Origin` checked against the forwarded `Host`) while refusing a foreign `Origin`;
 * - 1,000 idle TLS HTTP/2 sessions without a token are closed by the idle timeout (4 s here), and a
 *   session with a watch stream (heartbeats a second apart) outlives it;
 * - the fourth watch of one caller is RESOURCE_EXHAUSTED (gRPC) / 429 (REST) with a cap of 3, while
 *   another caller's is served, and a closed watch frees its slot;
 * - a flood of garbage tokens from one address spends its failure budget (429) without stopping a
 *   valid token from that address, also once the token's cached answer has expired (the auth clock
 *   is the test's, moved past the cache's 10 s instead of waiting).
 * Figures (file descriptors and RSS around the idle sessions) are printed at the end.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as os from 'node:os';
import * as path from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { UpgradeEventType } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import { startApiServer, type RunningApiServer } from '../../lib/apiserver/server';
import { startDashboard, type RunningDashboard } from '../../lib/cli/dashboard-command';
import { loadClientNode } from '../../lib/runtime/kube/client-node';
import { ApiEnv, TEAM_A, TEAM_B, rayServiceBody, startApiEnv } from '../apiserver/support/api-env';
import { waitFor } from '../support/operator-env';

let env: ApiEnv;
// The server's auth clock (cache, budgets), moved by the test; any fixed start does, no wall clock.
let now = Date.UTC(2026, 0, 1);
const figures: string[] = [];
const WATCH_CAP = 3;
const SESSIONS = 1000;
/** Longer than opening the sessions takes here (about 2 s), so that all are open at once before the first closes. */
const IDLE_SECONDS = 4;
const base = (ns: string) => `/apis/rayshift/v1/namespaces/${ns}/rayservices`;

beforeAll(async () => {
  env = await startApiEnv({ limits: { idleTimeoutSeconds: IDLE_SECONDS, maxSessions: 2 * SESSIONS, maxWatchesPerCaller: WATCH_CAP }, authClock: () => now });
  expect((await env.rest('POST', base(TEAM_A), rayServiceBody('watched-a'))).status).toBe(200);
  expect((await env.rest('POST', base(TEAM_B), rayServiceBody('watched-b'), { token: env.tokens.bob })).status).toBe(200);
}, 180_000);

afterAll(async () => {
  console.log(figures.join('\n'));
  await env?.stop();
});

describe('rayshift dashboard in front of api-server --insecure-local', () => {
  let local: RunningApiServer;
  let dashboard: RunningDashboard;
  let staticDir: string;

  beforeAll(async () => {
    const kc = new (loadClientNode().KubeConfig)();
    kc.loadFromFile(env.cp.kubeconfigPath);
    local = await startApiServer({ kubeConfig: kc, insecureLocal: true, port: 0 });
    staticDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-dashboard-'));
    fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>t</title>');
    dashboard = await startDashboard({ apiServer: local.url, listen: '127.0.0.1:0', staticDir });
  });

  afterAll(async () => {
    await dashboard?.close();
    await local?.close();
    fs.rmSync(staticDir, { recursive: true, force: true });
  });

  /** One request to the dashboard with exactly this `Host` (and `headers`). */
  function viaDashboard(method: string, urlPath: string, host: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: dashboard.port, path: urlPath, method, headers: { ...headers, host }, setHost: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  test('a DNS-rebinding Host is 403 on reads and writes and leaks nothing; the dashboard\'s own Host reads', async () => {
    const own = `127.0.0.1:${dashboard.port}`;
    for (const host of ['rebind.attacker.example', `rebind.attacker.example:${dashboard.port}`]) {
      const read = await viaDashboard('GET', '/apis/rayshift/v1/rayservices', host);
      expect({ host, status: read.status }).toEqual({ host, status: 403 });
      expect(read.text).not.toContain('watched-a');
      const write = await viaDashboard('POST', `${base(TEAM_A)}/watched-a:pause`, host, { origin: `http://${host}`, 'content-type': 'application/json' }, '{"reason":"rebind"}');
      expect(write.status).toBe(403);
    }
    for (const host of [own, `localhost:${dashboard.port}`]) {
      const read = await viaDashboard('GET', '/apis/rayshift/v1/rayservices', host);
      expect({ host, status: read.status }).toEqual({ host, status: 200 });
      expect(JSON.parse(read.text).rayServices.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(['watched-a', 'watched-b']));
    }
  });

  test("the dashboard page's own write reaches the local server (its Origin is the forwarded Host); a foreign Origin is 403", async () => {
    const own = `127.0.0.1:${dashboard.port}`;
    const headers = { 'content-type': 'application/json' };
    const foreign = await viaDashboard('POST', `${base(TEAM_A)}/watched-a:pause`, own, { ...headers, origin: 'http://127.0.0.1:3000' }, '{"reason":"other page"}');
    expect(foreign.status).toBe(403);
    const mine = await viaDashboard('POST', `${base(TEAM_A)}/watched-a:pause`, own, { ...headers, origin: `http://${own}` }, '{"reason":"from the dashboard"}');
    expect({ status: mine.status, text: mine.text }).toMatchObject({ status: 200 });
    const stored = await env.admin.get({ apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true }, 'watched-a', TEAM_A);
    expect(stored?.metadata.annotations?.['rayshift.dev/paused']).toBe('true');
    // Resume through the same path, so the service is as the other tests expect.
    expect((await viaDashboard('POST', `${base(TEAM_A)}/watched-a:resume`, own, { ...headers, origin: `http://${own}` }, '{}')).status).toBe(200);
  });
});

/** Open file descriptors of this process (the API server runs in it). */
const openFds = () => fs.readdirSync('/proc/self/fd').length;

test(`${SESSIONS} idle TLS HTTP/2 sessions without a token are closed by the idle timeout; a session with a watch outlives it`, async () => {
  const fdsBefore = openFds();
  const rssBefore = process.memoryUsage().rss;
  const sessions: http2.ClientHttp2Session[] = [];
  const closed: Promise<void>[] = [];
  const connected: Promise<void>[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const s = http2.connect(env.api.url, { ca: env.cp.ca });
    s.on('error', () => undefined);
    sessions.push(s);
    connected.push(new Promise((r) => s.once('remoteSettings', () => r())));
    closed.push(new Promise((r) => s.once('close', () => r())));
  }
  await Promise.all(connected);
  const fdsOpen = openFds();
  const rssOpen = process.memoryUsage().rss;

  // A watch with heartbeats a second apart keeps its session busy past the idle timeout.
  const events: UpgradeEventType[] = [];
  const cancel = new AbortController();
  const heartbeats = IDLE_SECONDS + 1;
  let outlived!: () => void;
  const sawHeartbeats = new Promise<void>((r) => (outlived = r));
  const watching = (async () => {
    for await (const e of env.client('grpc', env.tokens.alice).rayServices.watchUpgrade({ namespace: TEAM_A, name: 'watched-a', heartbeatSeconds: 1 }, { signal: cancel.signal })) {
      events.push(e.type);
      if (events.length === 1 + heartbeats) outlived();
    }
  })().catch((e: unknown) => ConnectError.from(e));

  await Promise.all(closed);
  const fdsAfter = openFds();
  figures.push(
    `${SESSIONS} idle TLS HTTP/2 sessions: file descriptors ${fdsBefore} → ${fdsOpen} open → ${fdsAfter} after the idle timeout; ` +
      `RSS (client and server, one process) ${(rssBefore / 2 ** 20).toFixed(0)} → ${(rssOpen / 2 ** 20).toFixed(0)} MB open → ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB after`,
  );
  expect(sessions.every((s) => s.destroyed)).toBe(true);
  expect(fdsAfter - fdsBefore).toBeLessThan(SESSIONS / 10);

  await sawHeartbeats;
  expect(events).toEqual([UpgradeEventType.SNAPSHOT, ...Array(heartbeats).fill(UpgradeEventType.HEARTBEAT)]);
  cancel.abort();
  expect((await watching)?.code).toBe(Code.Canceled);
}, 120_000);

describe(`a caller has at most ${WATCH_CAP} watches open`, () => {
  /** Opens a gRPC watch as `token` and resolves once its snapshot arrived (or with its error). */
  function openWatch(token: string, namespace: string, name: string, signal: AbortSignal): Promise<ConnectError | 'open'> {
    return new Promise((resolve) => {
      (async () => {
        for await (const e of env.client('grpc', token).rayServices.watchUpgrade({ namespace, name, heartbeatSeconds: 3600 }, { signal })) {
          if (e.type === UpgradeEventType.SNAPSHOT) resolve('open');
        }
      })().catch((e: unknown) => resolve(ConnectError.from(e)));
    });
  }

  test('the cap+1th watch of alice is RESOURCE_EXHAUSTED (REST 429), bob\'s is served, and a closed watch frees its slot', async () => {
    const held = Array.from({ length: WATCH_CAP }, () => new AbortController());
    const others: AbortController[] = [];
    try {
      expect(await Promise.all(held.map((c) => openWatch(env.tokens.alice, TEAM_A, 'watched-a', c.signal)))).toEqual(Array(WATCH_CAP).fill('open'));
      const extra = new AbortController();
      others.push(extra);
      const refused = await openWatch(env.tokens.alice, TEAM_A, 'watched-a', extra.signal);
      expect(refused).toBeInstanceOf(ConnectError);
      expect((refused as ConnectError).code).toBe(Code.ResourceExhausted);
      expect((refused as ConnectError).rawMessage).toBe(`alice already has ${WATCH_CAP} watches open, the limit of --max-watches-per-caller (${WATCH_CAP}); close one first`);
      const rest = await env.rest('GET', `${base(TEAM_A)}/watched-a/upgrade:watch`);
      expect({ status: rest.status, code: rest.body.code }).toEqual({ status: 429, code: Code.ResourceExhausted });

      const bob = new AbortController();
      others.push(bob);
      expect(await openWatch(env.tokens.bob, TEAM_B, 'watched-b', bob.signal)).toBe('open');

      held[0].abort();
      // The slot is released when the server sees the stream end: retried until then.
      let reopened: ConnectError | 'open' = 'open';
      await waitFor(async () => {
        const c = new AbortController();
        others.push(c);
        reopened = await openWatch(env.tokens.alice, TEAM_A, 'watched-a', c.signal);
        return reopened === 'open';
      }, "a watch in alice's freed slot", 10_000);
      expect(reopened).toBe('open');
    } finally {
      for (const c of [...held, ...others]) c.abort();
    }
  });
});

test('a garbage-token flood from one address does not stop a valid token from it, also after its cached answer expired', async () => {
  const whoami = (token: string) => env.rest('GET', '/apis/rayshift/v1/whoami', undefined, { token });
  expect((await whoami(env.tokens.alice)).status).toBe(200);
  // Past the cache's 10 s: alice's answer has expired, and her next call needs a TokenReview.
  now += 11_000;
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) statuses.push((await whoami(`garbage-${process.pid}-${i}`)).status);
  // The address's budget (20 refused tokens) is spent; further garbage costs no TokenReview.
  expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
  expect(new Set(statuses.slice(20))).toEqual(new Set([429]));
  figures.push(`garbage flood from 127.0.0.1: ${statuses.filter((s) => s === 401).length} refused (401), ${statuses.filter((s) => s === 429).length} throttled (429)`);

  // Reviewed although its address is throttled (the clock has not moved, so the budget is still spent).
  const after = await whoami(env.tokens.alice);
  expect({ status: after.status, user: after.body.username }).toEqual({ status: 200, user: 'alice' });
  expect((await whoami(`garbage-${process.pid}-late`)).status).toBe(429);
});
