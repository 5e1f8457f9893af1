/**
 * The CPU of the operator's reconcile passes alone, without an API server: the RayService
 * reconciler over the unit tests' in-memory fakes (TEST-ONLY: FakeKube for the API server, FakeServe
 * for the Ray dashboards, KubeRay's head readiness and the Gateway's acceptance played by hand), on
 * a clock the bench moves. What it leaves out is what the vs-KubeRay bench's profile charges to
 * watch decoding, HTTP and the API server; what it keeps is observe → decide → render → compare,
 * which every pass pays. Prints figures; never asserts.
 *
 *   npx tsx bench/reconcile-pass.bench.ts [--upgrades 40] [--steady 3000]
 */
import { RayServiceReconciler } from '../lib/runtime/rayservice/reconciler';
import { HTTPROUTE, RAYSHIFT_RAYSERVICE } from '../lib/spec/object-names';
import { rayService } from '../test/support/operator-env';
import { FakeKube } from '../test/runtime/support/fake-kube';
import { FakeServe } from '../test/runtime/support/fake-serve';
import { gatewayAccepts, headsReady } from '../test/runtime/support/rayservice-world';
import { fmt, printTable } from './operator-harness';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : Number(dflt);
};
const UPGRADES = arg('upgrades', '40');
const STEADY = arg('steady', '3000');
const NS = 'ns';
const NAME = 'svc';
const INTERVAL_S = 5;

/** CPU µs (user + system) of `f`. */
async function cpuMicros(f: () => Promise<void>): Promise<number> {
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  return c.user + c.system;
}

async function main(): Promise<void> {
  const kube = new FakeKube();
  const serve = new FakeServe();
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const reconciler = new RayServiceReconciler({ client: kube, serve, now: () => clock.now });
  const spec = (version: number) => rayService(NS, NAME, { interval: INTERVAL_S, step: 25, maxSurge: 50, cpu: String(version) }).spec;
  kube.seed(rayService(NS, NAME, { interval: INTERVAL_S, step: 25, maxSurge: 50, cpu: '1' }));
  const engine = () => (kube.peek(RAYSHIFT_RAYSERVICE, NAME, NS)!.status as { engineState: Record<string, unknown> }).engineState;
  const weights = () => JSON.stringify(kube.peek(HTTPROUTE, `${NAME}-httproute`, NS)?.spec);
  let passes = 0;
  /** One pass, then the controllers catch up and the clock moves to when the pass asked to run again. */
  const pass = async () => {
    const res = await reconciler.reconcile(NS, NAME);
    passes++;
    headsReady(kube, NS);
    gatewayAccepts(kube, NS);
    clock.now = Math.max(clock.now + 1, res.requeueAt ?? clock.now + INTERVAL_S * 1000);
  };
  for (let i = 0; i < 8; i++) await pass();
  if (engine().phase !== 'Running') throw new Error(`the service did not come up: ${JSON.stringify(engine())}`);

  // Upgrades: passes from the spec change to the promotion, and the route changes among them.
  let upgradePasses = 0;
  let routeChanges = 0;
  const upgradeCpu = await cpuMicros(async () => {
    for (let u = 0; u < UPGRADES; u++) {
      const active = engine().activeClusterName;
      kube.mutate(RAYSHIFT_RAYSERVICE, NAME, NS, (o) => ({ ...o, metadata: { ...o.metadata, generation: (o.metadata.generation ?? 1) + 1 }, spec: spec(u + 2) }));
      const from = passes;
      for (let guard = 0; guard < 200 && !(engine().activeClusterName !== active && engine().pendingClusterName === undefined && engine().phase === 'Running'); guard++) {
        const before = weights();
        await pass();
        if (weights() !== before) routeChanges++;
      }
      upgradePasses += passes - from;
    }
  });
  // Steady passes of a Running service: what a wake-up with nothing to do costs.
  const steadyCpu = await cpuMicros(async () => {
    for (let i = 0; i < STEADY; i++) await pass();
  });
  console.log(`reconcile passes over in-memory fakes (no API server, no HTTP): ${UPGRADES} upgrades of one service (step 25 %, maxSurge 50 %), ${STEADY} steady passes`);
  printTable([
    ['what', 'passes', 'route changes', 'CPU µs/pass', 'CPU ms/route change'],
    ['upgrade', upgradePasses, routeChanges, upgradeCpu / upgradePasses, upgradeCpu / 1000 / Math.max(1, routeChanges)],
    ['steady (Running)', STEADY, 0, steadyCpu / STEADY, ''],
  ]);
  console.log(`(route changes include adding and dropping the pending backend at 0 %; ${fmt(routeChanges / UPGRADES)} per upgrade)`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
