/**
 * The API server against a real kube-apiserver with token authentication and RBAC: two users with
 * RoleBindings in different namespaces, every Kubernetes call made as the caller (impersonation),
 * 401 without a token, 403 outside one's namespace, ListAll filtered to what each may see, forged
 * `Impersonate-User` headers ignored, and the caller as the audited user of each write.
 */
import * as fs from 'node:fs';
import { fromJson, type JsonValue } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { RayServiceSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
import { ApiEnv, TEAM_A, TEAM_B, grantUser, rayServiceBody, startApiEnv } from '../apiserver/support/api-env';
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
  type AuditEvent = { verb: string; stage: string; objectRef?: { resource?: string; name?: string; namespace?: string }; user: { username: string }; impersonatedUser?: { username: string } };
  let writes: AuditEvent[] = [];
  await waitFor(() => {
    const events = fs.existsSync(env.auditLog) ? fs.readFileSync(env.auditLog, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent) : [];
    writes = events.filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.resource === 'rayservices' && e.objectRef?.name === 'audited' && (e.verb === 'create' || e.verb === 'delete'));
    return writes.length >= 2;
  }, 'audit events of the create and the delete', 30_000, 200);
  for (const w of writes) {
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

test('the install chart RBAC is enough: an API server running as its ServiceAccount serves the same calls', async () => {
  const { Testing } = await import('cdk8s');
  const { ApiServer } = await import('../../operator/chart/api-server');
  const { loadClientNode } = await import('../../lib/runtime/kube/client-node');
  const { startApiServer } = await import('../../lib/apiserver/server');
  const { createApiClient } = await import('../../lib/apiserver/client');
  const chart = Testing.chart();
  new ApiServer(chart, 'api', { namespace: 'rayshift-system', tlsSecretName: 'tls' });
  await env.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rayshift-system' } });
  for (const o of Testing.synth(chart).filter((o) => ['ClusterRole', 'ClusterRoleBinding'].includes(o.kind))) await env.admin.create(o);
  const token = await env.cp.serviceAccountToken('rayshift-system', 'rayshift-api-server');
  const kc = new (loadClientNode().KubeConfig)();
  kc.loadFromOptions({
    clusters: [{ name: 'cp', server: env.cp.url, caFile: env.cp.caFile }],
    users: [{ name: 'sa', token }],
    contexts: [{ name: 'sa', cluster: 'cp', user: 'sa' }],
    currentContext: 'sa',
  });
  const pki = `${env.cp.dir}/pki`;
  const server = await startApiServer({ kubeConfig: kc, host: '127.0.0.1', port: 0, tls: { cert: fs.readFileSync(`${pki}/apiserver.crt`), key: fs.readFileSync(`${pki}/apiserver.key`) } });
  const api = createApiClient({ baseUrl: server.url, token: env.tokens.bob, ca: env.cp.ca });
  try {
    expect((await api.identity.whoAmI({})).username).toBe('bob');
    const created = await api.rayServices.createRayService({ namespace: TEAM_B, rayService: fromJson(RayServiceSchema, rayServiceBody('via-sa') as JsonValue) });
    expect(created.namespace).toBe(TEAM_B);
    const all = (await api.rayServices.listAllRayServices({})).rayServices;
    expect(all.map((s) => s.name)).toContain('via-sa');
    expect(new Set(all.map((s) => s.namespace))).toEqual(new Set([TEAM_B]));
    await expect(api.rayServices.getRayService({ namespace: TEAM_A, name: 'svc-a' })).rejects.toMatchObject({ code: Code.PermissionDenied });
  } finally {
    api.close();
    await server.close();
  }
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
  expect(forAlice.body.allowedVerbs).toEqual(['pause', 'resume', 'promote', 'abort', 'rollback']);
  expect((await env.client('grpc', env.tokens.alice).rayServices.getSteeringAccess({ namespace: TEAM_A, name: 'svc-a' })).allowedVerbs).toEqual(['pause', 'resume', 'promote', 'abort', 'rollback']);

  await waitFor(async () => (await env.rest('GET', `${base(TEAM_A)}/svc-a`, undefined, { token: env.tokens.bob })).status === 200, 'bob to read team-a', 30_000, 200);
  const forBob = await env.rest('GET', path, undefined, { token: env.tokens.bob });
  expect(forBob.status).toBe(200);
  expect(forBob.body.allowedVerbs ?? []).toEqual([]);
  // The verbs themselves make the same check.
  expect((await env.rest('POST', `${base(TEAM_A)}/svc-a:promote`, { reason: 'test' }, { token: env.tokens.bob })).status).toBe(403);
});
