/**
 * The operator process dying, on the test cluster with the real KubeRay and the TEST-ONLY Gateway
 * status writer and Serve fleet (setup in test/support/operator-resilience.ts):
 *
 * - Crash and resume: `node bin/rayshift.js operator` as a child process, SIGKILLed at seeded
 *   random points while nine services run 24 upgrades. Watches in this (never killed) test
 *   process record every route and RayService change; every upgrade must complete, the pending
 *   weights of each upgrade must be exactly the plan's traffic steps (none skipped or repeated), and
 *   at every route change the status persisted before it (the engine writes its intent first) must
 *   name that weight with a pending target capacity at least as large, as must the simulated Serve
 *   dashboard of the pending cluster.
 * - A crash between creating the pending RayCluster and its `<cluster>-serve-svc` (the route
 *   backend), made deterministic by failing that one create.
 *
 * Faults around a running operator (bad input, a kube-apiserver restart) are in
 * operator-resilience-external.test.ts. Needs `npm run controlplane:build` and `npm run build`
 * (the child runs build/).
 */
import pino from 'pino';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { Operator } from '../../operator/operator';
import { HTTPROUTE, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayService, waitFor } from '../support/operator-env';
import { changeCpu, useResilienceSuite } from '../support/operator-resilience';
import { routeBackends } from '../support/route-weights';
import { SERVICE } from '../../lib/spec/object-names';

const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };
import { prng } from '../support/prng';

/**
 * The killer's seeds: `RAYSHIFT_CRASH_SEED` (one), or `RAYSHIFT_CRASH_SEEDS` (a comma-separated list,
 * one run each in its own namespace on the same cluster, for a sweep under load).
 */
const SEEDS = (process.env.RAYSHIFT_CRASH_SEEDS ?? process.env.RAYSHIFT_CRASH_SEED ?? '20240611').split(',').map((s) => Number(s.trim()));

const suite = useResilienceSuite();
const { stoppers, spawnOperator, state } = suite;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** resourceVersions are etcd revisions on this single-etcd control plane, so they order writes across kinds (clients must not rely on that in general). */
const rvOf = (o: KubeObject) => Number(o.metadata.resourceVersion);

// --- crash and resume ----------------------------------------------------------------------------

interface RouteChange {
  readonly rv: number;
  readonly weights: { name: string; weight: number }[];
  /** The pending cluster's Serve target capacity when this process saw the change (100 = full; undefined = no config deployed). */
  readonly serveCapacity?: number;
}

interface StatusEvent {
  readonly rv: number;
  readonly engine: Record<string, any>;
  readonly pendingServiceStatus?: { rayClusterName?: string; targetCapacity?: number; trafficRoutedPercent?: number };
}

interface Upgrade {
  readonly service: string;
  readonly from: string;
  readonly to: string;
  readonly start: number;
  readonly end: number;
}

/** A service that shows no change (status or route) for this long while it is driven has stalled: a liveness failure. */
const STALL_MS = 60_000;

test.each(SEEDS)('SIGKILLed at random points during 24 upgrades of 9 services (seed %i), the operator resumes: every upgrade completes, no traffic step is skipped or repeated, no weight exceeds its capacity', async (SEED) => {
  const { env } = suite;
  const ns = SEEDS.length === 1 ? 'crash' : `crash-${SEED}`;
  await createNamespace(env.admin, ns);
  try {
    await crashAndResume(SEED, ns);
  } finally {
    // The next seed's operators must not find this seed's services (their finalizers need an operator).
    for (const svc of (await env.admin.list(RAYSHIFT_RAYSERVICE, { namespace: ns })).items) {
      await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, String(svc.metadata.name), ns, { metadata: { finalizers: null } }).catch(() => undefined);
    }
    await env.admin.delete(NAMESPACE, ns, undefined, { ignoreNotFound: true });
  }
}, 1_200_000);

/** One seed's run (see the file comment) in namespace `ns`. */
async function crashAndResume(SEED: number, ns: string): Promise<void> {
  const { env } = suite;
  // 7 × 3 upgrades in 4 traffic steps of 25, 2 in steps of 20 cut at the capacity (20, 40, 50, 70, 90, 100), 1 in 10 steps of 10.
  // The expected pending weights are written from the rules, not computed by the planner under test:
  // the backend is added at 0, traffic moves by the step onto the pending cluster's maxSurge capacity
  // (cut at it), then on by the step once the old cluster gave up its share.
  const services = [
    ...['apple', 'banana', 'cherry', 'damson', 'elder', 'fig', 'grape'].map((name) => ({ name, maxSurge: 50, step: 25, rounds: 3, expected: [0, 25, 50, 75, 100] })),
    { name: 'hazel', maxSurge: 50, step: 20, rounds: 2, expected: [0, 20, 40, 50, 70, 90, 100] },
    { name: 'kiwi', maxSurge: 50, step: 10, rounds: 1, expected: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100] },
  ];
  const routes = new Map<string, RouteChange[]>(services.map((s) => [`${s.name}-httproute`, []]));
  const statuses = new Map<string, StatusEvent[]>(services.map((s) => [s.name, []]));
  // Progress as the recorders see it: every status or route change, and the time of each service's last one.
  let changes = 0;
  const lastChange = new Map<string, number>();
  const progressed = (service: string) => {
    changes++;
    lastChange.set(service, Date.now());
  };
  /** Throws when `service` has shown no change for `STALL_MS` (the operator lost track of it). */
  const live = (service: string, what: string) => {
    const quiet = Date.now() - (lastChange.get(service) ?? Date.now());
    if (quiet > STALL_MS) throw new Error(`${service} stalled: no status or route change for ${Math.round(quiet / 1000)} s while waiting for ${what}`);
  };

  // Recorders in this process, which is never killed.
  const routeWatch = env.admin.watch(HTTPROUTE, ns, (e) => {
    const list = routes.get(String(e.object.metadata.name));
    if (!list || e.type === 'delete') return;
    const weights = routeBackends(e.object);
    const last = list[list.length - 1];
    if (last && JSON.stringify(last.weights) === JSON.stringify(weights)) return;
    let serveCapacity: number | undefined;
    if (weights.length === 2) {
      const d = env.fleet.dashboard(ns, weights[1].name.replace(/-serve-svc$/, ''));
      serveCapacity = d?.config() === undefined ? undefined : d.targetCapacity() ?? 100;
    }
    list.push({ rv: rvOf(e.object), weights, serveCapacity });
    progressed(String(e.object.metadata.name).replace(/-httproute$/, ''));
  });
  const statusWatch = env.admin.watch(RAYSHIFT_RAYSERVICE, ns, (e) => {
    const list = statuses.get(String(e.object.metadata.name));
    if (!list || e.type === 'delete') return;
    const status = (e.object.status ?? {}) as { pendingServiceStatus?: StatusEvent['pendingServiceStatus'] };
    list.push({ rv: rvOf(e.object), engine: engineState(e.object), pendingServiceStatus: status.pendingServiceStatus });
    progressed(String(e.object.metadata.name));
  });
  stoppers.push(() => routeWatch.stop(), () => statusWatch.stop());
  routeWatch.start();
  statusWatch.start();
  await Promise.all([routeWatch.waitForSync(), statusWatch.waitForSync()]);

  // The killer: one operator at a time. Mostly SIGKILLed a seeded random 0–1 s after its watches
  // synced and it made a seeded 1–3 changes (so that each life does some work however loaded the
  // machine is: a kill schedule in wall time alone starves the operator on a busy machine),
  // sometimes during startup; restarted at once or after a short pause.
  const random = prng(SEED);
  const kills: { at: number; synced: boolean }[] = [];
  let finished = false;
  let current = spawnOperator(env.cp.kubeconfigPath);
  const waitUntil = async (done: () => boolean, deadline: number) => {
    while (!finished && !done() && Date.now() < deadline) await sleep(20);
  };
  const killer = (async () => {
    while (!finished) {
      const op = current;
      if (random() < 0.15) {
        await waitUntil(() => false, Date.now() + 50 + random() * 600);
      } else {
        await waitUntil(() => op.synced(), Date.now() + 30_000);
        const target = changes + 1 + Math.floor(random() * 3);
        await waitUntil(() => changes >= target, Date.now() + 30_000);
        await waitUntil(() => false, Date.now() + random() * 1000);
      }
      if (finished) break;
      const synced = op.synced();
      op.proc.kill('SIGKILL');
      await op.exited;
      kills.push({ at: Date.now(), synced });
      await sleep(random() * 200);
      current = spawnOperator(env.cp.kubeconfigPath);
    }
  })();

  // The drivers: each service is created, then upgraded `rounds` times, one upgrade after the other.
  const upgrades: Upgrade[] = [];
  const drive = async (s: (typeof services)[number]) => {
    progressed(s.name);
    await env.admin.create(rayService(ns, s.name, { maxSurge: s.maxSurge, step: s.step, interval: 1 }));
    await waitFor(async () => (live(s.name, 'it to serve'), (await state(ns, s.name)).phase === 'Running'), `${s.name} to serve`, 600_000, 100);
    for (let round = 1; round <= s.rounds; round++) {
      const from = (await state(ns, s.name)).activeClusterName as string;
      const start = Date.now();
      await changeCpu(env.admin, ns, s.name, String(round + 1));
      let to = '';
      await waitFor(async () => {
        live(s.name, `upgrade ${round}`);
        const st = await state(ns, s.name);
        if (st.phase !== 'Running' || st.activeClusterName === from || st.pendingClusterName !== undefined) return false;
        to = st.activeClusterName;
        const route = routes.get(`${s.name}-httproute`)!;
        return JSON.stringify(route[route.length - 1]?.weights) === JSON.stringify([{ name: `${to}-serve-svc`, weight: 100 }]);
      }, `upgrade ${round} of ${s.name} to complete`, 600_000, 100);
      upgrades.push({ service: s.name, from, to, start, end: Date.now() });
      // The route's only backend is a Service that exists, owned by its RayCluster.
      const backend = await env.admin.tryGet(SERVICE, `${to}-serve-svc`, ns);
      expect([s.name, round, backend?.metadata.ownerReferences?.[0]?.name]).toEqual([s.name, round, to]);
    }
  };
  const t0 = Date.now();
  try {
    await Promise.all(services.map(drive));
  } catch (e) {
    // Each service's engine state and its route as the API server has it (generation, backends and
    // the Gateway's observedGeneration), so that a stall names its side: the operator or the Gateway.
    const states = await Promise.all(services.map(async (s) => {
      const route = await env.admin.tryGet(HTTPROUTE, `${s.name}-httproute`, ns);
      const parents = ((route?.status as { parents?: { conditions?: { type: string; observedGeneration?: number }[] }[] } | undefined)?.parents ?? []);
      const routeView = route && { generation: route.metadata.generation, resourceVersion: route.metadata.resourceVersion, backends: routeBackends(route), statusGenerations: parents.map((p) => (p.conditions ?? []).map((c) => `${c.type}@${c.observedGeneration}`)) };
      return `${s.name}: ${JSON.stringify(await state(ns, s.name))} route: ${JSON.stringify(routeView)}`;
    }));
    const lastEnd = Math.max(t0, ...upgrades.map((u) => u.end));
    throw new Error(`${(e as Error).message} (seed ${SEED}, ${kills.length} kills, ${kills.filter((k) => k.at > lastEnd).length} since the last upgrade completed)\n${states.join('\n')}\nlast operator log:\n${current.lines.slice(-20).join('\n')}`);
  } finally {
    finished = true;
    await killer;
    // A failed run must not leave this operator running next to the other tests' operators.
    if (upgrades.length < services.reduce((n, s) => n + s.rounds, 0)) {
      current.proc.kill('SIGKILL');
      await current.exited;
    }
  }
  const elapsed = Date.now() - t0;
  // A last, undisturbed operator finishes the deletions of retired clusters.
  await waitFor(async () => (await env.admin.list(RAYCLUSTER, { namespace: ns })).items.length === services.length, 'retired clusters to be deleted', 60_000, 200);
  current.proc.kill('SIGTERM');
  await current.exited;
  // The recorders have handled every change: each watch's cache holds every object's current version.
  const drained = async (informer: typeof routeWatch, type: typeof HTTPROUTE | typeof RAYSHIFT_RAYSERVICE, names: string[]) => {
    for (const name of names) {
      const rv = (await env.admin.get(type, name, ns)).metadata.resourceVersion;
      await waitFor(async () => informer.get(name, ns)?.metadata.resourceVersion === rv, `the ${type.kind} watch to deliver ${name} at resourceVersion ${rv}`);
    }
    await informer.idle();
  };
  await drained(routeWatch, HTTPROUTE, services.map((s) => `${s.name}-httproute`));
  await drained(statusWatch, RAYSHIFT_RAYSERVICE, services.map((s) => s.name));
  routeWatch.stop();
  statusWatch.stop();

  // The kills really landed inside every upgrade, on operators that were working (synced).
  expect(upgrades).toHaveLength(services.reduce((n, s) => n + s.rounds, 0));
  const hit = upgrades.filter((u) => kills.some((k) => k.synced && k.at > u.start && k.at < u.end));
  expect(hit.map((u) => `${u.service}->${u.to}`)).toEqual(upgrades.map((u) => `${u.service}->${u.to}`));
  expect(kills.length).toBeGreaterThanOrEqual(20);

  for (const s of services) {
    const expected = s.expected;
    const history = routes.get(`${s.name}-httproute`)!;
    const events = statuses.get(s.name)!;
    for (const u of upgrades.filter((x) => x.service === s.name)) {
      const P = `${u.to}-serve-svc`;
      const during = history.filter((h) => h.weights.length === 2 && h.weights[1].name === P);
      // Exactly the plan's traffic steps: none skipped, none repeated, the old cluster first, weights summing to 100.
      const weights = during.map((h) => h.weights[1].weight);
      expect({ service: s.name, to: u.to, weights }).toEqual({ service: s.name, to: u.to, weights: expected });
      expect(new Set(weights).size).toBe(weights.length);
      for (const h of during) {
        expect(h.weights[0].name).toBe(`${u.from}-serve-svc`);
        expect(h.weights[0].weight + h.weights[1].weight).toBe(100);
      }
      for (const h of during.filter((x) => x.weights[1].weight > 0)) {
        const w = h.weights[1].weight;
        // The status written last before this route write (the engine persists its intent first)
        // names this very weight, on this pending cluster, with a target capacity that covers it.
        const before = events.filter((e) => e.rv < h.rv).pop();
        expect({ rv: h.rv, w, engine: before?.engine && { pending: before.engine.pendingClusterName, weight: before.engine.pendingWeight, capacityCovers: before.engine.pendingTargetCapacity >= w } })
          .toEqual({ rv: h.rv, w, engine: { pending: u.to, weight: w, capacityCovers: true } });
        expect(before!.pendingServiceStatus?.rayClusterName).toBe(u.to);
        expect(before!.pendingServiceStatus!.targetCapacity!).toBeGreaterThanOrEqual(w);
        // Serve on the pending cluster had acknowledged at least that capacity when the change was seen.
        expect({ rv: h.rv, w, serveCapacity: h.serveCapacity !== undefined && h.serveCapacity >= w }).toEqual({ rv: h.rv, w, serveCapacity: true });
      }
    }
    // Over the whole watched history: no rollback, and the intended pending weight never exceeds the intended pending capacity.
    for (const e of events) {
      expect(e.engine.rollback).toBeUndefined();
      if (e.engine.pendingClusterName !== undefined) expect(e.engine.pendingWeight).toBeLessThanOrEqual(e.engine.pendingTargetCapacity);
    }
  }
  // eslint-disable-next-line no-console
  console.log(`crash test (seed ${SEED}): ${upgrades.length} upgrades in ${(elapsed / 1000).toFixed(1)} s, ${kills.length} SIGKILLs (${kills.filter((k) => k.synced).length} after sync), ${hit.length} upgrades hit; per service (s): ${services.map((s) => `${s.name} ${upgrades.filter((u) => u.service === s.name).map((u) => ((u.end - u.start) / 1000).toFixed(1)).join('/')}`).join(', ')}`);
}

// --- the crash window between a pending RayCluster and its serve Service --------------------------

test('a crash right after creating the pending RayCluster (before its serve Service) still leaves the route backend Service in place', async () => {
  const { env } = suite;
  const ns = 'window';
  await createNamespace(env.admin, ns);
  let injected = 0;
  let armed = false;
  // The admin client, except that while armed the first create of a `-serve-svc` Service fails as if
  // the process had died right after the RayCluster create before it (the next pass sees what a
  // restarted operator would).
  const client = new Proxy(env.admin, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === 'create') {
        return async (obj: KubeObject, opts?: unknown) => {
          if (armed && obj.kind === 'Service' && String(obj.metadata.name).endsWith('-serve-svc') && injected === 0) {
            injected++;
            throw new Error('injected crash before creating the per-cluster serve Service');
          }
          return (v as KubeClient['create']).call(target, obj, opts as never);
        };
      }
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const operator = new Operator({ client, resolver: templateDashboardResolver(env.fleet.template), log: pino({ level: 'silent' }), capacityPollMs: 50 });
  await operator.start();
  try {
    await env.admin.create(rayService(ns, 'grape', { maxSurge: 50, step: 25, interval: 1 }));
    await waitFor(async () => (await state(ns, 'grape')).phase === 'Running', 'grape to serve');
    const from = (await state(ns, 'grape')).activeClusterName as string;
    armed = true;
    await changeCpu(env.admin, ns, 'grape', '2');
    await waitFor(async () => {
      const st = await state(ns, 'grape');
      return st.phase === 'Running' && st.activeClusterName !== from && st.pendingClusterName === undefined;
    }, 'the upgrade to complete', 60_000);
    expect(injected).toBe(1);
    const to = (await state(ns, 'grape')).activeClusterName as string;
    // The route leaves the old cluster right after the promotion's status write.
    await waitFor(async () => JSON.stringify(routeBackends(await env.admin.get(HTTPROUTE, 'grape-httproute', ns))) === JSON.stringify([{ name: `${to}-serve-svc`, weight: 100 }]), 'the route to carry only the new cluster', 30_000);
    const backend = await env.admin.tryGet(SERVICE, `${to}-serve-svc`, ns);
    expect(backend?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'RayCluster', name: to });
  } finally {
    await operator.stop();
  }
}, 120_000);
