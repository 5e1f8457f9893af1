/**
 * Token auth against a real Ray head started with `RAY_AUTH_MODE=token`: rayshift's dashboard
 * client deploys and reads Serve with the right token, and fails clearly (naming the status and
 * the cause, never echoing the token) with a wrong one or none. Needs `npm run e2e:setup`.
 */
import * as crypto from 'node:crypto';
import { ServeDashboardClient } from '../../lib/runtime/serve/client';
import { ServeApiError } from '../../lib/runtime/serve/errors';
import { chooseNetwork } from './support/e2e-env';
import { RayHead, httpGet, startRayHead } from './support/ray-head';
import { e2eServeConfig } from './support/scenario';

const TOKEN = crypto.randomBytes(24).toString('hex');
const CLUSTER = { namespace: 'e2e', name: 'token-auth' };
let head: RayHead;

beforeAll(async () => {
  const { network, why } = chooseNetwork();
  process.stdout.write(`[e2e] Ray head: ${why}\n`);
  head = await startRayHead({ label: 't', index: 3, network, auth: { mode: 'token', token: TOKEN } });
}, 600_000);

afterAll(async () => {
  await head?.stop();
});

function client(token?: string): ServeDashboardClient {
  return new ServeDashboardClient({ resolver: { resolve: () => head.dashboardUrl }, ...(token !== undefined ? { token } : {}), timeoutMs: 60_000 });
}

test('the head really runs with token auth (the dashboard reports mode "token" and refuses an anonymous Serve GET)', async () => {
  const mode = await httpGet(`${head.dashboardUrl}/api/authentication_mode`);
  expect(mode.status).toBe(200);
  expect(JSON.parse(mode.body)).toMatchObject({ authentication_mode: 'token' });
  const anonymous = await httpGet(`${head.dashboardUrl}/api/serve/applications/`);
  expect([401, 403]).toContain(anonymous.status);
});

test('with the right token the client deploys the app through the REST API and reads it back RUNNING', async () => {
  const c = client(TOKEN);
  await c.putServeConfig(CLUSTER, e2eServeConfig('v1', 1), null, { timeoutMs: 120_000 });
  const deadline = Date.now() + 300_000;
  let status = '';
  while (Date.now() < deadline) {
    const d = await c.getServeDetails(CLUSTER);
    status = d.applications.web?.status ?? 'absent';
    if (status === 'RUNNING') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  expect(status).toBe('RUNNING');
  const answer = await httpGet(`http://${head.host}:${head.servePort}/`);
  expect(JSON.parse(answer.body)).toMatchObject({ version: 'v1' });
}, 600_000);

test('a wrong token fails clearly: 403 "the configured token was rejected", and the token is not in the message', async () => {
  const wrong = crypto.randomBytes(24).toString('hex');
  const err = await client(wrong).getServeDetails(CLUSTER).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ServeApiError);
  const e = err as ServeApiError;
  expect(e.kind).toBe('forbidden');
  expect(e.status).toBe(403);
  expect(e.message).toMatch(/403 Forbidden: the configured token was rejected/);
  expect(e.message).not.toContain(wrong);
  expect(e.retryable).toBe(false);
  // a PUT with the wrong token is refused the same way and changes nothing
  const put = await client(wrong).putServeConfig(CLUSTER, e2eServeConfig('v2', 1), null).then(() => undefined, (x: unknown) => x);
  expect((put as ServeApiError).status).toBe(403);
  const d = await client(TOKEN).getServeDetails(CLUSTER);
  expect((d.applications.web?.deployed_app_config as { args?: { version?: string } })?.args?.version).toBe('v1');
});

test('no token fails clearly: 401 "the cluster requires a token (RAY_AUTH_MODE=token) and none is configured"', async () => {
  const err = await client().getServeDetails(CLUSTER).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ServeApiError);
  expect((err as ServeApiError).kind).toBe('unauthorized');
  expect((err as ServeApiError).message).toMatch(/401 Unauthorized: the cluster requires a token \(RAY_AUTH_MODE=token\)/);
});
