/**
 * Protocol fuzzing of the API server (in this process) on a real kube-apiserver: 10,000+ generated
 * requests over Connect, gRPC, gRPC-Web and REST (support/rpc-requests.ts, support/rest-requests.ts)
 * and raw HTTP/1.1 bytes and HTTP/2 frames (support/raw-connections.ts). Properties: the process
 * never crashes and keeps serving; no answer is a server error (HTTP 5xx, UNKNOWN, INTERNAL,
 * UNAVAILABLE, DATA_LOSS); every answer is well-formed for its protocol (support/answers.ts); the
 * RSS stays within 150 MB of where it started. Seed: FUZZ_SEED (printed); a failure prints the
 * shrunk request. FUZZ_CENSUS=1 records every finding instead of stopping at the first, and lists
 * one example of each kind at the end (for triage).
 */
import fc from 'fast-check';
import { ApiEnv, TEAM_A, rayServiceBody, startApiEnv } from '../apiserver/support/api-env';
import { checkAnswer, surfaceOf, type Finding } from './support/answers';
import { FuzzFigures, collectGarbage, countCrashes, formatFigures, fuzzParams, newFigures, sampleRss } from './support/fuzz-run';
import { h1Statuses, rawExchange, sendRaw } from './support/raw-connections';
import { restRequest } from './support/rest-requests';
import { RPC_PATHS, authorization, connectRequest, grpcRequest, type FuzzRequest } from './support/rpc-requests';
import { WireClient, type WireAnswer, type WireRequest } from './support/wire';

/** Runs per surface; FUZZ_SCALE (default 1) scales them for quick local runs. */
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const RUNS = { connect: 3_500, grpc: 3_000, rest: 3_500, raw: 600 };
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
/** Allowed RSS growth over the run (the server runs in this process). */
const RSS_BOUND_MB = 150;
const CENSUS = process.env.FUZZ_CENSUS === '1';
/** Requests between forced garbage collections (see `collectGarbage`). */
const GC_EVERY = 1_000;

let env: ApiEnv;
let client: WireClient;
let rss: { stop(): void };
let crashes: ReturnType<typeof countCrashes>;
const figures: FuzzFigures = newFigures();
const started = performance.now();
/** FUZZ_CENSUS: each kind of finding, how often, and its first request. */
const census = new Map<string, { count: number; example: string }>();

beforeAll(async () => {
  env = await startApiEnv();
  client = new WireClient(env.api.url, env.cp.ca);
  // An object for the reads, watches and steering calls to find, and every code path warmed once,
  // so the RSS baseline is the server's working set, not its first allocations.
  const created = await env.rest('POST', `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`, rayServiceBody('llm'));
  if (created.status !== 200) throw new Error(`creating the RayService fixture: HTTP ${created.status} ${created.text}`);
  await env.client('grpc', env.tokens.alice).identity.whoAmI({});
  await env.client('connect', env.tokens.alice).rayServices.listRayServices({ namespace: TEAM_A });
  await env.client('grpc-web', env.tokens.alice).rayServices.getRayService({ namespace: TEAM_A, name: 'llm' });
  collectGarbage();
  rss = sampleRss(figures);
  crashes = countCrashes(figures);
}, 180_000);

afterAll(async () => {
  rss?.stop();
  crashes?.stop();
  client?.close();
  console.log(formatFigures('protocols', figures, (performance.now() - started) / 1000));
  if (census.size > 0) console.log(`census of findings:\n${[...census].map(([k, v]) => `${v.count} × ${k}\n  e.g. ${v.example}`).join('\n')}`);
  await env?.stop();
});

/** A request or answer text for a report: printable text as is, else base64; long values cut. */
function preview(bytes: Buffer, max = 400): string {
  const text = bytes.toString('utf8');
  const shown = /^[\x20-\x7e\t\r\n]*$/.test(text) ? JSON.stringify(text) : `base64:${bytes.toString('base64')}`;
  return shown.length > max ? `${shown.slice(0, max)}… (${bytes.length} bytes)` : shown;
}

function describe(req: FuzzRequest, answer?: WireAnswer): string {
  const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, v.length > 80 ? `${v.slice(0, 20)}… (${v.length} chars)` : v]));
  const sent = `${req.method} ${req.path.length > 300 ? `${req.path.slice(0, 300)}…` : req.path} over HTTP/${req.http}, caller ${req.auth}, headers ${JSON.stringify(headers)}, body ${preview(req.body)}`;
  if (!answer) return sent;
  const got = `HTTP ${answer.status} ${JSON.stringify(answer.headers['content-type'] ?? '')} grpc-status ${answer.trailers['grpc-status'] ?? answer.headers['grpc-status'] ?? '-'} body ${preview(answer.body, 300)}${answer.broken ? ` (broken: ${answer.broken})` : ''}`;
  return `${sent}\n  → ${got}`;
}

/** Records `findings` (census) or fails with them. */
function report(findings: readonly Finding[], surface: string, where: string, text: string): void {
  if (findings.length === 0) return;
  if (!CENSUS) throw new Error(`${findings.map((f) => `${f.kind}: ${f.detail}`).join('\n')}\n${text}`);
  for (const f of findings) {
    const key = `${surface} ${where} ${f.kind}: ${f.detail.replace(/\d+/g, 'N').slice(0, 140)}`;
    const entry = census.get(key) ?? { count: 0, example: text };
    entry.count++;
    census.set(key, entry);
  }
}

/** Sends one generated request as its caller and checks the answer. */
async function exchange(req: FuzzRequest): Promise<void> {
  const wire: WireRequest = { ...req, headers: { ...req.headers, ...authorization(req.auth, env.tokens) } };
  const answer = await client.send(wire);
  if (answer.unsent !== undefined) return; // Node's client would not send it: nothing reached the server
  figures.requests++;
  if (figures.requests % GC_EVERY === 0) collectGarbage();
  const findings = checkAnswer(wire, answer, RPC_PATHS);
  if (findings.some((f) => f.kind === 'server-error')) figures.serverErrors++;
  report(findings, surfaceOf(wire, RPC_PATHS), req.path.split('?')[0].replace(/^\/apis\/rayshift\/v1\/namespaces\/[^/]*/, '…').slice(0, 80), describe(req, answer));
}

test(`${runs(RUNS.connect)} Connect requests (unary JSON and proto, GET, streams; HTTP/1.1 and HTTP/2)`, async () => {
  await fc.assert(fc.asyncProperty(connectRequest, exchange), fuzzParams(11, runs(RUNS.connect)));
});

test(`${runs(RUNS.grpc)} gRPC and gRPC-Web requests (framing, encodings, timeouts)`, async () => {
  await fc.assert(fc.asyncProperty(grpcRequest, exchange), fuzzParams(12, runs(RUNS.grpc)));
});

test(`${runs(RUNS.rest)} REST requests from the http rules (paths, escapes, queries, bodies, methods)`, async () => {
  await fc.assert(fc.asyncProperty(restRequest, exchange), fuzzParams(13, runs(RUNS.rest)));
});

test(`${runs(RUNS.raw)} raw HTTP/1.1 and HTTP/2 exchanges: refused below 500, and the server keeps serving`, async () => {
  await fc.assert(
    fc.asyncProperty(rawExchange, async (exchangeBytes) => {
      const answer = await sendRaw(env.api.port, env.cp.ca, exchangeBytes);
      figures.requests++;
      const errors = exchangeBytes.alpn === 'http/1.1' ? h1Statuses(answer.data).filter((s) => s >= 500) : [];
      if (errors.length > 0) figures.serverErrors++;
      const findings: Finding[] = errors.map((s) => ({ kind: 'server-error', detail: `HTTP ${s} to raw bytes` }));
      const text = `${exchangeBytes.alpn} bytes ${preview(exchangeBytes.bytes)} → ${preview(answer.data, 300)}`;
      report(findings, `raw ${exchangeBytes.alpn}`, '', text);
    }),
    fuzzParams(14, runs(RUNS.raw)),
  );
});

test('after the run: no crash, the server still serves every protocol, RSS within bound, no finding (census)', async () => {
  const health = await client.send({ http: 1, method: 'GET', path: '/healthz', headers: {}, body: Buffer.alloc(0) });
  if (health.status !== 200) figures.crashes++;
  expect(health.status).toBe(200);
  for (const protocol of ['grpc', 'connect', 'grpc-web'] as const) {
    expect((await env.client(protocol, env.tokens.alice).identity.whoAmI({})).username).toBe('alice');
  }
  expect(crashes.errors).toEqual([]);
  rss.stop();
  expect(figures.rssPeakMb - figures.rssStartMb).toBeLessThan(RSS_BOUND_MB);
  expect([...census.keys()]).toEqual([]);
});
