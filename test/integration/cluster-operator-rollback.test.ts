/**
 * KubeRay's incremental-upgrade rollback matrix (`TestRayServiceIncrementalUpgradeRollback`,
 * reference kuberay.md §6) executed by the rayshift operator on the test cluster
 * (test/support/operator-env.ts: the real KubeRay turns its RayClusters into kwok Pods and
 * reports their heads; TEST-ONLY Gateway status writer and Serve dashboards), plus an automatic
 * rollback on the progress deadline. The unhealthy pending head is a real fault: its Pod is
 * deleted after its Node lost the label the head selects, so KubeRay's new head stays Unschedulable. Specs differ by worker CPU: A = 2, B = 500m,
 * C = 600m. Trigger points use the pending traffic share, as KubeRay's suite does: BeforeTraffic 0,
 * Early (0, 30], Middle [30, 70], Late [70, 100). Every case runs concurrently in its own namespace
 * against one environment and one in-process Operator.
 *
 * The test acts inside a weight window without racing the operator: the Gateway status writer holds
 * the acknowledgment of the case's first route version in the window (the operator does not step
 * on before its route is confirmed) until the rollback's spec is written, and BeforeTraffic holds
 * the pending Serve's replicas; the waits wake on the service's watch events, not on a poll.
 */
import { KubeObject } from '../../lib/runtime/kube/types';
import { routeBackends } from '../support/route-weights';
import { OperatorEnv, startOperatorHarness, HTTPROUTE, OperatorHarness, ReportedFailure, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, serveConfig, waitFor } from '../support/operator-env';

let harness: OperatorHarness;
let env: OperatorEnv;
/** The label the UnhealthyPendingCluster case's B head selects; one Node carries it until the fault. */
const POOL = { label: 'rayshift.test/pool', value: 'unhealthy-pending' };
/** Namespaces whose Serve dashboards created from now on hold new replicas in STARTING. */
const heldNamespaces = new Set<string>();
/** Reconcile failures the operator reported, per `namespace/name`. */
const failures: ReportedFailure[] = [];

beforeAll(async () => {
  harness = await startOperatorHarness({
    serve: (ns) => ({ replicaStartDelayMs: 20, manualReplicaStart: heldNamespaces.has(ns) }),
    failures,
  });
  env = harness.env as OperatorEnv;
  await labelPoolNode(POOL.value);
}, 300_000);

/** Sets (or with null removes) the pool label on the cluster's second Node. */
async function labelPoolNode(value: string | null): Promise<void> {
  const r = await env.cp.request('PATCH', `/api/v1/nodes/${env.cluster.nodes[1]}`, { metadata: { labels: { [POOL.label]: value } } }, { contentType: 'application/merge-patch+json' });
  if (r.status !== 200) throw new Error(`labelling ${env.cluster.nodes[1]}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
}

afterAll(async () => {
  await harness?.stop();
});

const CPU = { A: '2', B: '500m', C: '600m' } as const;
type Spec = keyof typeof CPU;
type Trigger = 'BeforeTraffic' | 'Early' | 'Middle' | 'Late';

/** Is the pending traffic share `p` at the trigger point? */
function atTrigger(t: Trigger, p: number): boolean {
  switch (t) {
    case 'BeforeTraffic':
      return p === 0;
    case 'Early':
      return p > 0 && p <= 30;
    case 'Middle':
      return p >= 30 && p <= 70;
    case 'Late':
      return p >= 70 && p < 100;
  }
}

interface Snapshot {
  readonly at: number;
  readonly s: Record<string, any>;
  readonly conditions: { type: string; status: string; reason?: string }[];
}

/** What `recordService` returns. */
interface ServiceRecorder {
  readonly history: Snapshot[];
  /** `waitFor`'s `wake`: calls `recheck` on every event of the service. */
  wake(recheck: () => void): () => void;
  stop(): void;
  synced(): Promise<void>;
}

/** Every status the API server reports for the service, through a watch. */
function recordService(ns: string): ServiceRecorder {
  const history: Snapshot[] = [];
  const listeners = new Set<() => void>();
  const informer = env.admin.watch(RAYSHIFT_RAYSERVICE, ns, (e) => {
    if (e.type === 'delete' || e.object.metadata.name !== ns) return;
    const status = (e.object.status ?? {}) as { conditions?: Snapshot['conditions'] };
    if (engineState(e.object).phase === undefined) return; // not reconciled yet
    history.push({ at: Date.now(), s: engineState(e.object), conditions: status.conditions ?? [] });
    for (const l of listeners) l();
  });
  return {
    history,
    wake(recheck) {
      listeners.add(recheck);
      return () => listeners.delete(recheck);
    },
    stop: () => informer.stop(),
    synced: () => informer.waitForSync(),
  };
}

function condition(snap: { conditions: Snapshot['conditions'] }, type: string) {
  return snap.conditions.find((c) => c.type === type);
}

async function service(ns: string): Promise<KubeObject | undefined> {
  return env.admin.tryGet(RAYSHIFT_RAYSERVICE, ns, ns);
}

async function state(ns: string): Promise<Record<string, any>> {
  return engineState(await service(ns));
}

async function setSpec(ns: string, spec: Spec, extra: Record<string, unknown> = {}, pool?: string): Promise<void> {
  const config = rayClusterConfig(CPU[spec]) as { headGroupSpec: { template: { spec: Record<string, unknown> } } };
  // A merge patch keeps fields it does not mention: a spec without a pool removes the selector, so
  // A→B(pool)→A is A again and not a third spec.
  config.headGroupSpec.template.spec.nodeSelector = pool === undefined ? null : { [POOL.label]: pool };
  await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, ns, ns, { spec: { rayClusterConfig: config, ...extra } });
}

function workerCpu(cluster: KubeObject): string {
  return (cluster.spec as any).workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu;
}

function failuresOf(ns: string): string[] {
  return failures.filter((f) => f.key.startsWith(`${ns}/`)).map((f) => f.err);
}

/**
 * Waits for the upgrade in flight to reach `trigger` in the recorded states from `from` on (every
 * state the watch reported, none skipped); fails if the pending share jumps past it.
 */
async function waitForTrigger(recorder: ServiceRecorder, from: number, trigger: Trigger): Promise<Record<string, any>> {
  let hit: Record<string, any> | undefined;
  let seen = from;
  await waitFor(() => {
    for (; seen < recorder.history.length && hit === undefined; seen++) {
      const s = recorder.history[seen].s;
      if (s.pendingClusterName === undefined) continue;
      if (trigger === 'BeforeTraffic') {
        // The pending Serve is held (STARTING replicas) at its first target capacity: traffic cannot move.
        if (s.pendingWeight !== 0) throw new Error(`traffic moved before the trigger: ${JSON.stringify(s)}`);
        if (s.reason !== 'WaitingForCapacity' || s.pendingTargetCapacity === 0) continue;
      } else if (!atTrigger(trigger, s.pendingWeight)) {
        if (s.pendingWeight === 100 || (trigger !== 'Late' && s.pendingWeight > 70)) throw new Error(`passed the ${trigger} trigger point: ${JSON.stringify(s)}`);
        continue;
      }
      hit = s;
    }
    return hit !== undefined;
  }, `the ${trigger} trigger point`, { timeoutMs: 60_000, everyMs: 1000, wake: recorder.wake });
  return hit!;
}

/**
 * Holds the Gateway's acknowledgment of the service's route from its first version whose pending
 * share (the backends other than `active`'s) is at `trigger`: the operator stays at that share
 * until the returned release.
 */
function holdRouteAtTrigger(ns: string, active: string, trigger: Trigger): () => Promise<void> {
  return env.gateway.holdWhere((route) => {
    if (route.metadata.namespace !== ns || route.metadata.name !== `${ns}-httproute`) return false;
    const backends = routeBackends(route);
    if (backends.length !== 2) return false;
    const pending = backends.filter((b) => b.name !== `${active}-serve-svc`).reduce((sum, b) => sum + b.weight, 0);
    return atTrigger(trigger, pending);
  });
}

interface RollbackCase {
  readonly id: string;
  /** Specs applied after A, in order. */
  readonly sequence: readonly Spec[];
  readonly maxSurge: number;
  readonly step: number;
  readonly interval: number;
  readonly trigger: Trigger;
  /** The pending head becomes unready (its pod deleted) right before the rollback. */
  readonly unhealthyPending?: boolean;
}

async function runRollbackCase(c: RollbackCase): Promise<void> {
  const ns = c.id.toLowerCase();
  await createNamespace(env.admin, ns);
  const recorder = recordService(ns);
  try {
    await rollbackCase(c, ns, recorder);
  } finally {
    recorder.stop();
  }
}

async function rollbackCase(c: RollbackCase, ns: string, recorder: ReturnType<typeof recordService>): Promise<void> {
  await recorder.synced();
  await env.admin.create(rayService(ns, ns, { cpu: CPU.A, maxSurge: c.maxSurge, step: c.step, interval: c.interval }));
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  const original = (await state(ns)).activeClusterName as string;
  if (c.trigger === 'BeforeTraffic') heldNamespaces.add(ns);
  const releaseRoute = c.trigger === 'BeforeTraffic' ? async () => undefined : holdRouteAtTrigger(ns, original, c.trigger);

  // A → B, then the rollback trigger.
  const fromState = recorder.history.length;
  await setSpec(ns, c.sequence[0], {}, c.unhealthyPending ? POOL.value : undefined);
  const atTriggerState = await waitForTrigger(recorder, fromState, c.trigger);
  const pendingB = atTriggerState.pendingClusterName as string;
  expect(pendingB).not.toBe(original);
  if (c.unhealthyPending) {
    // The head's Node loses the label the head selects, then the head Pod is deleted: KubeRay
    // makes a new one that cannot be scheduled and reports HeadPodReady=False.
    await labelPoolNode(null);
    const heads = await env.cp.request('GET', `/api/v1/namespaces/${ns}/pods?labelSelector=ray.io%2Fcluster%3D${pendingB},ray.io%2Fnode-type%3Dhead`);
    for (const p of heads.body.items as { metadata: { name: string } }[]) await env.cp.request('DELETE', `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`);
    await waitFor(async () => {
      const conds = (((await env.admin.tryGet(RAYCLUSTER, pendingB, ns))?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []);
      return conds.some((x) => x.type === 'HeadPodReady' && x.status === 'False');
    }, 'KubeRay to report the pending head not ready', 60_000);
  }
  const revertedAt = Date.now();
  await setSpec(ns, c.sequence[1]);
  await releaseRoute();

  // A → B → A → X: the rollback must have moved traffic back before X is applied.
  if (c.sequence.length > 2) {
    await waitFor(async () => {
      const s = await state(ns);
      return s.rollback !== undefined && s.trafficConfirmed === true && s.activeWeight > atTriggerState.activeWeight;
    }, 'the rollback to move traffic back to the active cluster', { timeoutMs: 60_000, everyMs: 1000, wake: recorder.wake });
    await setSpec(ns, c.sequence[2]);
  }
  const last = c.sequence[c.sequence.length - 1];
  const aba = last === 'A';

  // Convergence: no pending cluster, all traffic on one backend, Upgrading=False, RollingBack removed.
  await waitFor(async () => {
    const svc = await service(ns);
    const s = engineState(svc);
    const conds = ((svc?.status as { conditions?: Snapshot['conditions'] }).conditions ?? []);
    return (
      s.phase === 'Running' &&
      s.pendingClusterName === undefined &&
      s.activeWeight === 100 &&
      (aba || s.activeClusterName !== original) &&
      conds.find((x) => x.type === 'UpgradeInProgress')?.status === 'False' &&
      conds.every((x) => x.type !== 'RollbackInProgress')
    );
  }, 'the service to converge', 120_000);
  const final = await state(ns);
  await waitFor(async () => routeBackends(await env.admin.tryGet(HTTPROUTE, `${ns}-httproute`, ns)).length === 1, 'the route to drop back to one backend');
  expect(routeBackends(await env.admin.get(HTTPROUTE, `${ns}-httproute`, ns))).toEqual([expect.objectContaining({ name: `${final.activeClusterName}-serve-svc`, weight: 100 })]);

  // RollbackInProgress was reported (the rollback cannot start and complete within one status write here).
  const rolling = recorder.history.filter((h) => condition(h, 'RollbackInProgress')?.status === 'True');
  expect(rolling.length).toBeGreaterThan(0);
  expect(rolling[0].at).toBeGreaterThanOrEqual(revertedAt);
  expect(atTrigger(c.trigger, rolling[0].s.pendingWeight)).toBe(true); // the rollback started at the trigger point
  if (c.unhealthyPending) {
    // The unreachable pending cluster's capacity was written off while it still had traffic to give back.
    expect(rolling.some((h) => h.s.pendingTargetCapacity === 0 && h.s.pendingWeight > 0)).toBe(true);
  }
  // Weights always sum to 100, and while rolling back (until the next spec) traffic only moves back.
  for (const h of recorder.history) expect(h.s.activeWeight + h.s.pendingWeight).toBe(100);
  const rollbackWindow = recorder.history.filter((h) => h.at >= rolling[0].at && h.s.rollback !== undefined && h.s.pendingClusterName === pendingB);
  for (let i = 1; i < rollbackWindow.length; i++) expect(rollbackWindow[i].s.activeWeight).toBeGreaterThanOrEqual(rollbackWindow[i - 1].s.activeWeight);

  if (aba) {
    expect(final.activeClusterName).toBe(original);
    await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, pendingB, ns)) === undefined, 'the pending RayCluster to be deleted (NotFound)');
  } else if (last === 'B') {
    expect(final.activeClusterName).toBe(pendingB); // the cancelled rollback resumed the same upgrade
  } else {
    expect([original, pendingB]).not.toContain(final.activeClusterName);
    await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, pendingB, ns)) === undefined, 'the B cluster to be deleted');
  }
  await waitFor(async () => (await env.admin.list(RAYCLUSTER, { namespace: ns })).items.length === 1, 'only the active RayCluster to remain');
  expect(workerCpu(await env.admin.get(RAYCLUSTER, final.activeClusterName, ns))).toBe(CPU[last]);
  expect(env.fleet.dashboard(ns, final.activeClusterName)!.targetCapacity()).toBeNull(); // full capacity
  expect(failuresOf(ns)).toEqual([]);
}

// Longest first: at most 5 run at once (jest's default maxConcurrency).
test.concurrent('ThirdSpec A→B→A→C {maxSurge 25, step 5, interval 1 s (KubeRay: 2)} triggered Middle: C is rolled out after the rollback', () =>
  runRollbackCase({ id: 'ThirdSpec', sequence: ['B', 'A', 'C'], maxSurge: 25, step: 5, interval: 1, trigger: 'Middle' }), 150_000);

test.concurrent('CancelRollback A→B→A→B {maxSurge 25, step 5, interval 1 s (KubeRay: 2)} triggered Middle: the upgrade resumes on the same pending cluster', () =>
  runRollbackCase({ id: 'CancelRollback', sequence: ['B', 'A', 'B'], maxSurge: 25, step: 5, interval: 1, trigger: 'Middle' }), 150_000);

test.concurrent('UnhealthyPendingCluster A→B→A {maxSurge 50, step 25, interval 2 s (KubeRay: 10)} triggered Late after the pending head becomes unready', () =>
  runRollbackCase({ id: 'UnhealthyPendingCluster', sequence: ['B', 'A'], maxSurge: 50, step: 25, interval: 2, trigger: 'Late', unhealthyPending: true }), 150_000);

test.concurrent('LateRollback A→B→A {maxSurge 50, step 25, interval 2 s (KubeRay: 10)} triggered Late', () =>
  runRollbackCase({ id: 'LateRollback', sequence: ['B', 'A'], maxSurge: 50, step: 25, interval: 2, trigger: 'Late' }), 150_000);

test.concurrent('BasicRollback A→B→A {maxSurge 50, step 25, interval 2 s} triggered Middle', () =>
  runRollbackCase({ id: 'BasicRollback', sequence: ['B', 'A'], maxSurge: 50, step: 25, interval: 2, trigger: 'Middle' }), 150_000);

test.concurrent('EarlyRollback A→B→A {maxSurge 50, step 25, interval 2 s} triggered Early', () =>
  runRollbackCase({ id: 'EarlyRollback', sequence: ['B', 'A'], maxSurge: 50, step: 25, interval: 2, trigger: 'Early' }), 150_000);

test.concurrent('FastRollback A→B→A {maxSurge 100, step 100, interval 1 s} triggered BeforeTraffic (the pending Serve held at its first capacity)', () =>
  runRollbackCase({ id: 'FastRollback', sequence: ['B', 'A'], maxSurge: 100, step: 100, interval: 1, trigger: 'BeforeTraffic' }), 150_000);

test.concurrent('progress deadline (lowered to 3 s once the failure is seen): a pending cluster whose Serve app never deploys (DEPLOY_FAILED) is rolled back automatically; reason ProgressDeadlineExceeded; 100% back on the original cluster, whose Serve config is untouched', async () => {
  const ns = 'deadline';
  await createNamespace(env.admin, ns);
  const recorder = recordService(ns);
  try {
    await deadlineCase(ns, recorder);
  } finally {
    recorder.stop();
  }
}, 60_000);

async function deadlineCase(ns: string, recorder: ReturnType<typeof recordService>): Promise<void> {
  await recorder.synced();
  // The default deadline (600 s) while the pending cluster starts and its app fails: a 3 s deadline
  // from the start would race the head's start (on a loaded machine it can pass before the Serve
  // config is even sent, a rollback for another cause). Lowered once the failure is seen.
  await env.admin.create(rayService(ns, ns, { cpu: CPU.A, maxSurge: 50, step: 25, interval: 1 }));
  await waitFor(async () => (await state(ns)).phase === 'Running', 'the first cluster to serve');
  const original = (await state(ns)).activeClusterName as string;
  const originalConfig = env.fleet.dashboard(ns, original)!.config();

  const changedAt = Date.now();
  const fromState = recorder.history.length;
  await setSpec(ns, 'B', { serveConfigV2: serveConfig(4, 'missing_module.app:build') });
  let pending = '';
  await waitFor(() => {
    pending = recorder.history.slice(fromState).find((h) => h.s.pendingClusterName !== undefined)?.s.pendingClusterName ?? '';
    const apps = pending === '' ? undefined : (env.fleet.dashboard(ns, pending)?.details().applications as Record<string, { status: string }> | undefined);
    return apps?.app?.status === 'DEPLOY_FAILED' || `pending cluster ${pending || '(none yet)'}, its app ${apps?.app?.status ?? 'not deployed'}`;
  }, 'the pending cluster\'s Serve app to fail', { wake: recorder.wake, explain: () => `states: ${recorder.history.map((h) => `${h.s.phase}/${h.s.reason}/${h.s.pendingClusterName ?? '-'}`).join(' ')}` });
  await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, ns, ns, { spec: { rayshift: { progressDeadlineSeconds: 3 } } });
  await waitFor(async () => {
    const s = await state(ns);
    return s.phase === 'Running' && s.pendingClusterName === undefined && s.reason === 'ProgressDeadlineExceeded';
  }, 'the automatic rollback to complete', 30_000);
  const rolledBackAt = Date.now();
  await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, pending, ns)) === undefined, 'the pending RayCluster to be deleted');

  const s = await state(ns);
  expect(s).toMatchObject({ activeClusterName: original, activeWeight: 100, activeTargetCapacity: 100 });
  expect(rolledBackAt - changedAt).toBeGreaterThanOrEqual(3000);
  const svc = (await service(ns))!;
  expect((svc.status as { reason: string }).reason).toBe('ProgressDeadlineExceeded');
  const rolling = recorder.history.filter((h) => condition(h, 'RollbackInProgress')?.status === 'True');
  expect(rolling.length).toBeGreaterThan(0);
  expect(condition(rolling[0], 'RollbackInProgress')?.reason).toBe('ProgressDeadlineExceeded');
  // Traffic never reached the failed cluster and is all back on the original one.
  for (const h of recorder.history) expect(h.s.pendingWeight ?? 0).toBe(0);
  expect(routeBackends(await env.admin.get(HTTPROUTE, `${ns}-httproute`, ns))).toEqual([expect.objectContaining({ name: `${original}-serve-svc`, weight: 100 })]);
  const dashboard = env.fleet.dashboard(ns, original)!;
  expect(dashboard.targetCapacity()).toBeNull();
  expect(dashboard.config()).toEqual(originalConfig);
  // The timed-out spec is not retried while it stays the goal: no new pending cluster.
  expect((await env.admin.list(RAYCLUSTER, { namespace: ns })).items.map((c) => c.metadata.name)).toEqual([original]);
  expect(failuresOf(ns)).toEqual([]);
}
