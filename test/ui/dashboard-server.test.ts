/**
 * `rayshift dashboard`'s server against a stand-in upstream: static files under `/ui/` with a CSP,
 * nothing outside the built folder, API paths proxied with the caller's token (and without
 * `Impersonate-*` headers or cookies), server-sent events passed through as they are written, and a
 * google.rpc.Status when the API server is down.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningDashboard, dashboardCommand, plaintextTokenWarnings, startDashboard } from '../../lib/cli/dashboard-command';
import { parseListen } from '../../lib/cli/flag-parsers';

let dir: string;
let upstream: http.Server;
let upstreamUrl: string;
let dashboard: RunningDashboard;
let origin: string;
const seen: http.IncomingHttpHeaders[] = [];
let releaseSecondEvent: () => void = () => undefined;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-dashboard-'));
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
  fs.writeFileSync(path.join(dir, 'assets', 'app-1234.js'), 'console.log(1)');
  fs.writeFileSync(path.join(dir, '..', `${path.basename(dir)}-secret.txt`), 'secret');
  upstream = http.createServer((req, res) => {
    seen.push(req.headers);
    if (req.url?.includes('upgrade:watch')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"n":1}\n\n');
      releaseSecondEvent = () => res.end('event: message\ndata: {"n":2}\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, method: req.method }));
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;
  dashboard = await startDashboard({ apiServer: upstreamUrl, listen: '127.0.0.1:0', staticDir: dir });
  origin = `http://127.0.0.1:${dashboard.port}`;
});

afterAll(async () => {
  await dashboard?.close();
  await new Promise((r) => upstream?.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(`${dir}-secret.txt`, { force: true });
});

test('the page and its assets are served under /ui/ with a strict CSP; / redirects there', async () => {
  const page = await fetch(`${origin}/ui/`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(page.headers.get('cache-control')).toBe('no-cache');
  const asset = await fetch(`${origin}/ui/assets/app-1234.js`);
  expect(await asset.text()).toBe('console.log(1)');
  expect(asset.headers.get('cache-control')).toContain('immutable');
  const root = await fetch(`${origin}/`, { redirect: 'manual' });
  expect(root.status).toBe(302);
  expect(root.headers.get('location')).toBe('/ui/');
});

/** The status of a GET of `rawPath` exactly as written (fetch would normalise `..` segments). */
function rawStatus(rawPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: dashboard.port, path: rawPath }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

test('nothing outside the built folder is served', async () => {
  const secret = `${path.basename(dir)}-secret.txt`;
  for (const p of [`/ui/../${secret}`, `/ui/%2e%2e/${secret}`, `/ui/..%2f${secret}`, `/ui/assets/../../${secret}`, '/ui/missing.js', '/etc/passwd']) {
    expect({ p, status: await rawStatus(p) }).toEqual({ p, status: 404 });
  }
  expect(await rawStatus('/ui/assets/../index.html')).toBe(200);
});

test('API paths are proxied with the bearer token, without impersonation headers or cookies', async () => {
  const res = await fetch(`${origin}/apis/rayshift/v1/rayservices?page_size=2`, {
    headers: { authorization: 'Bearer abc', 'impersonate-user': 'admin', 'impersonate-group': 'system:masters', cookie: 'a=b' },
  });
  expect(await res.json()).toEqual({ path: '/apis/rayshift/v1/rayservices?page_size=2', method: 'GET' });
  const h = seen[seen.length - 1];
  expect(h.authorization).toBe('Bearer abc');
  expect(Object.keys(h).filter((k) => k.startsWith('impersonate-') || k === 'cookie')).toEqual([]);
  const post = await fetch(`${origin}/apis/rayshift/v1/namespaces/a/rayservices/b:pause`, { method: 'POST', body: '{}' });
  expect(await post.json()).toMatchObject({ method: 'POST' });
});

/** The status and body of a GET of `rawPath` sent with exactly this `Host`. */
function withHost(rawPath: string, host: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: dashboard.port, path: rawPath, headers: { host }, setHost: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}

test('a foreign Host (DNS rebinding) is 403 before anything is proxied or served; the dashboard\'s own address passes on as X-Forwarded-Host', async () => {
  const before = seen.length;
  for (const host of ['rebind.attacker.example', `rebind.attacker.example:${dashboard.port}`, `127.0.0.1:${dashboard.port + 1}`, `127.0.0.1.attacker.example:${dashboard.port}`, '']) {
    for (const p of ['/apis/rayshift/v1/rayservices', '/healthz', '/ui/']) {
      const answer = await withHost(p, host);
      expect({ host, p, status: answer.status }).toEqual({ host, p, status: 403 });
      expect(JSON.parse(answer.text)).toMatchObject({ code: 7, message: expect.stringContaining('the dashboard answers only to') });
    }
  }
  expect(seen.length).toBe(before);
  for (const host of [`localhost:${dashboard.port}`, `127.0.0.1:${dashboard.port}`, `[::1]:${dashboard.port}`]) {
    expect((await withHost('/apis/rayshift/v1/rayservices', host)).status).toBe(200);
    expect(seen[seen.length - 1]['x-forwarded-host']).toBe(host);
  }
  // A browser's own forwarding headers are not passed on as if the dashboard had seen them.
  await fetch(`${origin}/apis/rayshift/v1/whoami`, { headers: { 'x-forwarded-host': 'evil.example', forwarded: 'host=evil.example', origin } });
  const h = seen[seen.length - 1];
  expect([h['x-forwarded-host'], h.forwarded, h.origin]).toEqual([`127.0.0.1:${dashboard.port}`, undefined, origin]);
});

test('server-sent events pass through as they are written', async () => {
  const res = await fetch(`${origin}/apis/rayshift/v1/namespaces/a/rayservices/b/upgrade:watch`);
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const reader = res.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  // The first event arrived while the upstream still holds the second.
  expect(first).toBe('event: message\ndata: {"n":1}\n\n');
  releaseSecondEvent();
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
  expect(rest).toBe('event: message\ndata: {"n":2}\n\n');
});

test('an unreachable API server is a google.rpc UNAVAILABLE status', async () => {
  const down = await startDashboard({ apiServer: 'http://127.0.0.1:1', listen: '127.0.0.1:0', staticDir: dir });
  try {
    const res = await fetch(`http://127.0.0.1:${down.port}/apis/rayshift/v1/whoami`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ code: 14, message: 'the API server is unreachable', details: [] });
  } finally {
    await down.close();
  }
});

test('a missing build is reported, and --listen is parsed', async () => {
  await expect(startDashboard({ apiServer: upstreamUrl, listen: '127.0.0.1:0', staticDir: path.join(dir, 'nope') })).rejects.toThrow(/npm run build:ui/);
  expect(parseListen('0.0.0.0:8090')).toEqual({ host: '0.0.0.0', port: 8090 });
  expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
  expect(parseListen(':9000')).toEqual({ port: 9000 });
  expect(() => parseListen('8090')).toThrow(/host:port/);
  expect(() => parseListen('a:70000')).toThrow(/host:port/);
});

test('the command reports a bad API server URL as an invalid invocation', async () => {
  const out: string[] = [];
  const plain = { red: (s: string) => s, yellow: (s: string) => s, green: (s: string) => s, dim: (s: string) => s, bold: (s: string) => s };
  const io = { out: (t: string) => void out.push(t), err: (t: string) => void out.push(t), outStyle: plain, errStyle: plain, interactive: false };
  expect(await dashboardCommand({ apiServer: 'ftp://example.test' }, io, Promise.resolve())).toBe(1);
  expect(out.join('')).toMatch(/--api-server must be an http\(s\) URL/);
});

test('the command warns wherever viewers\' tokens would cross a network in plain HTTP', () => {
  expect(plaintextTokenWarnings({ apiServer: 'https://rayshift-api:8443' })).toEqual([]);
  expect(plaintextTokenWarnings({ apiServer: 'http://127.0.0.1:8080', listen: '[::1]:8090' })).toEqual([]);
  expect(plaintextTokenWarnings({ apiServer: 'http://rayshift-api:8080' })).toEqual([expect.stringMatching(/forwarded to the API server http:\/\/rayshift-api:8080 over plain HTTP/)]);
  expect(plaintextTokenWarnings({ apiServer: 'https://rayshift-api:8443', listen: '0.0.0.0:8090' })).toEqual([expect.stringMatching(/served over plain HTTP beyond this machine/)]);
});
