/**
 * Token auth against real Ray heads started with `RAY_AUTH_MODE=token`: rayshift's dashboard
 * client deploys and reads Serve with the right token, and fails clearly (naming the status and
 * the cause, never echoing the token) with a wrong one or none; and the operator executes an
 * incremental upgrade of a RayService whose clusters declare `authOptions.mode: token`, with the
 * token read from KubeRay's Secret, under load through Traefik, passing the same checks as the
 * upgrades without auth. Needs `npm run e2e:setup`.
 */
import * as crypto from 'node:crypto';
import { ServeDashboardClient } from '../../lib/runtime/serve/client';
import { ServeApiError } from '../../lib/runtime/serve/errors';
import { engineState } from '../support/operator-env';
import { expectForwardUpgrade, summary, windowReport } from './support/assertions';
import { E2EEnv, E2E_NAMESPACE, startE2EEnv } from './support/e2e-env';
import { RayHead, httpGet, resetServe } from './support/ray-head';
import { E2E_RATE, deployAndWaitServing, e2eRayService, e2eServeConfig, getService, runUnderLoad, updateSpec, upgradedAwayFrom } from './support/scenario';
import { waitFor } from '../support/wait-at-most';

const TOKEN = crypto.randomBytes(24).toString('hex');
const RATE = E2E_RATE;
const CLUSTER = { namespace: 'e2e', name: 'token-auth' };
let env: E2EEnv;
/** The head the client tests use directly (the pod network binds head a first; b is reset before the operator needs it). */
let head: RayHead;

beforeAll(async () => {
  env = await startE2EEnv({ auth: { mode: 'token', token: TOKEN } });
  head = env.heads[1];
}, 1_200_000);

afterAll(async () => {
  await env?.stop();
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
  await waitFor(async () => {
    const status = (await c.getServeDetails(CLUSTER)).applications.web?.status ?? 'absent';
    return status === 'RUNNING' || `application web is ${status}`;
  }, 'the app to be RUNNING', { timeoutMs: 300_000, everyMs: 1000, retryErrors: true });
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

test('the operator upgrades a service whose clusters use token auth {step 100, interval 1 s, maxSurge 100}, with the token from KubeRay\'s Secret, under load: the same checks as without auth', async () => {
  await resetServe(head); // the client tests above deployed an app on it
  await env.admin.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ray-token', namespace: E2E_NAMESPACE }, data: { auth_token: Buffer.from(TOKEN).toString('base64') } });
  const withToken = (spec: Record<string, any>) => {
    // Token mode needs rayVersion ≥ 2.52.0 (KubeRay's rule, checked by the model): the heads' Ray.
    spec.rayClusterConfig.rayVersion = '2.60.0';
    spec.rayClusterConfig.authOptions = { mode: 'token', secretName: 'ray-token' };
    return spec;
  };
  const service = e2eRayService('tok', { version: 'v1', cpu: '1', replicas: 2, step: 100, interval: 1, maxSurge: 100 });
  withToken(service.spec as Record<string, any>);
  const first = await deployAndWaitServing(env, service, 'v1');
  const run = await runUnderLoad(
    env,
    'tok',
    RATE,
    () => updateSpec(env, 'tok', (spec) => {
      spec.serveConfigV2 = e2eServeConfig('v2', 2);
      spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu = '2';
      return withToken(spec);
    }),
    () => upgradedAwayFrom(env, 'tok', first),
    { what: 'token-auth upgrade v1 → v2 {100,1,100}' },
  );
  const now = engineState(await getService(env, 'tok')).activeClusterName as string;
  process.stdout.write(`${summary('token auth {100,1,100} v1→v2', run, RATE)}\n${windowReport('token auth', run, 'v2', now)}\n`);
  // the operator never met a 401/403: it sent the Secret's token to both clusters
  expect(env.operatorFailures.filter((f) => /401|403|token/i.test(f))).toEqual([]);
  expectForwardUpgrade(run, { oldVersion: 'v1', newVersion: 'v2', newCluster: now, replicas: 2 });
}, 1_800_000);
