/**
 * The API server against a real kube-apiserver with token authentication and RBAC: two users with
 * RoleBindings in different namespaces, every Kubernetes call made as the caller (impersonation),
 * 401 without a token, 403 outside one's namespace, ListAll filtered to what each may see, forged
 * `Impersonate-User` headers ignored, and the caller as the audited user of each write. An API
 * server running as the install chart's ServiceAccount with only the chart's RBAC serves users and
 * ServiceAccount callers (tokens for audience `rayshift`), steering included, and refuses what their
 * RBAC does not allow.
 */
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import pino from 'pino';
import { ApiClient, createApiClient } from '../../lib/apiserver/client';
import { RayServiceSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
import type { RunningApiServer } from '../../lib/apiserver/server';
import { RAYSHIFT_RAYSERVICE } from '../../lib/spec/object-names';
import { ApiEnv, TEAM_A, TEAM_B, auditEventOf, grantUser, rayServiceBody, serviceAccountCaller, startApiEnv } from '../apiserver/support/api-env';
import { CHART_IDENTITY, startChartApiServer } from '../apiserver/support/chart-server';
import { waitFor } from '../support/operator-env';

let env: ApiEnv;
const base = (ns: string) => `/apis/rayshift/v1/namespaces/${ns}/rayservices`;

beforeAll(async () => {
  env = await startApiEnv();
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

test('a call without a token is 401 on REST and UNAUTHENTICATED on gRPC; a bad token too', async () => {
  const none = await env.rest('GET', base(TEAM_A), undefined, { token: null });
  expect(none.status).toBe(401);
  expect(none.body.code).toBe(Code.Unauthenticated);
  expect((await env.rest('GET', base(TEAM_A), undefined, { token: 'not-a-token' })).status).toBe(401);
  await expect(env.client('grpc', 'not-a-token').identity.whoAmI({})).rejects.toMatchObject({ code: Code.Unauthenticated });
});

test('whoami returns the TokenReview user', async () => {
  const me = await env.client('grpc', env.tokens.alice).identity.whoAmI({});
  expect(me.username).toBe('alice');
  expect(me.groups).toEqual(expect.arrayContaining(['team-a-devs', 'system:authenticated']));
});

test('each user creates, gets, lists, updates and deletes only where their RoleBinding allows', async () => {
  const created = await env.rest('POST', base(TEAM_A), rayServiceBody('svc-a'));
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ name: 'svc-a', namespace: TEAM_A, executor: 'EXECUTOR_OPERATOR' });
  expect((await env.rest('POST', base(TEAM_B), rayServiceBody('svc-b'), { token: env.tokens.bob })).status).toBe(200);

  // Elsewhere: 403 / PERMISSION_DENIED for every verb.
  const denied = await env.rest('POST', base(TEAM_B), rayServiceBody('intruder'));
  expect(denied.status).toBe(403);
  expect(denied.body.code).toBe(Code.PermissionDenied);
  expect((await env.rest('GET', `${base(TEAM_A)}/svc-a`, undefined, { token: env.tokens.bob })).status).toBe(403);
  expect((await env.rest('GET', base(TEAM_A), undefined, { token: env.tokens.bob })).status).toBe(403);
  expect((await env.rest('DELETE', `${base(TEAM_B)}/svc-b`)).status).toBe(403);
  await expect(env.client('grpc', env.tokens.bob).rayServices.getRayService({ namespace: TEAM_A, name: 'svc-a' })).rejects.toMatchObject({ code: Code.PermissionDenied });

  const got = await env.rest('GET', `${base(TEAM_A)}/svc-a`);
  expect(got.status).toBe(200);
  const update = { ...got.body, labels: { tier: 'gold' } };
  const updated = await env.rest('PUT', `${base(TEAM_A)}/svc-a`, update);
  expect(updated.status).toBe(200);
  expect(updated.body.labels).toEqual({ tier: 'gold' });
  expect((await env.rest('PUT', `${base(TEAM_B)}/svc-b`, { ...update, name: 'svc-b', etag: '' })).status).toBe(403);

  expect((await env.rest('GET', base(TEAM_A))).body.rayServices.map((s: { name: string }) => s.name)).toEqual(['svc-a']);
});

test('ListAll returns only what each caller may see', async () => {
  const forAlice = await env.rest('GET', '/apis/rayshift/v1/rayservices');
  expect(forAlice.status).toBe(200);
  expect(forAlice.body.rayServices.map((s: { namespace: string; name: string }) => `${s.namespace}/${s.name}`)).toEqual([`${TEAM_A}/svc-a`]);
  const forBob = await env.client('connect', env.tokens.bob).rayServices.listAllRayServices({});
  expect(forBob.rayServices.map((s) => `${s.namespace}/${s.name}`)).toEqual([`${TEAM_B}/svc-b`]);
});

test('a forged Impersonate-User header has no effect', async () => {
  const forged = { 'Impersonate-User': 'rayshift-admin', 'Impersonate-Group': 'system:masters' };
  const denied = await env.rest('POST', base(TEAM_B), rayServiceBody('forged'), { headers: forged });
  expect(denied.status).toBe(403);
  const me = await env.rest('GET', '/apis/rayshift/v1/whoami', undefined, { headers: forged });
  expect(me.body.username).toBe('alice');
  expect(await env.admin.tryGet({ apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true }, 'forged', TEAM_B)).toBeUndefined();
});

test('the audit identity of each write is the caller, with the API server as impersonator', async () => {
  const created = await env.rest('POST', base(TEAM_A), rayServiceBody('audited'));
  expect(created.status).toBe(200);
  expect((await env.rest('DELETE', `${base(TEAM_A)}/audited`)).status).toBe(200);
  for (const verb of ['create', 'delete']) {
    const w = await auditEventOf(env, (e) => e.objectRef?.name === 'audited' && e.verb === verb);
    expect(w.impersonatedUser?.username).toBe('alice');
    expect(w.user.username).toBe('rayshift-admin');
  }
});

test('health, readiness, metrics and the OpenAPI document are served', async () => {
  expect((await env.rest('GET', '/healthz', undefined, { token: null })).status).toBe(200);
  expect((await env.rest('GET', '/readyz', undefined, { token: null })).status).toBe(200);
  const metrics = await env.rest('GET', '/metrics', undefined, { token: null });
  expect(metrics.text).toMatch(/rayshift_apiserver_calls_total\{rpc="rayshift.v1.RayServiceService\/CreateRayService",protocol="rest",code="ok"\} \d+/);
  expect(metrics.text).toMatch(/rayshift_apiserver_calls_total\{rpc="rayshift.v1.IdentityService\/WhoAmI",protocol="grpc",code="Unauthenticated"\} \d+/);
  const openApi = await env.rest('GET', '/openapi.json', undefined, { token: null });
  expect(openApi.body).toEqual(env.api.openApi);
  expect(Object.keys(openApi.body.paths)).toContain('/apis/rayshift/v1/namespaces/{namespace}/rayservices/{name}:promote');
});

describe("as the install chart's ServiceAccount, with only the chart's RBAC", () => {
  let server: RunningApiServer;
  const logged: string[] = [];
  beforeAll(async () => {
    server = await startChartApiServer(env, pino({ level: 'warn' }, { write: (line: string) => void logged.push(line) }));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });
  const opened: ApiClient[] = [];
  afterAll(() => opened.forEach((c) => c.close()));
  /** A client of the chart's server with `token`. */
  const clientOf = (token: string) => {
    const api = createApiClient({ baseUrl: server.url, token, ca: env.cp.ca });
    opened.push(api);
    return api;
  };

  test('the server warns that its audience is shared: this control plane lists rayshift in --api-audiences, so its default-audience ServiceAccount token is a rayshift token', async () => {
    await waitFor(() => logged.some((l) => l.includes('--api-audiences')), 'the warning', 30_000, 100);
    const warning = JSON.parse(logged.find((l) => l.includes('--api-audiences'))!);
    expect(warning).toMatchObject({ level: 40, audience: 'rayshift' });
    expect(warning.msg).toContain("every Pod's default ServiceAccount token is a rayshift token");
  });

  test("a user's calls are served the same", async () => {
    const api = clientOf(env.tokens.bob);
    expect((await api.identity.whoAmI({})).username).toBe('bob');
    const created = await api.rayServices.createRayService({ namespace: TEAM_B, rayService: fromJson(RayServiceSchema, rayServiceBody('via-sa') as JsonValue) });
    expect(created.namespace).toBe(TEAM_B);
    const all = (await api.rayServices.listAllRayServices({})).rayServices;
    expect(all.map((s) => s.name)).toContain('via-sa');
    expect(new Set(all.map((s) => s.namespace))).toEqual(new Set([TEAM_B]));
    await expect(api.rayServices.getRayService({ namespace: TEAM_A, name: 'svc-a' })).rejects.toMatchObject({ code: Code.PermissionDenied });
  });

  test('a ServiceAccount caller (token for audience rayshift) lists, gets and steers; the audit log shows it as the writer', async () => {
    const token = await serviceAccountCaller(env, TEAM_B, 'deployer', [
      { apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
      { apiGroups: ['rayshift.dev'], resources: ['rayservices/pause'], verbs: ['update'] },
    ]);
    const api = clientOf(token);
    const user = `system:serviceaccount:${TEAM_B}:deployer`;
    expect((await api.identity.whoAmI({})).username).toBe(user);
    await waitFor(async () => (await api.rayServices.listRayServices({ namespace: TEAM_B }).catch(() => undefined)) !== undefined, 'the RoleBinding to take effect', 30_000, 200);
    await api.rayServices.createRayService({ namespace: TEAM_B, rayService: fromJson(RayServiceSchema, rayServiceBody('sa-made') as JsonValue) });
    expect((await api.rayServices.listRayServices({ namespace: TEAM_B })).rayServices.map((s) => s.name)).toContain('sa-made');
    expect((await api.rayServices.getRayService({ namespace: TEAM_B, name: 'sa-made' })).name).toBe('sa-made');
    expect((await api.rayServices.pauseRayService({ namespace: TEAM_B, name: 'sa-made', reason: 'hold' })).paused).toBe(true);
    const stored = await env.admin.get(RAYSHIFT_RAYSERVICE, 'sa-made', TEAM_B);
    expect(JSON.parse(stored.metadata.annotations!['rayshift.dev/last-steering'])).toMatchObject({ verb: 'pause', user });

    const patch = await auditEventOf(env, (e) => e.verb === 'patch' && e.objectRef?.name === 'sa-made');
    expect(patch.impersonatedUser?.username).toBe(user);
    expect(patch.user.username).toBe(CHART_IDENTITY);
    expect(patch.responseStatus?.code).toBe(200);
  }, 60_000);

  test('a ServiceAccount is refused where its RBAC says so: another namespace, or a steering verb without patch on the RayService', async () => {
    // viewer may read and pause RayServices in team-b, but not patch them: steering writes as the caller, so pause is refused.
    const token = await serviceAccountCaller(env, TEAM_B, 'viewer', [
      { apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['get', 'list'] },
      { apiGroups: ['rayshift.dev'], resources: ['rayservices/pause', 'rayservices/resume'], verbs: ['update'] },
    ]);
    const viewer = clientOf(token).rayServices;
    await waitFor(async () => (await viewer.getRayService({ namespace: TEAM_B, name: 'via-sa' }).catch(() => undefined)) !== undefined, 'the RoleBinding to take effect', 30_000, 200);
    await expect(viewer.pauseRayService({ namespace: TEAM_B, name: 'via-sa', reason: 'no' })).rejects.toMatchObject({ code: Code.PermissionDenied });
    expect((await env.admin.get(RAYSHIFT_RAYSERVICE, 'via-sa', TEAM_B)).metadata.annotations?.['rayshift.dev/paused']).toBeUndefined();
    await expect(viewer.getRayService({ namespace: TEAM_A, name: 'svc-a' })).rejects.toMatchObject({ code: Code.PermissionDenied });
    await expect(viewer.listRayServices({ namespace: TEAM_A })).rejects.toMatchObject({ code: Code.PermissionDenied });
    // GetSteeringAccess says so before the click: without patch, no verb.
    expect((await viewer.getSteeringAccess({ namespace: TEAM_B, name: 'via-sa' })).allowedVerbs).toEqual([]);
  }, 60_000);
});

test('--insecure-local serves cleartext HTTP/1.1 and h2c on loopback only, as the server identity', async () => {
  const { loadClientNode } = await import('../../lib/runtime/kube/client-node');
  const { startApiServer } = await import('../../lib/apiserver/server');
  const { createApiClient } = await import('../../lib/apiserver/client');
  const kc = new (loadClientNode().KubeConfig)();
  kc.loadFromFile(env.cp.kubeconfigPath);
  await expect(startApiServer({ kubeConfig: kc, insecureLocal: true, host: '0.0.0.0', port: 0 })).rejects.toThrow(/loopback only/);
  await expect(startApiServer({ kubeConfig: kc, host: '127.0.0.1', port: 0 })).rejects.toThrow(/TLS is required/);
  const server = await startApiServer({ kubeConfig: kc, insecureLocal: true, port: 0 });
  const grpc = createApiClient({ baseUrl: server.url, protocol: 'grpc' });
  const connect = createApiClient({ baseUrl: server.url, protocol: 'connect' });
  try {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await grpc.identity.whoAmI({})).username).toBe('rayshift:insecure-local');
    expect((await connect.rayServices.getRayService({ namespace: TEAM_A, name: 'svc-a' })).name).toBe('svc-a');
    const rest = await fetch(`${server.url}/apis/rayshift/v1/namespaces/${TEAM_B}/rayservices/svc-b`);
    expect(((await rest.json()) as { name: string }).name).toBe('svc-b');
  } finally {
    grpc.close();
    connect.close();
    await server.close();
  }
});

test('GetSteeringAccess lists the verbs each caller may steer with: all for alice, none for read-only bob', async () => {
  // bob may read RayServices in team-a, and nothing else there.
  await grantUser(env.admin, TEAM_A, 'bob', 'bob-reads', [{ apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['get', 'list', 'watch'] }]);
  const path = `${base(TEAM_A)}/svc-a/steeringAccess`;
  const forAlice = await env.rest('GET', path);
  expect(forAlice.status).toBe(200);
  expect(forAlice.body.allowedVerbs).toEqual(['pause', 'resume', 'promote', 'abort', 'rollback', 'retry-analysis', 'skip-analysis']);
  expect((await env.client('grpc', env.tokens.alice).rayServices.getSteeringAccess({ namespace: TEAM_A, name: 'svc-a' })).allowedVerbs).toEqual(['pause', 'resume', 'promote', 'abort', 'rollback', 'retry-analysis', 'skip-analysis']);

  await waitFor(async () => (await env.rest('GET', `${base(TEAM_A)}/svc-a`, undefined, { token: env.tokens.bob })).status === 200, 'bob to read team-a', 30_000, 200);
  const forBob = await env.rest('GET', path, undefined, { token: env.tokens.bob });
  expect(forBob.status).toBe(200);
  expect(forBob.body.allowedVerbs ?? []).toEqual([]);
  // The verbs themselves make the same check.
  expect((await env.rest('POST', `${base(TEAM_A)}/svc-a:promote`, { reason: 'test' }, { token: env.tokens.bob })).status).toBe(403);
});
