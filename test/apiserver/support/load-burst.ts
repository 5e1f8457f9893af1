/**
 * A burst of authorized calls at a rayshift API server, the mix of issue 31's memory finding: reads
 * and lists over REST and gRPC, `validate_only` creates carrying Serve configs near the size and node
 * limits (`SERVE_CONFIG_LIMITS`), and upgrade watches opened and dropped after their snapshot. Shared
 * by the memory load test (test/integration/apiserver-memory.test.ts) and its bench
 * (bench/apiserver-memory.bench.ts). It counts answers; it measures no time.
 */
import * as http2 from 'node:http2';
import * as https from 'node:https';
import { SERVE_CONFIG_LIMITS } from '../../../lib/spec/input-limits';
import { TEAM_A, TEAM_B, rayServiceBody } from './api-env';

/** RayServices each team namespace holds during the burst (what the reads and lists return). */
export const BURST_SERVICES = 20;

/** The kinds of call in the burst, in the order they take turns. */
export const BURST_MIX = ['get', 'get', 'list', 'list-all', 'validate-create', 'validate-create', 'grpc-get', 'watch'] as const;

/** One kind of call. */
export type BurstCall = (typeof BURST_MIX)[number];

/** Who calls and where: a bearer token whose user may do everything in `namespace`. */
export interface BurstCaller {
  readonly token: string;
  readonly namespace: string;
}

/**
 * A Serve config within every limit yet near two of them: one application with `env_vars` entries
 * until the text is about 60 KB (of 64 KiB), about 3,800 nodes (of 10,000).
 */
export function largeLegalServeConfig(): string {
  const head = 'applications:\n- name: app\n  import_path: rayshift_testapp.app:build\n  route_prefix: /\n  runtime_env:\n    env_vars:\n';
  let text = head;
  for (let i = 0; text.length < SERVE_CONFIG_LIMITS.maxBytes - 4096; i++) text += `      VAR_${String(i).padStart(5, '0')}: "${'v'.repeat(20)}"\n`;
  return text;
}

/** The names of the RayServices `seedBurst` creates. */
export function burstServiceName(i: number): string {
  return `burst-${i % BURST_SERVICES}`;
}

/** Creates `BURST_SERVICES` RayServices in each caller's namespace through the API server (REST). */
export async function seedBurst(url: string, ca: string | Buffer, callers: readonly BurstCaller[]): Promise<void> {
  const agent = new https.Agent({ keepAlive: true, ca });
  try {
    for (const c of callers) {
      for (let i = 0; i < BURST_SERVICES; i++) {
        const r = await restCall(agent, url, 'POST', `/apis/rayshift/v1/namespaces/${c.namespace}/rayservices`, c.token, rayServiceBody(burstServiceName(i)));
        if (r !== 200) throw new Error(`creating ${burstServiceName(i)} in ${c.namespace}: HTTP ${r}`);
      }
    }
  } finally {
    agent.destroy();
  }
}

/** The HTTP status of one REST call; a watch is dropped once its first bytes (the snapshot) arrived. */
function restCall(agent: https.Agent, url: string, method: string, path: string, token: string, body?: unknown, dropAfterFirstBytes = false): Promise<number> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = https.request(`${url}${path}`, { method, headers, agent }, (res) => {
      if (dropAfterFirstBytes && res.statusCode === 200) {
        res.once('data', () => {
          resolve(200);
          req.destroy();
        });
        return;
      }
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', (e) => (req.destroyed && dropAfterFirstBytes ? undefined : reject(e)));
    req.end(payload);
  });
}

/** A gRPC `GetRayService` over one shared HTTP/2 session: its grpc-status (0 is OK). */
function grpcGet(session: http2.ClientHttp2Session, token: string, namespace: string, name: string): Promise<number> {
  // GetRayServiceRequest {namespace = 1, name = 2}, hand-encoded: the burst measures the server, not a client library.
  const field = (n: number, s: string) => Buffer.concat([Buffer.from([(n << 3) | 2, Buffer.byteLength(s)]), Buffer.from(s)]);
  const message = Buffer.concat([field(1, namespace), field(2, name)]);
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': '/rayshift.v1.RayServiceService/GetRayService', 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${token}` });
    let status = -1;
    stream.on('response', (h) => {
      if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']);
    });
    stream.on('trailers', (t) => (status = Number(t['grpc-status'])));
    stream.resume();
    stream.on('close', () => resolve(status));
    stream.on('error', reject);
    stream.end(frame);
  });
}

/** Answers of a burst: per kind of call, how many got each status (HTTP for REST, grpc-status for gRPC). */
export type BurstAnswers = Record<BurstCall, Record<number, number>>;

/**
 * `requests` calls, `concurrency` at a time, taking turns through `BURST_MIX` and through `callers`,
 * each on the caller's own RayServices. REST goes over HTTP/1.1 keep-alive connections (up to
 * `concurrency`), gRPC over one HTTP/2 session per caller.
 */
export async function runBurst(url: string, ca: string | Buffer, callers: readonly BurstCaller[], requests: number, concurrency: number): Promise<BurstAnswers> {
  const agent = new https.Agent({ keepAlive: true, ca, maxSockets: concurrency });
  const sessions = callers.map(() => http2.connect(url, { ca }));
  const serveConfigV2 = largeLegalServeConfig();
  const answers = Object.fromEntries(BURST_MIX.map((k) => [k, {}])) as BurstAnswers;
  let next = 0;
  const one = async (i: number): Promise<void> => {
    const kind = BURST_MIX[i % BURST_MIX.length];
    const c = Math.floor(i / BURST_MIX.length) % callers.length;
    const { token, namespace } = callers[c];
    const name = burstServiceName(i);
    const base = `/apis/rayshift/v1/namespaces/${namespace}/rayservices`;
    let status: number;
    switch (kind) {
      case 'get':
        status = await restCall(agent, url, 'GET', `${base}/${name}`, token);
        break;
      case 'list':
        status = await restCall(agent, url, 'GET', base, token);
        break;
      case 'list-all':
        status = await restCall(agent, url, 'GET', '/apis/rayshift/v1/rayservices', token);
        break;
      case 'validate-create': {
        const body = rayServiceBody(`load-${i}`);
        status = await restCall(agent, url, 'POST', `${base}?validate_only=true`, token, { ...body, spec: { ...(body.spec as object), serveConfigV2 } });
        break;
      }
      case 'grpc-get':
        status = await grpcGet(sessions[c], token, namespace, name);
        break;
      case 'watch':
        status = await restCall(agent, url, 'GET', `${base}/${name}/upgrade:watch`, token, undefined, true);
        break;
    }
    answers[kind][status] = (answers[kind][status] ?? 0) + 1;
  };
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) await one(next++);
      }),
    );
  } finally {
    agent.destroy();
    for (const s of sessions) s.close();
  }
  return answers;
}

/** The two test users of `startApiEnv`, each in the namespace it may use. */
export function burstCallers(tokens: { readonly alice: string; readonly bob: string }): BurstCaller[] {
  return [
    { token: tokens.alice, namespace: TEAM_A },
    { token: tokens.bob, namespace: TEAM_B },
  ];
}
