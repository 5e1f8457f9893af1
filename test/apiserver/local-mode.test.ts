/**
 * `--insecure-local` cannot be driven by a web page: REST bodies must be JSON (415 otherwise, so a
 * cross-origin "simple" text/plain POST is refused), a foreign Origin is refused with 403 and a
 * foreign Host (DNS rebinding) too, while same-origin calls and the typed clients still work. The
 * server runs against a kubeconfig whose cluster is never called: every refusal comes first.
 */
import * as http from 'node:http';
import { Code } from '@connectrpc/connect';
import { createApiClient } from '../../lib/apiserver/client';
import { startApiServer, type RunningApiServer } from '../../lib/apiserver/server';
import { neverCalledKubeConfig } from './support/never-called-kubeconfig';

let server: RunningApiServer;

/** One HTTP/1.1 request with exactly these headers (Host included when given). */
function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, path, method, headers, setHost: !('host' in headers) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const pause = '/apis/rayshift/v1/namespaces/team-a/rayservices/llm:pause';

beforeAll(async () => {
  server = await startApiServer({ kubeConfig: neverCalledKubeConfig(), insecureLocal: true, port: 0 });
});

afterAll(async () => {
  await server.close();
});

test('a REST write whose body is not JSON is 415, before any Kubernetes call', async () => {
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    const answer = await send('POST', pause, { 'content-type': contentType }, '{"reason":"drive-by"}');
    expect(answer.status).toBe(415);
    expect(answer.body).toMatchObject({ code: Code.InvalidArgument, message: expect.stringContaining('application/json') });
  }
  const missing = await send('POST', pause, { 'content-length': '2' }, '{}');
  expect(missing.status).toBe(415);
});

test('a cross-origin request is 403 on REST and Connect; a same-origin one is served', async () => {
  const rest = await send('GET', '/apis/rayshift/v1/whoami', { origin: 'https://evil.example' });
  expect(rest.status).toBe(403);
  expect(rest.body).toMatchObject({ code: Code.PermissionDenied, message: expect.stringContaining('evil.example') });
  const write = await send('POST', pause, { origin: 'http://evil.example', 'content-type': 'application/json' }, '{}');
  expect(write.status).toBe(403);
  const connect = await send('POST', '/rayshift.v1.IdentityService/WhoAmI', { origin: 'null', 'content-type': 'application/json' }, '{}');
  expect(connect.status).toBe(403);
  expect(connect.body.code).toBe('permission_denied');

  for (const origin of [`http://127.0.0.1:${server.port}`, `http://localhost:${server.port}`]) {
    const same = await send('GET', '/apis/rayshift/v1/whoami', { origin });
    expect(same.status).toBe(200);
    expect(same.body.username).toBe('rayshift:insecure-local');
  }
});

test('a foreign Host (DNS rebinding) is 403; loopback names with the port are served', async () => {
  for (const host of ['evil.example', `evil.example:${server.port}`, `127.0.0.1:${server.port + 1}`, `127.0.0.1.evil.example:${server.port}`, `user@127.0.0.1:${server.port}`, '']) {
    const answer = await send('GET', '/apis/rayshift/v1/whoami', { host });
    expect(answer.status).toBe(403);
    expect(answer.body.message).toContain('--insecure-local answers only to');
  }
  expect((await send('GET', '/healthz', { host: 'evil.example' })).status).toBe(403);
  for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `LOCALHOST:${server.port}`, `[::1]:${server.port}`, `127.0.0.2:${server.port}`]) {
    expect((await send('GET', '/apis/rayshift/v1/whoami', { host })).status).toBe(200);
  }
});

test('behind a proxy (rayshift dashboard): X-Forwarded-Host must be a local name, and an Origin that host', async () => {
  const host = `127.0.0.1:${server.port}`;
  for (const forwarded of ['rebind.attacker.example:8090', 'rebind.attacker.example', '10.1.2.3:8090', '']) {
    const answer = await send('GET', '/apis/rayshift/v1/whoami', { host, 'x-forwarded-host': forwarded });
    expect({ forwarded, status: answer.status }).toEqual({ forwarded, status: 403 });
    expect(answer.body.message).toContain('x-forwarded-host');
  }
  // The dashboard's own page, on its own port: reads and writes are served.
  expect((await send('GET', '/apis/rayshift/v1/whoami', { host, 'x-forwarded-host': 'localhost:8090' })).status).toBe(200);
  const write = await send('POST', '/rayshift.v1.IdentityService/WhoAmI', { host, 'x-forwarded-host': '127.0.0.1:8090', origin: 'http://127.0.0.1:8090', 'content-type': 'application/json' }, '{}');
  expect(write.status).toBe(200);
  // Another page, even a local one on another port, is cross-origin to the proxy's.
  for (const origin of ['http://127.0.0.1:3000', `http://127.0.0.1:${server.port}`, 'http://rebind.attacker.example:8090', 'null']) {
    const other = await send('POST', '/rayshift.v1.IdentityService/WhoAmI', { host, 'x-forwarded-host': '127.0.0.1:8090', origin, 'content-type': 'application/json' }, '{}');
    expect({ origin, status: other.status }).toEqual({ origin, status: 403 });
  }
});

test('the typed clients (gRPC over h2c, Connect, gRPC-Web) still work in local mode', async () => {
  for (const protocol of ['grpc', 'connect', 'grpc-web'] as const) {
    const api = createApiClient({ baseUrl: server.url, protocol });
    try {
      expect((await api.identity.whoAmI({})).username).toBe('rayshift:insecure-local');
    } finally {
      api.close();
    }
  }
});
