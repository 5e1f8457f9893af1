/**
 * The operator against Ray dashboards with token auth (`RAY_AUTH_MODE=token`), on the test cluster
 * (test/support/operator-env.ts: the real KubeRay runs the clusters; TEST-ONLY simulated
 * Serve dashboards answer 401/403 like Ray's): a RayService whose clusters declare
 * `authOptions.mode: token` is upgraded with the token read from KubeRay's Secret, and the token
 * is what the dashboards demanded (a wrong Secret stops the upgrade instead of calling anonymously).
 */
import { OperatorEnv, OperatorHarness, RAYSHIFT_RAYSERVICE, ReportedFailure, createNamespace, engineState, rayClusterConfig, rayService, waitFor, startOperatorHarness } from '../support/operator-env';

const TOKEN = 'ray-dashboard-token-4f1c';
const failures: ReportedFailure[] = [];
let harness: OperatorHarness;
let env: OperatorEnv;

beforeAll(async () => {
  harness = await startOperatorHarness({ serve: () => ({ replicaStartDelayMs: 20, token: TOKEN }), failures });
  env = harness.env;
}, 300_000);

afterAll(async () => {
  await harness?.stop();
});

function withToken(cpu: string, secretName: string): Record<string, unknown> {
  // Token mode needs rayVersion ≥ 2.52.0 (KubeRay's ValidateRayClusterSpec, checked by the model too).
  return { ...rayClusterConfig(cpu), rayVersion: '2.52.0', authOptions: { mode: 'token', secretName } };
}

async function secret(ns: string, name: string, token: string): Promise<void> {
  await env.admin.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, data: { auth_token: Buffer.from(token).toString('base64') } });
}

test('clusters with token auth are upgraded with the token from their Secret', async () => {
  const ns = 'token-auth';
  await createNamespace(env.admin, ns);
  await secret(ns, 'ray-token', TOKEN);
  const svc = rayService(ns, 'fruit');
  (svc.spec as Record<string, unknown>).rayClusterConfig = withToken('1', 'ray-token');
  await env.admin.create(svc);
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).phase === 'Running', 'the first cluster to serve');
  const first = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).activeClusterName;
  await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'fruit', ns, { spec: { rayClusterConfig: withToken('2', 'ray-token') } });
  await waitFor(async () => {
    const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns));
    return s.phase === 'Running' && s.pendingClusterName === undefined && s.activeClusterName !== first;
  }, 'the upgrade to complete', 90_000);
  expect(failures.filter((f) => f.key === `${ns}/fruit`)).toEqual([]);
}, 150_000);

test('a Secret with the wrong token leaves the service waiting for its cluster, and nothing is served anonymously', async () => {
  const ns = 'token-wrong';
  await createNamespace(env.admin, ns);
  await secret(ns, 'ray-token', 'not-the-token');
  const svc = rayService(ns, 'fruit');
  (svc.spec as Record<string, unknown>).rayClusterConfig = withToken('1', 'ray-token');
  await env.admin.create(svc);
  let pending = '';
  await waitFor(async () => {
    pending = (engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).pendingClusterName as string | undefined) ?? '';
    return pending !== '';
  }, 'the first cluster to be created');
  // Once KubeRay reports the head ready the operator calls the dashboard, which refuses the token.
  await waitFor(() => (env.fleet.dashboard(ns, pending)?.requests ?? []).some((r) => r.status === 403), 'the dashboard to refuse the token', 90_000);
  const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns));
  expect(s.phase).toBe('Initializing'); // Serve never accepted a config: the dashboard refused the token
  expect(s.activeClusterName).toBeUndefined();
  const requests = env.fleet.dashboard(ns, pending)!.requests;
  expect(requests.filter((r) => r.headers.authorization === undefined && r.headers['x-ray-authorization'] === undefined)).toEqual([]);
  expect(requests.filter((r) => r.method === 'PUT' && r.status === 200)).toEqual([]);
}, 150_000);
