/**
 * Client faults the fuzz suite (test/fuzz) found answered as server errors (HTTP 500, INTERNAL),
 * each answered now below 500 before any Kubernetes call: objects Kubernetes could not name, REST
 * paths that parse as a host, compressed Connect GET messages that are no message, envelope flags
 * no request carries, and a compressed flag without an encoding (INTERNAL only where gRPC's spec
 * prescribes it). This server's kubeconfig is never answered, so a request that passes the checks
 * gets UNAVAILABLE.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { create, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { createApiClient } from '../../lib/apiserver/client';
import { BadRequestSchema } from '../../lib/apiserver/gen/google/rpc/error_details_pb';
import { GetRayServiceRequestSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
import { startApiServer, type RunningApiServer } from '../../lib/apiserver/server';
import { envelopeHeader, h1Request, h2Request } from './support/raw-requests';
import { neverCalledKubeConfig } from './support/never-called-kubeconfig';

let server: RunningApiServer;
const GET = '/rayshift.v1.RayServiceService/GetRayService';
const RBG = '/rayshift.v1.RoleBasedGroupService/GetRoleBasedGroup';
const WHOAMI = '/rayshift.v1.IdentityService/WhoAmI';
const WATCH = '/rayshift.v1.RayServiceService/WatchUpgrade';
const base = '/apis/rayshift/v1/namespaces/team-a/rayservices';

beforeAll(async () => {
  server = await startApiServer({ kubeConfig: neverCalledKubeConfig(), insecureLocal: true, port: 0 });
});

afterAll(async () => {
  await server.close();
});

async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, { method, body, headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The field violations of a Connect or REST JSON error. */
function violations(body: any): { field: string; description: string }[] {
  const detail = body.details.find((d: any) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest' || d.type === 'google.rpc.BadRequest');
  return detail['@type'] ? detail.fieldViolations : detail.debug.fieldViolations;
}

/** One envelope: flags, then the payload with its length. */
const envelope = (flags: number, payload: Buffer) => Buffer.concat([Buffer.from([flags]), envelopeHeader(false, payload.length).subarray(1), payload]);

describe('namespace and name: required where the descriptor says so, and named as Kubernetes names objects', () => {
  const json = { 'content-type': 'application/json' };

  test('Connect: a missing namespace or an empty name is INVALID_ARGUMENT naming the field and what is allowed', async () => {
    const noNamespace = await call('POST', GET, JSON.stringify({ name: 'llm' }), json);
    expect({ status: noNamespace.status, code: noNamespace.body.code }).toEqual({ status: 400, code: 'invalid_argument' });
    expect(violations(noNamespace.body)).toEqual([{ field: 'namespace', description: expect.stringMatching(/is required.*DNS-1123 label/) }]);
    const both = await call('POST', RBG, '{}', json);
    expect(violations(both.body).map((v) => v.field)).toEqual(['namespace', 'name']);
    expect(violations(both.body)[1].description).toMatch(/is required.*DNS-1123 subdomain/);
  });

  test('a name or namespace Kubernetes would not accept is INVALID_ARGUMENT, on REST, Connect and a gRPC server stream', async () => {
    const dots = await call('POST', GET, JSON.stringify({ namespace: 'team-a', name: '../x' }), json);
    expect(violations(dots.body)).toEqual([{ field: 'name', description: expect.stringMatching(/"\.\.\/x" is not a DNS-1123 subdomain/) }]);
    const rest = await call('GET', `${base}/..%2Fx`);
    expect(rest.status).toBe(400);
    expect(violations(rest.body).map((v) => v.field)).toEqual(['name']);
    const upper = await call('GET', '/apis/rayshift/v1/namespaces/Team-A/rayservices');
    expect(violations(upper.body)).toEqual([{ field: 'namespace', description: expect.stringContaining('not a DNS-1123 label') }]);
    const grpc = createApiClient({ baseUrl: server.url, protocol: 'grpc' });
    try {
      const watch = async () => {
        for await (const _ of grpc.rayServices.watchUpgrade({ namespace: 'team-a', name: '' })) return;
      };
      const err = ConnectError.from(await watch().catch((e) => e));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.findDetails(BadRequestSchema)[0].fieldViolations.map((v) => v.field)).toEqual(['name']);
      // Valid names pass on to Kubernetes.
      expect(ConnectError.from(await grpc.rayServices.getRayService({ namespace: 'team-a', name: 'llm.v2' }).catch((e) => e)).code).toBe(Code.Unavailable);
    } finally {
      grpc.close();
    }
  });
});

test('a REST path starting with // is no host: 404 like any path without a route', async () => {
  for (const path of ['//', '///:', '//apis/x']) {
    const answer = await call('GET', path);
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 404, code: Code.NotFound });
  }
});

test('a compressed Connect GET message that is no message is INVALID_ARGUMENT; one that is passes on', async () => {
  const get = (compression: string, bytes: Buffer) => call('GET', `${GET}?connect=v1&base64=1&compression=${compression}&encoding=proto&message=${bytes.toString('base64url')}`);
  for (const [compression, bytes] of [
    ['br', Buffer.from('iwCAy7cD', 'base64url')],
    ['gzip', gzipSync(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))],
    ['gzip', Buffer.from('not gzip')],
  ] as const) {
    const answer = await get(compression, bytes);
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'invalid_argument' });
  }
  const valid = Buffer.from(toBinary(GetRayServiceRequestSchema, create(GetRayServiceRequestSchema, { namespace: 'team-a', name: 'llm' })));
  expect((await get('br', brotliCompressSync(valid))).body.code).toBe('unavailable');
});

test('envelope flags no request message carries (0x02, 0x80) are INVALID_ARGUMENT on gRPC, gRPC-Web and Connect streams', async () => {
  const bad = Buffer.from('R.yX', 'latin1');
  for (const flags of [0x02, 0x80]) {
    const grpc = await h2Request(server.url, undefined, RBG, { 'content-type': 'application/grpc', te: 'trailers' }, { prefix: envelope(flags, bad), size: 0 });
    expect(grpc.headers['grpc-status']).toBe(String(Code.InvalidArgument));
    const web = await h1Request(`${server.url}${RBG}`, undefined, { 'content-type': 'application/grpc-web+proto' }, { prefix: envelope(flags, bad), size: 0 });
    expect(/grpc-status:\s*(\d+)/.exec(web.text)?.[1]).toBe(String(Code.InvalidArgument));
  }
  const stream = await h1Request(`${server.url}${WATCH}`, undefined, { 'content-type': 'application/connect+proto' }, { prefix: envelope(0x02, bad), size: 0 });
  expect(stream.text).toContain('"code":"invalid_argument"');
});

test('a compressed flag without an encoding: INTERNAL naming the flag on gRPC (its spec says so), INVALID_ARGUMENT on Connect', async () => {
  const empty = envelope(0x01, Buffer.alloc(0));
  const grpc = await h2Request(server.url, undefined, WHOAMI, { 'content-type': 'application/grpc+proto', te: 'trailers' }, { prefix: empty, size: 0 });
  expect(grpc.headers['grpc-status']).toBe(String(Code.Internal));
  expect(decodeURIComponent(String(grpc.headers['grpc-message']))).toContain('Compressed-Flag');
  const stream = await h1Request(`${server.url}${WATCH}`, undefined, { 'content-type': 'application/connect+proto' }, { prefix: empty, size: 0 });
  expect(stream.text).toContain('"code":"invalid_argument"');
});

test('a JSON value that does not decode, quoting an unpaired surrogate, is INVALID_ARGUMENT on gRPC (no grpc-message it cannot percent-encode)', async () => {
  const json = Buffer.from(JSON.stringify({ namespace: 'team-a', name: 'llm' }).replace('}', ',"heartbeatSeconds":"\\ud800"}'));
  const answer = await h2Request(server.url, undefined, WATCH, { 'content-type': 'application/grpc+json', te: 'trailers' }, { prefix: envelope(0, json), size: 0 });
  expect(answer.headers['grpc-status']).toBe(String(Code.InvalidArgument));
  expect(decodeURIComponent(String(answer.headers['grpc-message']))).toContain('\ufffd');
});
