/**
 * Coordinated RoleBasedGroup rollouts of RBG v0.6.0's `v1alpha1` groups, executed by rayshift's
 * RBG controller, on a real kube-apiserver with the upstream v0.6.0 CRDs. The TEST-ONLY simulated
 * RBG controller (test/support/simulated-rbg.ts) plays v0.6.0's part here and moves replicas within
 * each role's partition and maxUnavailable: these cases read the group's role status, which the real
 * v0.6.0 writes only when replica counts change. Its real controller (`build-cluster.sh rbg-v06`)
 * runs the coordinated rollouts and rollbacks of cluster-rbg-analysis.test.ts. The same cases run against RBG v0.7.0's real controller in
 * cluster-rbg-operator.test.ts. Groups are synthesized by the `RoleBasedGroup` construct with
 * `executor: 'operator'` and server-side applied by a "gitops" field manager, as Argo CD / Flux
 * would; a template change is a second apply of the same construct with a new image. Every
 * observed change of a group (partition, paused, updated, ready) is recorded from a watch and
 * checked. Needs `npm run controlplane:build`.
 */
import { ChildProcess } from 'node:child_process';
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { crdsOf } from '../../lib/crds/catalog';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { KubeClient } from '../../lib/runtime/kube/client';
import { Informer } from '../../lib/runtime/kube/informer';
import { KubeObject } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA1_TYPE, RbgResourceType } from '../../lib/spec/object-names';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-types';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import { CoordinationRule, RoleBasedGroupVersion } from '../../lib/spec/rbg';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { ControlPlane, startControlPlane } from '../support/controlplane';
import { rbgSkewCheck } from '../support/rbg-skew-check';
import { eventReasons } from '../support/event-reasons';
import { expectCompleteStatusScreen, rayshiftCli, spawnRbgController } from '../support/rbg-child-processes';
import { StateRecorder } from '../support/state-recorder';
import { SimulatedRbgController, simulateUnbuildableRbgRelease } from '../support/simulated-rbg';

const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

/** One observed state of a group: per role, what is written and what the (simulated) RBG controller reports. */
interface Observation {
  readonly generation: number;
  readonly roles: Record<string, { desired: number; partition?: number; paused: boolean; updated: number; ready: number }>;
  readonly coordination?: CoordinationStatus;
}

/** Records every distinct observation of one group through a watch, and resolves waits on them (no polling). */
class GroupRecorder extends StateRecorder<Observation> {
  private readonly informer: Informer;

  constructor(client: KubeClient, type: RbgResourceType, namespace: string, readonly name: string) {
    super(name, 90_000);
    this.informer = client.watch(type, namespace, (e) => {
      if (e.object.metadata.name === name && e.type !== 'delete') this.record(observe(e.object));
    });
  }

  stop(): void {
    this.informer.stop();
  }
}

function observe(group: KubeObject): Observation {
  const statuses = new Map((((group.status as any)?.roleStatuses ?? []) as any[]).map((s) => [s.name, s]));
  const roles: Observation['roles'] = {};
  for (const r of ((group.spec as any).roles ?? []) as any[]) {
    const ru = r.rolloutStrategy?.rollingUpdate ?? {};
    const s = statuses.get(r.name) ?? {};
    roles[r.name] = { desired: r.replicas ?? 1, partition: ru.partition, paused: ru.paused === true, updated: s.updatedReplicas ?? 0, ready: s.readyReplicas ?? 0 };
  }
  return { generation: group.metadata.generation ?? 0, roles, coordination: readRolloutStatus(group)?.coordinations[0] };
}

/** Progress skew of an observation, percent. */
function skewOf(o: Observation): number {
  const p = Object.values(o.roles).map((r) => r.updated / r.desired);
  return (Math.max(...p) - Math.min(...p)) * 100;
}

/** The group as the construct synthesizes it with `executor: 'operator'`. */
function synthesizeGroup(version: RoleBasedGroupVersion, namespace: string, name: string, image: string, replicas: Record<string, number>, rule: Omit<CoordinationRule, 'name' | 'roles'>): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace },
    version,
    executor: 'operator',
    roles: Object.entries(replicas).map(([role, n]) => ({ name: role, replicas: n, template: { spec: { containers: [{ name: role, image }] } } })),
    coordination: [{ name: 'pd', roles: Object.keys(replicas), ...rule }],
  });
  const objects = Testing.synth(chart) as KubeObject[];
  expect(objects.map((o) => o.kind)).toEqual(['RoleBasedGroup']); // no CoordinatedPolicy: upstream must not coordinate too
  return objects[0];
}

/** Builds, applies (as "gitops") and later re-applies a group with a new image. */
class GroupUnderTest {
  readonly recorder: GroupRecorder;
  private changedAt = 0;
  private firstRevision = '';

  constructor(
    private readonly env: VersionEnv,
    readonly name: string,
    private readonly replicas: Record<string, number>,
    private readonly rule: Omit<CoordinationRule, 'name' | 'roles'>,
  ) {
    this.recorder = new GroupRecorder(env.admin, env.type, NS, name);
  }

  /** Creates the group at image v1 and waits until it is complete and armed (every role paused). */
  async create(): Promise<void> {
    await this.env.gitops.apply(synthesizeGroup(this.env.version, NS, this.name, 'sglang:v1', this.replicas, this.rule), { force: true });
    const armed = await this.recorder.until('the first rollout status, armed', (o) => o.coordination?.phase === 'Complete' && Object.values(o.roles).every((r) => r.paused));
    this.firstRevision = armed.coordination!.revision;
  }

  /** Applies image v2 (a new revision of every role); `rollout()` starts here. */
  async changeTemplate(): Promise<void> {
    this.changedAt = this.recorder.history.length;
    await this.env.gitops.apply(synthesizeGroup(this.env.version, NS, this.name, 'sglang:v2', this.replicas, this.rule), { force: true });
  }

  /** Waits until the v2 rollout is complete: every role fully updated and ready, status Complete. */
  complete(timeoutMs?: number): Promise<Observation> {
    return this.recorder.until(
      'the rollout to complete',
      (o) => o.coordination?.phase === 'Complete' && o.coordination.revision !== this.firstRevision && Object.values(o.roles).every((r) => r.updated === r.desired && r.ready === r.desired),
      timeoutMs,
    );
  }

  /** The observations since the template change. */
  rollout(): Observation[] {
    return this.recorder.since(this.changedAt);
  }


  /** How many times the status went from `Complete` to `Progressing` since the template change: one per rollout. */
  rolloutsStarted(): number {
    const phases = this.rollout().map((o) => o.coordination?.phase);
    return phases.filter((p, i) => i > 0 && p === 'Progressing' && phases[i - 1] === 'Complete').length;
  }
}

/** Partitions written while unpaused never rise, per role, over `history`. */
function expectPartitionsNeverRaised(history: readonly Observation[]): void {
  const last = new Map<string, number>();
  for (const o of history) {
    for (const [role, r] of Object.entries(o.roles)) {
      if (r.paused || r.partition === undefined) continue;
      const before = last.get(role);
      if (before !== undefined) expect({ role, partition: r.partition, before, raised: r.partition > before }).toEqual({ role, partition: r.partition, before, raised: false });
      last.set(role, r.partition);
    }
  }
}

/**
 * Every observation passes RBG's own skew check as RBG's unit test computes it (float64, no
 * epsilon: maxSkew plus one replica of the smallest role, in basis points); returns the worst skew, percent.
 */
function expectSkewWithin(history: readonly Observation[], maxSkewPercent: number): number {
  let worst = 0;
  for (const o of history) {
    worst = Math.max(worst, skewOf(o));
    const verdict = rbgSkewCheck(maxSkewPercent, Object.entries(o.roles).map(([name, r]) => ({ name, desired: r.desired, updatedReplicas: r.updated })));
    if (!verdict.ok) expect({ verdict, observation: o }).toEqual({ verdict: { ...verdict, ok: true }, observation: o });
  }
  return worst;
}

interface VersionEnv {
  readonly version: RoleBasedGroupVersion;
  readonly type: RbgResourceType;
  readonly cp: ControlPlane;
  readonly admin: KubeClient;
  readonly gitops: KubeClient;
  readonly simulator: SimulatedRbgController;
  controller?: RbgRolloutController;
}

const NS = 'pd';
/** Per-role (`group/role`) simulator settings: readiness delay, ms; roles that never become ready. */
const READY_DELAY_MS = new Map<string, number>();
const NEVER_READY = new Set<string>();

const VERSIONS: ReadonlyArray<{ release: string; version: RoleBasedGroupVersion; type: RbgResourceType }> = [{ release: 'v0.6.0', version: 'v1alpha1', type: RBG_V1ALPHA1_TYPE }];

describe.each(VERSIONS)('RBG $release ($version)', ({ release, version, type }) => {
  let env: VersionEnv;
  const cleanups: (() => unknown)[] = [];
  const children = new Set<ChildProcess>();

  beforeAll(async () => {
    const crds = await Promise.all(crdsOf('rbg', release).map((c) => resolveCrdFile(c)));
    const cp = await startControlPlane({ crds });
    const admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
    const gitops = KubeClient.fromKubeconfig(cp.kubeconfigPath, { fieldManager: 'gitops' });
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const simulator = simulateUnbuildableRbgRelease(admin, {
      type,
      readyDelayMs: (group, role) => READY_DELAY_MS.get(`${group}/${role}`) ?? 15,
      neverReady: (group, role) => NEVER_READY.has(`${group}/${role}`),
    });
    const controller = new RbgRolloutController({ client: admin, log: SILENT });
    await controller.start();
    env = { version, type, cp, admin, gitops, simulator, controller };
  }, 300_000);

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const c of cleanups) await c();
    await env?.controller?.stop();
    await env?.simulator.stop();
    env?.admin.close();
    env?.gitops.close();
    await env?.cp.stop();
  }, 60_000);

  function group(name: string, replicas: Record<string, number>, rule: Omit<CoordinationRule, 'name' | 'roles'>): GroupUnderTest {
    const g = new GroupUnderTest(env, name, replicas, rule);
    cleanups.push(() => g.recorder.stop());
    return g;
  }

  test('40 prefill / 20 decode at maxSkew 10% complete; every watched state passes the RBG skew check (10% + one decode replica); no partition rises', async () => {
    // Decode replicas take three times as long to become ready, so the roles drift apart between rounds.
    READY_DELAY_MS.set('pd-40-20/decode', 45);
    const g = group('pd-40-20', { prefill: 40, decode: 20 }, { rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%' }, progressDeadlineSeconds: 120 });
    await g.create();
    await g.changeTemplate();
    const done = await g.complete();
    const history = g.rollout();
    const worst = expectSkewWithin(history, 10);
    expectPartitionsNeverRaised(history);
    // One rollout: the hold written at completion (partition = replicas) starts no second one.
    expect(g.rolloutsStarted()).toBe(1);
    expect(worst).toBeGreaterThan(0); // the roles did move at different times: the bound was exercised
    expect(done.coordination!.rounds).toBeGreaterThan(1);
    // Several rounds moved both roles at once (upstream moves one role per round).
    const written = history.filter((o) => Object.values(o.roles).every((r) => !r.paused)).map((o) => o.roles);
    expect(written.some((r, i) => i > 0 && r.prefill.partition !== written[i - 1].prefill.partition && r.decode.partition !== written[i - 1].decode.partition)).toBe(true);
  });

  test('7 prefill / 3 decode at maxSkew 1% complete, passing RBG\'s skew check (1% + one decode replica)', async () => {
    const g = group('pd-7-3', { prefill: 7, decode: 3 }, { rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 }, progressDeadlineSeconds: 120 });
    await g.create();
    await g.changeTemplate();
    const done = await g.complete();
    expectSkewWithin(g.rollout(), 1);
    expectPartitionsNeverRaised(g.rollout());
    expect(done.coordination!.roles.map((r) => [r.name, r.updated, r.partition, r.phase])).toEqual([
      ['prefill', 7, 0, 'Complete'],
      ['decode', 3, 0, 'Complete'],
    ]);
    // `rayshift status rbg/NAME` (the built binary) reads the same status from the group.
    expectCompleteStatusScreen(env.cp.kubeconfigPath, NS);
    const lines = rayshiftCli(env.cp.kubeconfigPath, NS, ['status', 'rbg/pd-7-3', '--watch', '--until-done']).trim().split('\n');
    expect(lines[lines.length - 1]).toMatch(/ pd\/pd-7-3 \S+ Complete \(round \d+\): prefill 7\/7, decode 3\/3 updated; skew 0\.0% ≤ 1%$/);
  });

  test('single-replica roles complete (upstream #307 stalled them)', async () => {
    const g = group('pd-1-1', { prefill: 1, decode: 1 }, { rollingUpdate: { maxSkew: '10%' }, progressDeadlineSeconds: 120 });
    await g.create();
    await g.changeTemplate();
    await g.complete();
    const rollout = g.rollout();
    // Both roles were held (paused) when the new revision landed, then released by a round.
    expect(rollout.some((o) => o.roles.prefill.paused && o.roles.prefill.updated === 0)).toBe(true);
    expectPartitionsNeverRaised(rollout);
  });

  test('a decode role that never becomes ready halts prefill within one round; the deadline fires and the status names decode', async () => {
    const name = 'pd-stuck';
    NEVER_READY.add(`${name}/decode`);
    const g = group(name, { prefill: 40, decode: 20 }, { rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%' }, progressDeadlineSeconds: 3 });
    await g.create();
    await g.changeTemplate();
    const failed = await g.recorder.until('the progress deadline', (o) => o.coordination?.phase === 'Failed');
    expect(failed.coordination).toMatchObject({ reason: 'ProgressDeadlineExceeded', blockingRole: 'decode' });
    expect(failed.coordination!.message).toMatch(/blocked by decode/);
    const stopped = await g.recorder.until('every role paused', (o) => o.coordination?.phase === 'Failed' && Object.values(o.roles).every((r) => r.paused));
    const rollout = g.rollout();
    const decodeFinal = stopped.roles.decode.updated;
    expect(decodeFinal).toBeLessThan(20);
    // From the first observation where decode reached its final count, prefill's partition moved at most once more.
    const from = rollout.findIndex((o) => o.roles.decode.updated === decodeFinal);
    const prefillPartitions = rollout.slice(from).filter((o) => !o.roles.prefill.paused).map((o) => o.roles.prefill.partition);
    expect(new Set(prefillPartitions).size).toBeLessThanOrEqual(2);
    // …and prefill never went past maxSkew + one decode replica of decode's progress.
    expect(stopped.roles.prefill.updated).toBeLessThanOrEqual(Math.floor(40 * (decodeFinal / 20 + 0.1 + 1 / 20)));
    expectSkewWithin(rollout, 10);
    // Events are recorded right after the patch that lands the status.
    const reasons = await eventReasons(env.admin, NS, name, ['RolloutRound', 'ProgressDeadlineExceeded']);
    expect(reasons).toEqual(expect.arrayContaining(['RolloutRound', 'ProgressDeadlineExceeded']));
  });

  test('with rollbackOnDeadline a stuck rollout returns every role to the old revision', async () => {
    const name = 'pd-rollback';
    NEVER_READY.add(`${name}/decode`);
    const g = group(name, { prefill: 10, decode: 5 }, { rollingUpdate: { maxSkew: '20%', maxUnavailable: 1 }, progressDeadlineSeconds: 3, rollbackOnDeadline: true });
    await g.create();
    await g.changeTemplate();
    await g.recorder.until('some prefill replica updated', (o) => o.generation > 1 && o.roles.prefill.updated > 0 && o.roles.prefill.updated < 10);
    const back = await g.recorder.until('the rollback', (o) => o.coordination?.phase === 'RolledBack' && Object.values(o.roles).every((r) => r.updated === 0));
    expect(back.coordination).toMatchObject({ reason: 'ProgressDeadlineExceeded', blockingRole: 'decode' });
    // The last rollback round holds every role paused at partition = replicas (v0.6 has no webhook to refuse it).
    expect(Object.values(back.roles).map((r) => [r.partition, r.paused])).toEqual([
      [10, true],
      [5, true],
    ]);
  });

  test('AffinityScheduling 2:1 Sequential: the batch pods are accepted with their own affinity, and batch 1 rolls only once batch 0 is updated and ready', async () => {
    const name = 'pd-affinity';
    READY_DELAY_MS.set(`${name}/decode-b0`, 60);
    const g = group(name, { prefill: 4, decode: 2 }, { affinityScheduling: { ratios: { prefill: 2, decode: 1 }, batchMode: 'Sequential' }, rollingUpdate: { maxSkew: '50%' }, progressDeadlineSeconds: 120 });
    await g.create();
    const stored = await env.admin.get(type, name, NS);
    for (const role of (stored.spec as any).roles) {
      const pod = role.template;
      const batch = pod.metadata.labels['affinity.rayshift.dev/pd'];
      expect([role.name, batch]).toEqual([role.name, role.name.slice(-2)]);
      expect(pod.spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchLabels).toEqual({ 'rayshift.dev/group': name, 'affinity.rayshift.dev/pd': batch });
    }
    await g.changeTemplate();
    const done = await g.complete();
    expect(done.coordination!.wave).toEqual({ current: 2, total: 2 });
    const rollout = g.rollout();
    const firstOfBatch1 = rollout.find((o) => o.generation > 1 && o.roles['prefill-b1'].updated + o.roles['decode-b1'].updated > 0 && o.roles['prefill-b1'].updated < 2);
    expect(firstOfBatch1).toBeDefined();
    for (const r of ['prefill-b0', 'decode-b0']) expect([r, firstOfBatch1!.roles[r].updated, firstOfBatch1!.roles[r].ready]).toEqual([r, firstOfBatch1!.roles[r].desired, firstOfBatch1!.roles[r].desired]);
  });

  test('AffinityScheduling Parallel: both batches roll at once', async () => {
    const g = group('pd-affinity-par', { prefill: 4, decode: 2 }, { affinityScheduling: { ratios: { prefill: 2, decode: 1 }, batchMode: 'Parallel' }, rollingUpdate: { maxSkew: '50%' }, progressDeadlineSeconds: 120 });
    await g.create();
    await g.changeTemplate();
    await g.complete();
    expect(g.rollout().some((o) => o.roles['prefill-b1'].updated > 0 && o.roles['prefill-b0'].updated < 2)).toBe(true);
  });

  test('removing the executor label hands the group back: armed roles are unpaused and the status annotation goes', async () => {
    const g = group('pd-handover', { prefill: 4, decode: 2 }, { rollingUpdate: { maxSkew: '10%' }, progressDeadlineSeconds: 120 });
    await g.create();
    const from = g.recorder.history.length;
    await env.admin.patchJson(type, 'pd-handover', NS, [{ op: 'remove', path: '/metadata/labels/rayshift.dev~1coordination-executor' }]);
    const back = await g.recorder.until('the hand-over', (o) => o.coordination === undefined && Object.values(o.roles).every((r) => !r.paused), 60_000, from);
    expect(Object.values(back.roles).map((r) => r.partition)).toEqual([0, 0]);
  });

  test('the controller killed mid-rollout (SIGKILL of its process) resumes from the group and never moves a partition backwards', async () => {
    await env.controller?.stop();
    env.controller = undefined;
    const name = 'pd-crash';
    READY_DELAY_MS.set(`${name}/prefill`, 150);
    READY_DELAY_MS.set(`${name}/decode`, 150);
    const g = group(name, { prefill: 40, decode: 20 }, { rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%' }, progressDeadlineSeconds: 120 });
    const spawnController = () => {
      const child = spawnRbgController(env.cp.kubeconfigPath, version);
      children.add(child);
      return child;
    };
    let child = spawnController();
    await g.create();
    await g.changeTemplate();
    const mid = await g.recorder.until('round 2', (o) => (o.coordination?.rounds ?? 0) >= 2 && o.coordination?.phase === 'Progressing');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    children.delete(child);
    expect(Object.values(mid.roles).some((r) => r.updated < r.desired)).toBe(true);
    const atKill = g.recorder.history.length;
    child = spawnController();
    const done = await g.complete(120_000);
    child.kill('SIGKILL');
    children.delete(child);
    expect(done.coordination!.rounds).toBeGreaterThan(mid.coordination!.rounds);
    expect(g.recorder.history.length).toBeGreaterThan(atKill);
    expectPartitionsNeverRaised(g.rollout());
    expectSkewWithin(g.rollout(), 10);
  }, 240_000);
});
