/**
 * The RayService reconciler (observe → engine → execute → persist) driven through its ports with
 * in-memory fakes: no API server, no dashboard, no network. Each case asserts the exact writes a
 * pass makes, in order, and the actions it reports; the engine's decisions themselves are
 * unit-tested in test/engine/pass-rules.test.ts and the engine suites.
 */
import { KubeApiError } from '../../lib/runtime/kube/errors';
import { KubeObject } from '../../lib/runtime/kube/types';
import { FINALIZER, HTTPROUTE, RAYCLUSTER, RAYSHIFT_RAYSERVICE, SERVE_CONFIG_ANNOTATION } from '../../lib/spec/object-names';
import { RayServiceReconciler, RayServiceReconcilerOptions, ReconcileResult } from '../../lib/runtime/rayservice/reconciler';
import * as rayServiceSpec from '../../lib/spec/rayservice';
import { rayService } from '../support/operator-env';
import { FakeKube, FakeWrite } from './support/fake-kube';
import { FakeServe } from './support/fake-serve';
import { gatewayAccepts, headsReady } from './support/rayservice-world';

const NS = 'ns';
const NAME = 'svc';
const INTERVAL_MS = 60_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

/** One pass: its result, and the writes it made as `verb Kind/name` and in full. */
interface Pass {
  readonly res: ReconcileResult;
  readonly log: string[];
  readonly writes: FakeWrite[];
}

/** A reconciler over fakes, with a clock the test moves. */
function world(ownerOf?: RayServiceReconcilerOptions['ownerOf']) {
  const kube = new FakeKube();
  const serve = new FakeServe();
  const clock = { now: T0 };
  const reconciler = new RayServiceReconciler({ client: kube, serve, now: () => clock.now, ...(ownerOf ? { ownerOf } : {}) });
  const pass = async (): Promise<Pass> => {
    const from = kube.writes.length;
    const res = await reconciler.reconcile(NS, NAME);
    return { res, log: kube.writeLog(from), writes: kube.writes.slice(from) };
  };
  /** KubeRay and the Gateway implementation catch up with the last writes. */
  const controllersCatchUp = () => {
    headsReady(kube, NS);
    gatewayAccepts(kube, NS);
  };
  const svc = () => kube.peek(RAYSHIFT_RAYSERVICE, NAME, NS)!;
  const route = () => kube.peek(HTTPROUTE, `${NAME}-httproute`, NS)!;
  const setSpec = (opts: Parameters<typeof rayService>[2]) =>
    kube.mutate(RAYSHIFT_RAYSERVICE, NAME, NS, (o) => ({ ...o, spec: rayService(NS, NAME, { interval: INTERVAL_MS / 1000, ...opts }).spec }));
  kube.seed(rayService(NS, NAME, { interval: INTERVAL_MS / 1000 }));
  return { kube, serve, clock, pass, controllersCatchUp, svc, route, setSpec };
}

type World = ReturnType<typeof world>;

function engineState(o: KubeObject): Record<string, unknown> {
  return (o.status as { engineState: Record<string, unknown> }).engineState;
}

/** The route's managed backends as `name=weight`. */
function weights(route: KubeObject): string[] {
  const rule = (route.spec as { rules: { backendRefs: { name: string; weight: number }[] }[] }).rules[0];
  return rule.backendRefs.map((b) => `${b.name}=${b.weight}`);
}

/** Brings a new service up to Running on its first cluster; returns that cluster's name. */
async function bringUp(w: World): Promise<string> {
  const first = await w.pass();
  w.controllersCatchUp();
  await w.pass();
  await w.pass();
  w.controllersCatchUp();
  return String(engineState(w.svc()).activeClusterName ?? (first.res.actions[0] as { name: string }).name);
}

/** From Running, changes the spec and drives the upgrade through its first traffic step (75/25) and that step's confirmation. */
async function firstTrafficStep(w: World): Promise<{ active: string; pending: string; confirmed: Pass }> {
  const active = await bringUp(w);
  w.setSpec({ cpu: '2' });
  const created = await w.pass();
  const pending = (created.res.actions[0] as { name: string }).name;
  w.controllersCatchUp();
  await w.pass(); // the pending cluster joins the route at weight 0
  w.controllersCatchUp();
  await w.pass(); // its Serve goes to 50% capacity
  w.clock.now += 1_000;
  const step = await w.pass(); // 75/25
  expect(step.res.actions).toEqual([{ type: 'setTrafficWeights', activeCluster: active, active: 75, pendingCluster: pending, pending: 25 }]);
  w.controllersCatchUp();
  w.clock.now += 1_000;
  return { active, pending, confirmed: await w.pass() };
}

test('a new service: the first pass adds the finalizer, persists its status, then creates its first RayCluster and Service; later passes deploy Serve and create the Gateway and route', async () => {
  const w = world();
  const first = await w.pass();
  const cluster = (first.res.actions[0] as { name: string }).name;
  expect(first.res.actions).toEqual([{ type: 'createPendingCluster', name: cluster, specHash: expect.any(String), startFromMinReplicas: false }]);
  expect(first.log).toEqual(['patchJson RayService/svc', 'applyStatus RayService/svc', `create RayCluster/${cluster}`, `create Service/${cluster}-serve-svc`]);
  expect(first.res.writes).toBe(4);
  expect(first.res.requeueAt).toBe(T0);
  expect(w.svc().metadata.finalizers).toEqual([FINALIZER]);
  expect(engineState(w.svc())).toMatchObject({ phase: 'Initializing', reason: 'CreatingCluster', pendingClusterName: cluster });
  const rc = w.kube.peek(RAYCLUSTER, cluster, NS)!;
  expect(rc.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'RayService', name: NAME, uid: w.svc().metadata.uid, controller: true })]);

  w.controllersCatchUp();
  const deploy = await w.pass();
  expect(deploy.res.actions).toEqual([{ type: 'setTargetCapacity', cluster: 'pending', clusterName: cluster, percent: 100 }]);
  expect(deploy.log).toEqual(['applyStatus RayService/svc', `patchMerge RayCluster/${cluster}`]);
  expect(w.serve.puts).toEqual([{ cluster, targetCapacity: null }]);
  expect(w.kube.peek(RAYCLUSTER, cluster, NS)!.metadata.annotations?.[SERVE_CONFIG_ANNOTATION]).toContain('import_path');

  const serving = await w.pass();
  expect(serving.res.actions).toEqual([
    { type: 'setTrafficWeights', activeCluster: cluster, active: 100, pending: 0 },
    { type: 'promote', cluster },
  ]);
  expect(serving.log).toEqual(['applyStatus RayService/svc', 'create Gateway/svc-gateway', 'create HTTPRoute/svc-httproute', 'apply Service/svc-head-svc', 'apply Service/svc-serve-svc']);
  expect(serving.res.writes).toBe(5);
  expect(weights(w.route())).toEqual([`${cluster}-serve-svc=100`]);
  expect(engineState(w.svc())).toMatchObject({ phase: 'Running', activeClusterName: cluster });
  expect(engineState(w.svc()).pendingClusterName).toBeUndefined();

  w.controllersCatchUp();
  const idle = await w.pass();
  expect(idle).toMatchObject({ log: [], res: { actions: [], writes: 0, requeueAt: undefined } });
});

test('a spec change starts an incremental upgrade: the pending cluster and its Service are created from minReplicas, then join the route at weight 0', async () => {
  const w = world();
  const active = await bringUp(w);
  w.setSpec({ cpu: '2' });
  const start = await w.pass();
  const pending = (start.res.actions[0] as { name: string }).name;
  expect(pending).not.toBe(active);
  expect(start.res.actions).toEqual([{ type: 'createPendingCluster', name: pending, specHash: expect.any(String), startFromMinReplicas: true }]);
  expect(start.log).toEqual(['applyStatus RayService/svc', `create RayCluster/${pending}`, `create Service/${pending}-serve-svc`]);
  expect(engineState(w.svc())).toMatchObject({ phase: 'Upgrading', activeClusterName: active, pendingClusterName: pending, activeWeight: 100, pendingWeight: 0 });

  w.controllersCatchUp();
  const join = await w.pass();
  expect(join.res.actions).toEqual([{ type: 'setTrafficWeights', activeCluster: active, active: 100, pendingCluster: pending, pending: 0 }]);
  expect(join.log).toEqual(['applyStatus RayService/svc', 'patchJson HTTPRoute/svc-httproute']);
  expect(weights(w.route())).toEqual([`${active}-serve-svc=100`, `${pending}-serve-svc=0`]);
});

test('a confirmed traffic step is held in memory: before the interval is up a pass writes nothing and reports when the next step is due', async () => {
  const w = world();
  const { confirmed } = await firstTrafficStep(w);
  expect(confirmed.res.actions).toEqual([]);
  expect(confirmed.log).toEqual([]);
  expect(confirmed.res.status).toMatchObject({ reason: 'WaitingForInterval', trafficConfirmed: true, lastTrafficMigratedTime: w.clock.now });
  const due = w.clock.now + INTERVAL_MS;
  expect(confirmed.res.requeueAt).toBe(due);
  // The stored status still shows the step unconfirmed: the confirmation waits for the next write.
  expect(engineState(w.svc())).toMatchObject({ trafficConfirmed: false });

  w.clock.now = due - 1;
  const early = await w.pass();
  expect(early).toMatchObject({ log: [], res: { actions: [], writes: 0, requeueAt: due } });
});

test("each side's Serve replicas are in the status; a change of them alone is written, even in a pass that would hold a confirmation", async () => {
  const w = world();
  const { pending, confirmed } = await firstTrafficStep(w);
  expect(confirmed.log).toEqual([]);
  const sides = () => {
    const st = w.svc().status as Record<string, Record<string, unknown>>;
    return [st.activeServiceStatus, st.pendingServiceStatus].map((s) => `${String(s.rayClusterName)} ${String(s.readyReplicas)}/${String(s.targetReplicas)}`);
  };
  const active = String(engineState(w.svc()).activeClusterName);
  // 4 replicas at full capacity; the pending cluster runs at 50 %.
  expect(sides()).toEqual([`${active} 4/4`, `${pending} 2/2`]);
  w.serve.setStarting(NS, pending, 1);
  w.clock.now += 1_000;
  const restarted = await w.pass();
  expect(restarted.log).toEqual([`applyStatus RayService/${NAME}`]);
  expect(restarted.res.actions).toEqual([]);
  expect(sides()).toEqual([`${active} 4/4`, `${pending} 1/2`]);
});

test('a change of only the Serve replicas shown is written at most once per 5 s after the last status write: the pass that sees it early writes nothing and asks to run again then', async () => {
  const w = world();
  const active = await bringUp(w);
  await w.pass();
  const shown = () => {
    const st = w.svc().status as Record<string, Record<string, unknown>>;
    return `${String(st.activeServiceStatus.readyReplicas)}/${String(st.activeServiceStatus.targetReplicas)} at ${String(st.lastUpdateTime)}`;
  };
  expect(shown()).toBe('4/4 at 2026-01-01T00:00:00.000Z');
  w.serve.setStarting(NS, active, 1); // a replica of the serving cluster restarts
  w.clock.now = T0 + 1_000;
  const early = await w.pass();
  expect(early.log).toEqual([]);
  expect(early.res.requeueAt).toBe(T0 + 5_000);
  expect(shown()).toBe('4/4 at 2026-01-01T00:00:00.000Z');
  w.clock.now = T0 + 5_000;
  const due = await w.pass();
  expect(due.log).toEqual([`applyStatus RayService/${NAME}`]);
  expect(shown()).toBe('3/4 at 2026-01-01T00:00:05.000Z');
  // Long after that write, the next change is written by the pass that sees it.
  w.serve.setStarting(NS, active, 0);
  w.clock.now = T0 + 60_000;
  const later = await w.pass();
  expect(later.log).toEqual([`applyStatus RayService/${NAME}`]);
  expect(shown()).toBe('4/4 at 2026-01-01T00:01:00.000Z');
});

test('once the interval is up one traffic step writes the route weights and the status once, the status carrying the held confirmation', async () => {
  const w = world();
  const { active, pending } = await firstTrafficStep(w);
  const confirmedAt = w.clock.now;
  const due = confirmedAt + INTERVAL_MS;
  w.clock.now = due + 5;
  const step = await w.pass();
  expect(step.res.actions).toEqual([{ type: 'setTrafficWeights', activeCluster: active, active: 50, pendingCluster: pending, pending: 50 }]);
  expect(step.log).toEqual(['applyStatus RayService/svc', 'patchJson HTTPRoute/svc-httproute']);
  expect(step.res).toMatchObject({ writes: 2, trafficStepDueAt: due });
  expect(weights(w.route())).toEqual([`${active}-serve-svc=50`, `${pending}-serve-svc=50`]);
  expect(engineState(w.svc())).toMatchObject({ activeWeight: 50, pendingWeight: 50, lastTrafficMigratedTime: confirmedAt });
  // The route patch is guarded by what it read: the weights it replaces are tested first.
  expect((step.writes[1].body as { op: string }[]).map((op) => op.op)).toContain('test');
});

test('a route moved by another writer between the read and the patch: the guard refuses the patch, and the reconciler re-reads and writes the step again', async () => {
  const w = world();
  const { active, pending } = await firstTrafficStep(w);
  w.kube.beforeNext('patchJson', 'HTTPRoute', () =>
    w.kube.mutate(HTTPROUTE, `${NAME}-httproute`, NS, (o) => {
      // Someone reorders the backends: the patch's `test` ops on their names no longer hold.
      (o.spec as { rules: { backendRefs: unknown[] }[] }).rules[0].backendRefs.reverse();
      return o;
    }),
  );
  w.clock.now += INTERVAL_MS;
  const step = await w.pass();
  expect(step.log).toEqual(['applyStatus RayService/svc', 'patchJson HTTPRoute/svc-httproute', 'patchJson HTTPRoute/svc-httproute']);
  expect(step.res.writes).toBe(2);
  // The second patch was planned from a fresh read: its guard names the backends in their new order.
  expect(step.writes[2].body).toContainEqual({ op: 'test', path: '/spec/rules/0/backendRefs/0/name', value: `${pending}-serve-svc` });
  expect(weights(w.route())).toEqual([`${pending}-serve-svc=50`, `${active}-serve-svc=50`]);
});

test('a route patch the API server refuses as schema-invalid (422 with field causes) is not a conflict: it is patched once, not retried, and the error fails the pass', async () => {
  const w = world();
  await firstTrafficStep(w);
  const invalid = new KubeApiError({ statusCode: 422, reason: 'Invalid', message: 'HTTPRoute "svc-httproute" is invalid', details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec.rules[0].backendRefs[1].weight' }] }, method: 'PATCH', path: 'fake/HTTPRoute' });
  w.kube.beforeNext('patchJson', 'HTTPRoute', () => {
    throw invalid;
  });
  w.clock.now += INTERVAL_MS;
  const from = w.kube.writes.length;
  await expect(w.pass()).rejects.toBe(invalid);
  expect(w.kube.writeLog(from)).toEqual(['applyStatus RayService/svc', 'patchJson HTTPRoute/svc-httproute']);
});

test('a refused status write fails the pass before any action, and the next pass writes the status and carries the action out', async () => {
  const w = world();
  w.kube.failNext('applyStatus', 'RayService', 409, 'Conflict');
  const refused = w.pass();
  await expect(refused).rejects.toBeInstanceOf(KubeApiError);
  await expect(refused).rejects.toMatchObject({ statusCode: 409 });
  expect(w.kube.writeLog()).toEqual(['patchJson RayService/svc', 'applyStatus RayService/svc']);
  expect(w.kube.listNow(RAYCLUSTER, NS)).toEqual([]);
  expect(w.svc().status).toBeUndefined();

  const retry = await w.pass();
  const cluster = (retry.res.actions[0] as { name: string }).name;
  expect(retry.log).toEqual(['applyStatus RayService/svc', `create RayCluster/${cluster}`, `create Service/${cluster}-serve-svc`]);
  expect(w.svc().metadata.finalizers).toEqual([FINALIZER]);
});

test('deletion mid-upgrade puts all traffic on the active cluster, then releases the finalizer', async () => {
  const w = world();
  const { active, pending } = await firstTrafficStep(w);
  w.kube.mutate(RAYSHIFT_RAYSERVICE, NAME, NS, (o) => ({ ...o, metadata: { ...o.metadata, deletionTimestamp: new Date(w.clock.now).toISOString() } }));
  const gone = await w.pass();
  expect(gone.log).toEqual(['patchJson HTTPRoute/svc-httproute', 'patchJson RayService/svc']);
  expect(gone.res).toEqual({ actions: [], writes: 2 });
  // The pending cluster's backend leaves the route: it could serve nothing once its RayCluster goes.
  expect(weights(w.route())).toEqual([`${active}-serve-svc=100`]);
  expect(pending).not.toBe(active);
  expect(w.svc().metadata.finalizers).toEqual([]);
  // The finalizer release is guarded by the resourceVersion the pass read.
  expect(gone.writes[1].body).toEqual([
    { op: 'test', path: '/metadata/resourceVersion', value: expect.any(String) },
    { op: 'replace', path: '/metadata/finalizers', value: [] },
  ]);

  const after = await w.pass();
  expect(after).toMatchObject({ log: [], res: { actions: [], writes: 0 } });
});

test('a paused service writes nothing but its status, even when a traffic step is due', async () => {
  const w = world();
  const { active, pending } = await firstTrafficStep(w);
  w.setSpec({ cpu: '2', extensions: { paused: true } });
  w.clock.now += INTERVAL_MS + 5;
  const putsBefore = w.serve.puts.length;
  const paused = await w.pass();
  expect(paused.res.actions).toEqual([]);
  expect(paused.log).toEqual(['applyStatus RayService/svc']);
  expect(engineState(w.svc())).toMatchObject({ phase: 'Paused', activeClusterName: active, pendingClusterName: pending, activeWeight: 75, pendingWeight: 25 });
  expect(weights(w.route())).toEqual([`${active}-serve-svc=75`, `${pending}-serve-svc=25`]);

  w.clock.now += INTERVAL_MS;
  const still = await w.pass();
  expect(still.res.actions).toEqual([]);
  expect(still).toMatchObject({ log: [], res: { actions: [], writes: 0 } });
  expect(w.serve.puts.length).toBe(putsBefore);
});

test('the spec is validated again only when it (or the annotations) changed: passes over an unchanged spec reuse the verdict, and a spec made invalid is rejected by the next pass', async () => {
  const validate = jest.spyOn(rayServiceSpec, 'validateRayService');
  try {
    const w = world();
    await bringUp(w); // four passes, one spec
    expect(validate).toHaveBeenCalledTimes(1);
    w.setSpec({ cpu: '2' });
    await w.pass();
    expect(validate).toHaveBeenCalledTimes(2);
    w.kube.mutate(RAYSHIFT_RAYSERVICE, NAME, NS, (o) => ({ ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, 'ray.io/initializing-timeout': 'soon' } } }));
    const rejected = await w.pass();
    expect(validate).toHaveBeenCalledTimes(3);
    expect(rejected.res.actions).toEqual([]);
    expect(w.svc().status).toMatchObject({ phase: 'Invalid', reason: 'ValidationFailed' });
    expect(String((w.svc().status as { message: string }).message)).toContain('ray.io/initializing-timeout');
  } finally {
    validate.mockRestore();
  }
});

test('status.owner names the replica working on the service: every status write carries it, and a replica taking over rewrites the status once', async () => {
  let replica = 'replica-a';
  const asked: string[] = [];
  const w = world((namespace, name) => {
    asked.push(`${namespace}/${name}`);
    return { replica, shard: 3 };
  });
  await bringUp(w);
  expect((w.svc().status as Record<string, unknown>).owner).toEqual({ replica: 'replica-a', shard: 3 });
  expect(asked).toContain(`${NS}/${NAME}`);
  const steady = await w.pass();
  expect(steady.log).toEqual([]);

  replica = 'replica-b'; // replica-a died; replica-b holds shard 3 now
  const takeover = await w.pass();
  expect(takeover.log).toEqual(['applyStatus RayService/svc']);
  expect((w.svc().status as Record<string, unknown>).owner).toEqual({ replica: 'replica-b', shard: 3 });
  expect(engineState(w.svc())).toMatchObject({ phase: 'Running' });
  const after = await w.pass();
  expect(after.log).toEqual([]);
});

test('without an owner (the Pulumi provider, a test), the status has no owner field', async () => {
  const w = world();
  await bringUp(w);
  expect(w.svc().status).not.toHaveProperty('owner');
});
