/**
 * Limits before work, against a real kube-apiserver: oversized bodies and decompression bombs on
 * every protocol (Connect, gRPC, gRPC-Web, REST) are answered without being buffered — 401 before
 * the body is read when there is no valid token, the protocol's "too large" error naming the limit
 * when there is one — and the server's memory (this process's RSS) grows by less than 20 MB.
 */
import { Code } from '@connectrpc/connect';
import { ApiEnv, TEAM_A, startApiEnv } from '../apiserver/support/api-env';
import { RawAnswer, StreamedBody, envelopeHeader, gzipBomb, h1Request, h2Request, peakRssGrowth } from '../apiserver/support/raw-requests';

let env: ApiEnv;
let bomb: Buffer;
const LIMIT = 4 * 1024 * 1024;
const BIG = 100 * 1024 * 1024;
const WHOAMI = '/rayshift.v1.IdentityService/WhoAmI';
const auth = (token: string | null): Record<string, string> => (token === null ? {} : { authorization: `Bearer ${token}` });

beforeAll(async () => {
  env = await startApiEnv();
  bomb = await gzipBomb(256 * 1024 * 1024);
  // Warm every code path once, so that the measured requests compare like with like.
  await env.client('grpc', env.tokens.alice).identity.whoAmI({});
  await env.client('connect', env.tokens.alice).identity.whoAmI({});
  await env.rest('GET', '/apis/rayshift/v1/whoami');
}, 180_000);

/** Peak RSS growth of each measured request, printed for the record. */
const figures: string[] = [];

afterAll(async () => {
  console.log(`peak RSS growth per request:\n${figures.join('\n')}`);
  await env?.stop();
});

const jsonPad: StreamedBody = { prefix: Buffer.from('{"pad":"'), size: BIG, suffix: Buffer.from('"}') };

/** Each case: a request sender, and what it must answer without a token and with alice's. */
const cases: { name: string; send: (token: string | null) => Promise<RawAnswer>; unauthenticated: (a: RawAnswer) => void; tooLarge: (a: RawAnswer) => void }[] = [
  {
    name: 'Connect JSON, 100 MB, chunked',
    send: (t) => h1Request(`${env.api.url}${WHOAMI}`, env.cp.ca, { 'content-type': 'application/json', ...auth(t) }, jsonPad, true),
    unauthenticated: (a) => {
      expect(a.status).toBe(401);
      expect(JSON.parse(a.text).code).toBe('unauthenticated');
    },
    tooLarge: (a) => {
      expect(JSON.parse(a.text)).toMatchObject({ code: 'resource_exhausted', message: expect.stringContaining(String(LIMIT)) });
    },
  },
  {
    name: 'Connect JSON, gzip bomb (256 MiB inflated)',
    send: (t) => h1Request(`${env.api.url}${WHOAMI}`, env.cp.ca, { 'content-type': 'application/json', 'content-encoding': 'gzip', ...auth(t) }, { prefix: bomb, size: 0 }),
    unauthenticated: (a) => expect(a.status).toBe(401),
    tooLarge: (a) => expect(JSON.parse(a.text)).toMatchObject({ code: 'resource_exhausted', message: expect.stringContaining(String(LIMIT)) }),
  },
  {
    name: 'gRPC, gzip bomb (256 MiB inflated)',
    send: (t) =>
      h2Request(env.api.url, env.cp.ca, WHOAMI, { 'content-type': 'application/grpc', 'grpc-encoding': 'gzip', te: 'trailers', ...auth(t) }, { prefix: Buffer.concat([envelopeHeader(true, bomb.length), bomb]), size: 0 }),
    unauthenticated: (a) => expect(a.headers['grpc-status']).toBe(String(Code.Unauthenticated)),
    tooLarge: (a) => {
      expect(a.headers['grpc-status']).toBe(String(Code.ResourceExhausted));
      expect(decodeURIComponent(String(a.headers['grpc-message']))).toContain(String(LIMIT));
    },
  },
  {
    name: 'gRPC, 100 MB message',
    send: (t) => h2Request(env.api.url, env.cp.ca, WHOAMI, { 'content-type': 'application/grpc', te: 'trailers', ...auth(t) }, { prefix: envelopeHeader(false, BIG), size: BIG }),
    unauthenticated: (a) => expect(a.headers['grpc-status']).toBe(String(Code.Unauthenticated)),
    tooLarge: (a) => expect(a.headers['grpc-status']).toBe(String(Code.ResourceExhausted)),
  },
  {
    name: 'gRPC-Web, 100 MB message',
    send: (t) => h1Request(`${env.api.url}${WHOAMI}`, env.cp.ca, { 'content-type': 'application/grpc-web+proto', ...auth(t) }, { prefix: envelopeHeader(false, BIG), size: BIG }),
    unauthenticated: (a) => expect(a.headers['grpc-status']).toBe(String(Code.Unauthenticated)),
    tooLarge: (a) => {
      const status = a.headers['grpc-status'] ?? /grpc-status:\s*(\d+)/.exec(a.text)?.[1];
      expect(status).toBe(String(Code.ResourceExhausted));
    },
  },
  {
    name: 'REST, 100 MB',
    send: (t) => h1Request(`${env.api.url}/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`, env.cp.ca, { 'content-type': 'application/json', ...auth(t) }, jsonPad),
    unauthenticated: (a) => expect({ status: a.status, body: JSON.parse(a.text) }).toMatchObject({ status: 401, body: { code: Code.Unauthenticated } }),
    tooLarge: (a) => {
      expect(a.status).toBe(413);
      expect(JSON.parse(a.text)).toMatchObject({ code: Code.ResourceExhausted, message: expect.stringContaining(String(LIMIT)) });
    },
  },
];

describe.each(cases)('$name', (c) => {
  test('without a token: unauthenticated before the body is read, RSS growth under 20 MB', async () => {
    const { result, growthMb } = await peakRssGrowth(() => c.send(null));
    figures.push(`${c.name}, no token: ${growthMb.toFixed(1)} MB, status ${result.status} ${result.headers['grpc-status'] ?? ''}`);
    c.unauthenticated(result);
    expect(growthMb).toBeLessThan(20);
  });

  test('with a garbage token: unauthenticated too', async () => {
    c.unauthenticated(await c.send('not-a-token'));
  });

  test('with a valid token: the limit error naming the limit, RSS growth under 20 MB', async () => {
    const { result, growthMb } = await peakRssGrowth(() => c.send(env.tokens.alice));
    figures.push(`${c.name}, token: ${growthMb.toFixed(1)} MB, status ${result.status} ${result.headers['grpc-status'] ?? ''}`);
    c.tooLarge(result);
    expect(growthMb).toBeLessThan(20);
  });
});
