/**
 * Requests the server must refuse as the client's fault, on every protocol, before any Kubernetes
 * call: bytes that are no message (INVALID_ARGUMENT, never INTERNAL), enum values their enum does not
 * define and update-mask paths naming no field (INVALID_ARGUMENT with a google.rpc.BadRequest naming
 * the field), and REST paths that do not decode (400, not 404). Valid values pass these checks and
 * reach Kubernetes, which this server's kubeconfig never answers (UNAVAILABLE). Plus the access log:
 * one line per call with who, what and the answer, and never the caller's token.
 */
import { gzipSync } from 'node:zlib';
import { create } from '@bufbuild/protobuf';
import { FieldMaskSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import pino from 'pino';
import { createApiClient, type ApiClient } from '../../lib/apiserver/client';
import { BadRequestSchema } from '../../lib/apiserver/gen/google/rpc/error_details_pb';
import { Executor } from '../../lib/apiserver/gen/rayshift/v1/common_pb';
import { PatchRayServiceRequestSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
import { startApiServer, type RunningApiServer } from '../../lib/apiserver/server';
import { waitFor } from '../support/operator-env';
import { envelopeHeader, h1Request, h2Request } from './support/raw-requests';
import { neverCalledKubeConfig } from './support/never-called-kubeconfig';

let server: RunningApiServer;
let grpc: ApiClient;
const lines: Record<string, any>[] = [];
const TOKEN = 'S3CRET-token-that-must-never-be-logged';
const base = '/apis/rayshift/v1/namespaces/team-a/rayservices';
const GET = '/rayshift.v1.RayServiceService/GetRayService';
const WATCH = '/rayshift.v1.RayServiceService/WatchUpgrade';
const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);

beforeAll(async () => {
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  server = await startApiServer({ kubeConfig: neverCalledKubeConfig(), insecureLocal: true, port: 0, log });
  grpc = createApiClient({ baseUrl: server.url, protocol: 'grpc' });
});

afterAll(async () => {
  grpc.close();
  await server.close();
});

/** A request with the caller's token, as any client sends it (local mode ignores it). */
async function call(method: string, path: string, body?: string | Uint8Array, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${server.url}${path}`, { method, body, headers: { authorization: `Bearer ${TOKEN}`, ...headers } });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/** The field violations of a REST or Connect JSON error body. */
function violations(body: any): { field: string; description: string }[] {
  const detail = body.details.find((d: any) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest' || d.type === 'google.rpc.BadRequest');
  return detail['@type'] ? detail.fieldViolations : detail.debug.fieldViolations;
}

describe('bytes that are no message are INVALID_ARGUMENT on every protocol', () => {
  test('Connect unary, binary and gzip-compressed binary: HTTP 400', async () => {
    for (const [body, headers] of [
      [garbage, { 'content-type': 'application/proto' }],
      [gzipSync(garbage), { 'content-type': 'application/proto', 'content-encoding': 'gzip' }],
    ] as const) {
      const answer = await call('POST', GET, body, headers);
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'invalid_argument' });
      expect(answer.body.message).toContain('is not a valid rayshift.v1.GetRayServiceRequest message');
    }
    const json = await call('POST', GET, '{"namespace": ', { 'content-type': 'application/json' });
    expect({ status: json.status, code: json.body.code }).toEqual({ status: 400, code: 'invalid_argument' });
    const viaGet = await call('GET', `${GET}?connect=v1&encoding=proto&base64=1&message=${garbage.toString('base64url')}`);
    expect({ status: viaGet.status, code: viaGet.body.code }).toEqual({ status: 400, code: 'invalid_argument' });
  });

  test('gRPC, gRPC-Web and a Connect stream: status INVALID_ARGUMENT', async () => {
    const framed = { prefix: Buffer.concat([envelopeHeader(false, garbage.length), garbage]), size: 0 };
    const viaGrpc = await h2Request(server.url, undefined, GET, { 'content-type': 'application/grpc', te: 'trailers' }, framed);
    expect(viaGrpc.headers['grpc-status']).toBe(String(Code.InvalidArgument));
    const viaWeb = await h1Request(`${server.url}${GET}`, undefined, { 'content-type': 'application/grpc-web+proto' }, framed);
    expect(/grpc-status:\s*(\d+)/.exec(viaWeb.text)?.[1]).toBe(String(Code.InvalidArgument));
    const viaStream = await h1Request(`${server.url}${WATCH}`, undefined, { 'content-type': 'application/connect+proto' }, framed);
    expect(viaStream.text).toContain('"code":"invalid_argument"');
  });
});

describe('unknown enum values are refused with the field, the value and the allowed names', () => {
  test('REST: a number or an unknown name in the query, a number in the body', async () => {
    for (const value of ['99', 'EXECUTOR_NOPE']) {
      const answer = await call('GET', `${base}/llm?executor=${value}`);
      expect(answer.status).toBe(400);
      expect(violations(answer.body)).toEqual([{ field: 'executor', description: expect.stringMatching(new RegExp(`${value}.*allowed: EXECUTOR_UNSPECIFIED, EXECUTOR_OPERATOR, EXECUTOR_KUBERAY`)) }]);
    }
    const created = await call('POST', base, JSON.stringify({ name: 'llm', spec: { upgradeStrategy: { type: 42 } } }), { 'content-type': 'application/json' });
    expect(created.status).toBe(400);
    expect(violations(created.body)).toEqual([{ field: 'ray_service.spec.upgrade_strategy.type', description: expect.stringContaining('42 is not a value of rayshift.v1.UpgradeStrategyType') }]);
  });

  test('Connect JSON: unknown names (which Connect alone would drop) and numbers', async () => {
    const byName = await call('POST', GET, JSON.stringify({ namespace: 'team-a', name: 'llm', executor: 'EXECUTOR_NOPE' }), { 'content-type': 'application/json' });
    expect({ status: byName.status, code: byName.body.code }).toEqual({ status: 400, code: 'invalid_argument' });
    expect(violations(byName.body)[0].field).toBe('executor');
    const viaGet = await call('GET', `${GET}?connect=v1&encoding=json&message=${encodeURIComponent(JSON.stringify({ namespace: 'team-a', name: 'llm', executor: 'EXECUTOR_NOPE' }))}`);
    expect({ status: viaGet.status, code: viaGet.body.code }).toEqual({ status: 400, code: 'invalid_argument' });
    expect(violations(viaGet.body)[0].field).toBe('executor');
    const nested = await call('POST', '/rayshift.v1.RayServiceService/CreateRayService', JSON.stringify({ namespace: 'team-a', rayService: { name: 'llm', spec: { rayshift: { routeKind: 7 } } } }), {
      'content-type': 'application/json',
    });
    expect(violations(nested.body)).toEqual([{ field: 'ray_service.spec.rayshift.route_kind', description: expect.stringContaining('ROUTE_KIND_GRPC') }]);
  });

  test('gRPC and Connect binary (typed clients): a BadRequest detail; a known value passes on to Kubernetes', async () => {
    const connect = createApiClient({ baseUrl: server.url, protocol: 'connect' });
    try {
      for (const client of [grpc, connect]) {
        const err = ConnectError.from(await client.rayServices.getRayService({ namespace: 'team-a', name: 'llm', executor: 99 as Executor }).catch((e) => e));
        expect(err.code).toBe(Code.InvalidArgument);
        expect(err.findDetails(BadRequestSchema)[0].fieldViolations.map((v) => v.field)).toEqual(['executor']);
        const known = ConnectError.from(await client.rayServices.getRayService({ namespace: 'team-a', name: 'llm', executor: Executor.KUBERAY }).catch((e) => e));
        expect(known.code).toBe(Code.Unavailable);
      }
    } finally {
      connect.close();
    }
  });
});

describe('update_mask paths must name fields of the RayService', () => {
  test('REST: an unknown path is 400 naming update_mask, the path and the top-level paths', async () => {
    const answer = await call('PATCH', `${base}/llm?update_mask=spec.nonexistent`, JSON.stringify({ labels: { a: 'b' } }), { 'content-type': 'application/json' });
    expect(answer.status).toBe(400);
    expect(violations(answer.body)).toEqual([{ field: 'update_mask.paths[0]', description: expect.stringMatching(/"spec\.nonexistent".*nonexistent.*top-level paths: spec, labels, annotations/) }]);
    const status = await call('PATCH', `${base}/llm?update_mask=labels,status`, JSON.stringify({}), { 'content-type': 'application/json' });
    expect(violations(status.body)).toEqual([{ field: 'update_mask.paths[1]', description: expect.stringContaining('not an updatable field') }]);
  });

  test('gRPC: the same; paths into a map key, a Struct or a nested field pass on to Kubernetes', async () => {
    const patch = (paths: string[]) => grpc.rayServices.patchRayService(create(PatchRayServiceRequestSchema, { namespace: 'team-a', name: 'llm', rayService: {}, updateMask: create(FieldMaskSchema, { paths }) })).catch((e) => ConnectError.from(e));
    const bad = (await patch(['spec.upgrade_strategy.type.x', 'spec.rayClusterConfig'])) as ConnectError;
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.findDetails(BadRequestSchema)[0].fieldViolations.map((v) => v.field)).toEqual(['update_mask.paths[0]', 'update_mask.paths[1]']);
    const good = (await patch(['labels.team', 'spec.overlay.anything.below', 'spec.upgrade_strategy.cluster_upgrade_options.step_size_percent'])) as ConnectError;
    expect(good.code).toBe(Code.Unavailable);
  });
});

test('a REST path that does not decode is 400 naming the path, not 404', async () => {
  for (const segment of ['%ff', '%zz', '%00']) {
    const answer = await call('GET', `${base}/${segment}`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: Code.InvalidArgument, message: expect.stringContaining(`${base}/${segment}`) });
  }
  expect((await call('GET', '/apis/rayshift/v1/nothing-here')).status).toBe(404);
});

describe('access log', () => {
  /** Lines written from `from` on. */
  const since = (from: number) => lines.slice(from);
  /** The log lines of `rpc` from `from` on, once `count` of them are written (a line is written when its response closes). */
  async function linesOf(rpc: string, count: number, from: number): Promise<Record<string, any>[]> {
    await waitFor(() => since(from).filter((l) => l.rpc === rpc).length >= count, `${count} access-log lines of ${rpc}`, 10_000, 10);
    return since(from).filter((l) => l.rpc === rpc);
  }

  test('one line per call: caller, protocol, RPC or route, object, code, HTTP status, duration and sizes', async () => {
    const from = lines.length;
    const whoAmI = 'rayshift.v1.IdentityService/WhoAmI';
    expect((await call('GET', '/apis/rayshift/v1/whoami')).status).toBe(200);
    await call('POST', `/${whoAmI}`, '{}', { 'content-type': 'application/json' });
    const [rest, connect] = await linesOf(whoAmI, 2, from);
    expect(rest).toMatchObject({ msg: 'call', level: 30, caller: 'rayshift:insecure-local', protocol: 'rest', route: 'GET /apis/rayshift/v1/whoami', httpMethod: 'GET', code: 'ok', httpStatus: 200 });
    expect(connect).toMatchObject({ caller: 'rayshift:insecure-local', protocol: 'connect', httpMethod: 'POST', code: 'ok', httpStatus: 200, bytesIn: 2 });
    for (const line of [rest, connect]) {
      expect(line.durationMs).toBeGreaterThanOrEqual(0);
      expect(line.bytesOut).toBeGreaterThan(0);
    }

    const get = 'rayshift.v1.RayServiceService/GetRayService';
    await call('GET', `${base}/llm?executor=99`);
    await grpc.rayServices.getRayService({ namespace: 'team-a', name: 'llm' }).catch(() => undefined);
    await h2Request(server.url, undefined, GET, { 'content-type': 'application/grpc', te: 'trailers' }, { prefix: Buffer.concat([envelopeHeader(false, garbage.length), garbage]), size: 0 });
    const [badEnum, unavailable, badBytes] = await linesOf(get, 3, from);
    expect(badEnum).toMatchObject({ protocol: 'rest', route: 'GET /apis/rayshift/v1/namespaces/{namespace}/rayservices/{name}', namespace: 'team-a', name: 'llm', code: 'InvalidArgument', httpStatus: 400 });
    expect(unavailable).toMatchObject({ protocol: 'grpc', namespace: 'team-a', name: 'llm', code: 'Unavailable', httpStatus: 200 });
    expect(badBytes).toMatchObject({ protocol: 'grpc', code: 'InvalidArgument' });

    // A later call's line is there: each call above wrote exactly one.
    await call('GET', '/apis/rayshift/v1/whoami');
    expect(await linesOf(whoAmI, 3, from)).toHaveLength(3);
    expect(since(from).filter((l) => l.rpc === get)).toHaveLength(3);
    // Probes and metrics are no calls.
    await call('GET', '/healthz');
    await call('GET', '/apis/rayshift/v1/whoami');
    await linesOf(whoAmI, 4, from);
    expect(since(from).filter((l) => l.rpc === undefined)).toEqual([]);
  });

  test('no line holds the token or the Authorization header', () => {
    expect(lines.length).toBeGreaterThan(5);
    const text = JSON.stringify(lines);
    expect(text).not.toContain(TOKEN);
    expect(text.toLowerCase()).not.toContain('authorization');
    expect(text.toLowerCase()).not.toContain('bearer');
  });

  test('accessLog: false writes none', async () => {
    const quiet: string[] = [];
    const other = await startApiServer({ kubeConfig: neverCalledKubeConfig(), insecureLocal: true, port: 0, accessLog: false, log: pino({ level: 'info' }, { write: (l: string) => void quiet.push(l) }) });
    try {
      expect((await fetch(`${other.url}/apis/rayshift/v1/whoami`)).status).toBe(200);
    } finally {
      await other.close();
    }
    // Only the startup line: close() waits for the connection, so the call's line would be written by now.
    expect(quiet.map((l) => JSON.parse(l).msg)).toEqual(['rayshift API server listening']);
  });
});
