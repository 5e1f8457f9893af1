/**
 * Client faults against a real kube-apiserver, answered with exact codes and nothing written: a
 * malformed or stale etag is ABORTED (409, as kube-apiserver's Conflict), unknown enum values and
 * update-mask paths are INVALID_ARGUMENT naming the field, a Kubernetes 422 keeps its causes as field
 * violations, and bodies that are no message are INVALID_ARGUMENT only once the caller is
 * authenticated (401 first). The access log names real callers and never holds their tokens.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import pino from 'pino';
import { ApiEnv, TEAM_A, rayServiceBody, startApiEnv } from '../apiserver/support/api-env';
import { envelopeHeader, h1Request, h2Request } from '../apiserver/support/raw-requests';
import { waitFor } from '../support/operator-env';

let env: ApiEnv;
const lines: Record<string, any>[] = [];
const base = `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`;
const RAYSERVICE = { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true } as const;

beforeAll(async () => {
  env = await startApiEnv({ log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) });
  expect((await env.rest('POST', base, rayServiceBody('svc'))).status).toBe(200);
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

/** The stored object's resourceVersion, read as the admin. */
async function storedVersion(name = 'svc'): Promise<string | undefined> {
  return (await env.admin.get(RAYSERVICE, name, TEAM_A)).metadata.resourceVersion;
}

test('an etag that is malformed or stale is ABORTED (409) on update, patch and delete, and nothing is written', async () => {
  const current = (await env.rest('GET', `${base}/svc`)).body;
  const before = await storedVersion();
  for (const etag of ['garbage', '1']) {
    for (const [method, path, body] of [
      ['PUT', `${base}/svc`, { ...current, etag }],
      ['PATCH', `${base}/svc?update_mask=labels`, { labels: { touched: 'yes' }, etag }],
      ['DELETE', `${base}/svc?etag=${etag}`, undefined],
    ] as const) {
      const answer = await env.rest(method, path, body);
      expect({ etag, method, status: answer.status, code: answer.body.code }).toEqual({ etag, method, status: 409, code: Code.Aborted });
      expect(answer.body.message).toContain('was changed by someone else');
    }
  }
  const grpc = ConnectError.from(await env.client('grpc', env.tokens.alice).rayServices.updateRayService({ namespace: TEAM_A, name: 'svc', rayService: { name: 'svc', etag: 'garbage' } }).catch((e) => e));
  expect(grpc.code).toBe(Code.Aborted);
  expect(await storedVersion()).toBe(before);
});

test('an unknown enum value or update-mask path is INVALID_ARGUMENT naming the field, and nothing is written', async () => {
  const current = (await env.rest('GET', `${base}/svc`)).body;
  const before = await storedVersion();
  const enum42 = await env.rest('PUT', `${base}/svc`, { ...current, spec: { ...current.spec, upgradeStrategy: { ...current.spec.upgradeStrategy, type: 42 } } });
  expect(enum42.status).toBe(400);
  expect(enum42.body.details[0].fieldViolations).toEqual([{ field: 'ray_service.spec.upgrade_strategy.type', description: expect.stringContaining('42 is not a value of rayshift.v1.UpgradeStrategyType') }]);
  expect((await env.rest('GET', `${base}/svc?executor=99`)).body.details[0].fieldViolations[0].field).toBe('executor');
  const mask = await env.rest('PATCH', `${base}/svc?update_mask=spec.nonexistent`, { labels: { a: 'b' } });
  expect(mask.status).toBe(400);
  expect(mask.body.details[0].fieldViolations).toEqual([{ field: 'update_mask.paths[0]', description: expect.stringContaining('top-level paths: spec, labels, annotations') }]);
  expect(await storedVersion()).toBe(before);
  expect((await env.admin.get(RAYSERVICE, 'svc', TEAM_A)).spec).toMatchObject({ upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade' } });
});

test("a Kubernetes 422 is INVALID_ARGUMENT with each distinct cause as a field violation", async () => {
  const answer = await env.rest('PATCH', `${base}/svc?update_mask=labels`, { labels: { 'bad key!': 'x' } });
  expect(answer.status).toBe(400);
  expect(answer.body.message).toBe(`RayService svc in namespace ${TEAM_A} is invalid`);
  const violations: { field?: string; description: string }[] = answer.body.details[0].fieldViolations;
  expect(violations.length).toBeGreaterThan(0);
  for (const v of violations) expect(v).toEqual({ field: 'metadata.labels', description: expect.stringContaining('bad key!') });
  expect(new Set(violations.map((v) => v.description)).size).toBe(violations.length);
});

describe('bodies that are no message: 401 without a valid token, INVALID_ARGUMENT with one', () => {
  const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
  const auth = (token: string | null): Record<string, string> => (token === null ? {} : { authorization: `Bearer ${token}` });
  const cases = [
    {
      name: 'REST',
      send: (t: string | null) => h1Request(`${env.api.url}${base}`, env.cp.ca, { 'content-type': 'application/json', ...auth(t) }, { prefix: Buffer.from('{"name": '), size: 0 }),
      code: (a: { status: number; text: string }) => [a.status, JSON.parse(a.text).code],
      refused: [401, Code.Unauthenticated],
      invalid: [400, Code.InvalidArgument],
    },
    {
      name: 'Connect (binary)',
      send: (t: string | null) => h1Request(`${env.api.url}/rayshift.v1.RayServiceService/GetRayService`, env.cp.ca, { 'content-type': 'application/proto', ...auth(t) }, { prefix: garbage, size: 0 }),
      code: (a: { status: number; text: string }) => [a.status, JSON.parse(a.text).code],
      refused: [401, 'unauthenticated'],
      invalid: [400, 'invalid_argument'],
    },
    {
      name: 'gRPC',
      send: (t: string | null) =>
        h2Request(env.api.url, env.cp.ca, '/rayshift.v1.RayServiceService/GetRayService', { 'content-type': 'application/grpc', te: 'trailers', ...auth(t) }, { prefix: Buffer.concat([envelopeHeader(false, garbage.length), garbage]), size: 0 }),
      code: (a: { headers: Record<string, unknown> }) => [200, Number(a.headers['grpc-status'])],
      refused: [200, Code.Unauthenticated],
      invalid: [200, Code.InvalidArgument],
    },
  ];
  test.each(cases)('$name', async (c) => {
    expect(c.code((await c.send(null)) as never)).toEqual(c.refused);
    expect(c.code((await c.send('not-a-token')) as never)).toEqual(c.refused);
    expect(c.code((await c.send(env.tokens.alice)) as never)).toEqual(c.invalid);
  });
});

test('the access log names real callers and the refused ones, and holds no token', async () => {
  await env.client('grpc', env.tokens.bob).rayServices.listRayServices({ namespace: TEAM_A }).catch(() => undefined);
  await waitFor(() => lines.some((l) => l.caller === 'bob'), "bob's line", 10_000, 20);
  const bob = lines.find((l) => l.caller === 'bob')!;
  expect(bob).toMatchObject({ protocol: 'grpc', rpc: 'rayshift.v1.RayServiceService/ListRayServices', namespace: TEAM_A, code: 'PermissionDenied', httpStatus: 200 });
  expect(lines.filter((l) => l.msg === 'call' && l.caller === 'alice').length).toBeGreaterThan(5);
  const refused = lines.filter((l) => l.code === 'Unauthenticated');
  expect(refused.length).toBeGreaterThanOrEqual(6);
  for (const l of refused) expect(l.caller).toBeUndefined();
  const text = JSON.stringify(lines);
  for (const secret of [env.tokens.alice, env.tokens.bob, 'not-a-token']) expect(text).not.toContain(secret);
  expect(text.toLowerCase()).not.toContain('authorization');
});
