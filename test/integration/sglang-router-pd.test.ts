/**
 * The REAL sglang-router 0.3.2 binary in PD mode (scripts/install-sglang-router.sh) over SIMULATED
 * prefill and decode workers of two releases (test/support/simulated-pd-worker.ts), mid-rollout:
 * release 1 and release 2 each with 2 prefills and 1 decode. One router over every worker (what a
 * RoleBasedGroup user runs today) pairs prefills and decodes of different releases; one router per
 * release, as rayshift renders them, never does. The HTTPRoute between the releases' routers is not in
 * the loop here: the client sends each request to one release's router directly.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Proc, Supervisor } from '../support/processes';
import { generate, requireSglangRouter, startSglangRouter } from '../support/sglang-router';
import { ServedPair, SimulatedWorker, startSimulatedDecode, startSimulatedPrefill } from '../support/simulated-pd-worker';

const REQUESTS = 40;

let dir: string;
let supervisor: Supervisor;
const served: ServedPair[] = [];
const workers: SimulatedWorker[] = [];
const prefills: Record<string, (SimulatedWorker & { bootstrapPort: number })[]> = { r1: [], r2: [] };
const decodes: Record<string, SimulatedWorker[]> = { r1: [], r2: [] };
/** The routers a test started, stopped after it whether it passed or not. */
const routers: Proc[] = [];

beforeAll(async () => {
  requireSglangRouter();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-sglang-router-'));
  supervisor = new Supervisor(dir, 'RAYSHIFT_KEEP_SGLANG_ROUTER');
  for (const release of ['r1', 'r2']) {
    for (const i of [0, 1]) prefills[release].push(await startSimulatedPrefill(`prefill-${release}-${i}`, release));
    decodes[release].push(await startSimulatedDecode(`decode-${release}-0`, release, served));
  }
  workers.push(...Object.values(prefills).flat(), ...Object.values(decodes).flat());
}, 60_000);

afterEach(async () => {
  for (const proc of routers.splice(0)) await supervisor.kill(proc, 'SIGTERM', 5_000);
});

afterAll(async () => {
  supervisor?.release();
  await Promise.all(workers.map((w) => w.close()));
  if (dir && process.env.RAYSHIFT_KEEP_SGLANG_ROUTER !== '1') fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts the real router over `p` and `d`, stopped after the test. */
const startRouter = (name: string, p: readonly (SimulatedWorker & { bootstrapPort: number })[], d: readonly SimulatedWorker[]): Promise<string> => startSglangRouter(supervisor, dir, name, p, d, routers);

/** Sends `REQUESTS` requests one after another, each to the router `pick(i)` names; returns the statuses and the pairs served. */
async function run(pick: (i: number) => string): Promise<{ ok: number; failed: number; pairs: ServedPair[] }> {
  served.length = 0;
  const statuses: number[] = [];
  for (let i = 0; i < REQUESTS; i++) statuses.push(await generate(pick(i), i));
  return { ok: statuses.filter((s) => s === 200).length, failed: statuses.filter((s) => s !== 200).length, pairs: [...served] };
}

const mixed = (pairs: readonly ServedPair[]) => pairs.filter((p) => p.prefillRelease !== p.decodeRelease).length;

test('one router over both releases serves mixed pairs (about half: each release holds half of each pool)', async () => {
  const all = await startRouter('router-all', [...prefills.r1, ...prefills.r2], [...decodes.r1, ...decodes.r2]);
  const result = await run(() => all);
  expect([result.ok, result.failed, result.pairs.length]).toEqual([40, 0, 40]);
  // Each request is mixed with probability 1/2: none mixed in 40 has probability 2^-40.
  const count = mixed(result.pairs);
  process.stdout.write(`one router over both releases: ${count} of ${REQUESTS} requests served by a mixed pair\n`);
  expect(count).toBeGreaterThan(0);
}, 180_000);

test("one router per release (rayshift's routing) serves no mixed pair, with traffic split between the releases", async () => {
  const r1 = await startRouter('router-r1', prefills.r1, decodes.r1);
  const r2 = await startRouter('router-r2', prefills.r2, decodes.r2);
  // Half the requests to each release, as a route at weight 50 sends them.
  const result = await run((i) => (i % 2 === 0 ? r1 : r2));
  expect([result.ok, result.failed, result.pairs.length]).toEqual([40, 0, 40]);
  expect(mixed(result.pairs)).toBe(0);
  expect(result.pairs.filter((p) => p.decodeRelease === 'r2').length).toBe(20);
}, 180_000);
