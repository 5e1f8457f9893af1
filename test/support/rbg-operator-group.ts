/**
 * One RoleBasedGroup under rayshift's operator (executor `operator`) on the test cluster's real RBG
 * controller (test/support/cluster.ts; v0.7.0 unless the context names another release): synthesized by the `RoleBasedGroup` construct, applied by a
 * "gitops" field manager at v1 and again with new images, its RoleInstanceSets recorded from a
 * watch (the true counts, which RBG's own `roleStatuses` let go stale) and the partitions the
 * operator writes on the group; plus the checks the cluster tests make of a rollout (RBG's skew
 * check at every state, partitions never raised). Test support, not the package's API.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { FIELD_MANAGER, KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { RbgResourceType, STATEFUL_SET_TYPE } from '../../lib/spec/object-names';
import { workloadHonoursPaused } from '../../lib/spec/rbg-releases';
import { CoordinationStatus, readRolloutStatus } from '../../lib/runtime/rbg/status';
import { workloadStatus } from '../../lib/runtime/rbg/workloads';
import type { JsonObject } from '../../lib/spec/read';
import { CoordinationRule } from '../../lib/spec/rbg';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { getWhen, startTestCluster, TestCluster } from './cluster';
import type { ClusterRbg } from './cluster-files';
import { RBG_RELEASES, ReleaseUnderTest } from './rbg-releases';
import { rbgSkewCheck } from './rbg-skew-check';
import { GroupState, WorkloadRecorder } from './rbg-workload-recorder';
import { PodRevisions, watchStatefulSetPodRevisions } from './statefulset-pod-revisions';
import { waitFor } from './wait-at-most';

/** A coordination rule without its name and roles (the group's roles, rule `pd`). */
export type Rule = Omit<CoordinationRule, 'name' | 'roles'>;

/** Where the groups live: the cluster, its admin and "gitops" clients, the namespace. */
export interface GroupContext {
  readonly cluster: TestCluster;
  readonly admin: KubeClient;
  readonly gitops: KubeClient;
  readonly namespace: string;
  /** Watches to stop after the suite. */
  readonly watches: { stop(): void }[];
  /** The RBG release the cluster runs. @default v0.7.0 */
  readonly release?: ReleaseUnderTest;
}

/** The release of `ctx` (v0.7.0 when it names none). */
function releaseOf(ctx: GroupContext): ReleaseUnderTest {
  return ctx.release ?? RBG_RELEASES[0];
}

/** The images of one apply: one for every role, or one per role (a role left out gets `default`). */
export interface Images {
  readonly default: string;
  readonly byRole?: Readonly<Record<string, string>>;
  /** `nvidia.com/gpu` each replica asks for (its limit; a kwok Node advertises 8). @default none */
  readonly gpus?: number;
  /** Each replica Pod's `affinity`. @default none */
  readonly affinity?: Readonly<Record<string, unknown>>;
}

/** The group as the construct synthesizes it with `executor` (default `'operator'`) for `release` (no CoordinatedPolicy: RBG must not coordinate too). */
export function synthesizeOperatorGroup(namespace: string, name: string, images: Images, replicas: Record<string, number>, rule: Rule, release: ReleaseUnderTest = RBG_RELEASES[0], executor: 'operator' | 'pulumi' = 'operator'): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace },
    version: release.version,
    rbgVersion: release.rbgVersion,
    executor,
    roles: Object.entries(replicas).map(([role, n]) => ({
      name: role,
      replicas: n,
      template: {
        spec: {
          containers: [{ name: role, image: images.byRole?.[role] ?? images.default, ...(images.gpus !== undefined ? { resources: { limits: { 'nvidia.com/gpu': String(images.gpus) } } } : {}) }],
          ...(images.affinity !== undefined ? { affinity: images.affinity } : {}),
        },
      },
    })),
    coordination: [{ name: 'pd', roles: Object.keys(replicas), ...rule }],
  });
  const objects = Testing.synth(chart) as KubeObject[];
  if (objects.map((o) => o.kind).join() !== 'RoleBasedGroup') throw new Error(`expected one RoleBasedGroup, synthesized ${objects.map((o) => o.kind).join(', ')}`);
  return objects[0];
}

/** The operator's coordination status on group `name`, once `check` passes for it. */
export async function coordinationWhen(ctx: GroupContext, name: string, what: string, check: (c: CoordinationStatus | undefined) => boolean, timeoutMs = 180_000): Promise<CoordinationStatus> {
  const type = releaseOf(ctx).groupType;
  const path = `/apis/${type.apiVersion}/namespaces/${ctx.namespace}/${type.plural}/${name}`;
  const group = await getWhen(ctx.cluster, path, `${name}: ${what}`, (body, status) => {
    if (status !== 200) return `HTTP ${status}`;
    const c = readRolloutStatus(body)?.coordinations[0];
    return check(c) ? undefined : `coordination ${JSON.stringify(c)}`;
  }, timeoutMs);
  return readRolloutStatus(group)!.coordinations[0];
}

/**
 * Checks, once the operator reported a rollout Complete, that the workload of every role in `roles`
 * whose own partition is 0 has made its update revision its current one. The operator pauses the
 * roles at Complete; a RoleInstanceSet paused before it advanced never does (RBG v0.7.0), and a
 * later rollout back to the old template then moves no replica.
 */
export async function expectCurrentRevisionsRecorded(ctx: GroupContext, name: string, roles: readonly string[]): Promise<void> {
  const type = releaseOf(ctx).workloadType;
  const rows = await Promise.all(
    roles.map(async (role) => {
      const status = workloadStatus((await ctx.admin.get(type, `${name}-${role}`, ctx.namespace)) as unknown as JsonObject);
      return { role, partition: status.partition ?? 0, currentRevision: status.currentRevision, updateRevision: status.updateRevision };
    }),
  );
  const lagging = rows.filter((r) => r.partition === 0 && r.currentRevision !== r.updateRevision);
  expect(lagging).toEqual([]);
}

/** Polls group `name`'s coordination status until `done` holds; returns every distinct status seen, in order. */
export async function coordinationStatuses(admin: KubeClient, type: RbgResourceType, namespace: string, name: string, what: string, done: (c: CoordinationStatus) => boolean, timeoutMs = 180_000): Promise<CoordinationStatus[]> {
  const seen: CoordinationStatus[] = [];
  await waitFor(async () => {
    const c = readRolloutStatus(await admin.get(type, name, namespace))?.coordinations[0];
    if (c && JSON.stringify(c) !== JSON.stringify(seen[seen.length - 1])) seen.push(c);
    return (c !== undefined && done(c)) || `last status ${JSON.stringify(c)}`;
  }, `${name}: ${what}`, { timeoutMs, everyMs: 250 });
  return seen;
}

/**
 * A group applied by "gitops" at v1, armed by the operator, then applied at v2; its workloads
 * recorded, and from the v2 apply on the partitions the operator wrote on the group (RBG carries
 * them into the workloads one workload at a time, so the workloads' states cannot show two
 * partitions lowered by one round). A paused role has released nothing of v2: it counts as
 * partition = replicas. `workloads` names the RoleInstanceSets' roles and replicas when they are not
 * the group's (AffinityScheduling splits each role into batches `<role>-b<n>`).
 */
export class GroupUnderTest {
  readonly roles: string[];
  readonly recorder: WorkloadRecorder;
  /** Distinct `partition/partition/…` of the roles, in role order, as written on the group since the v2 apply. */
  readonly written: string[] = [];
  /** The release's workloads honour `paused` (RoleInstanceSets); else (StatefulSets) only the partition holds a role. */
  readonly honoursPaused: boolean;
  readonly workloads: Record<string, number>;
  /** The revision of each StatefulSet Pod (releases whose workloads are StatefulSets, v0.6.0). */
  private readonly podRevisions?: PodRevisions;
  private recording = false;
  from = 0;
  v1Revision: Record<string, string> = {};
  firstRevision = '';

  constructor(private readonly ctx: GroupContext, readonly name: string, readonly replicas: Record<string, number>, readonly rule: Rule, workloads?: Record<string, number>) {
    this.workloads = workloads ?? replicas;
    this.roles = Object.keys(this.workloads);
    const release = releaseOf(ctx);
    this.honoursPaused = workloadHonoursPaused(release.workloadType.kind);
    this.recorder = new WorkloadRecorder(ctx.admin, ctx.namespace, name, this.roles, { workload: release.workloadType, group: release.groupType });
    ctx.watches.push(this.recorder);
    if (release.workloadType.kind === STATEFUL_SET_TYPE.kind) {
      this.podRevisions = watchStatefulSetPodRevisions(ctx.admin, ctx.namespace, name);
      ctx.watches.push(this.podRevisions);
    }
    const watch = ctx.admin.watch(release.groupType, ctx.namespace, (e) => {
      if (!this.recording || e.object.metadata.name !== name || e.type === 'delete') return;
      const roles: any[] = (e.object.spec as any)?.roles ?? [];
      // A paused role has released nothing more; a role held by its partition (a StatefulSet) by that partition alone.
      const pair = roles.map((r) => (this.honoursPaused && r.rolloutStrategy?.rollingUpdate?.paused !== false ? r.replicas : r.rolloutStrategy?.rollingUpdate?.partition)).join('/');
      if (this.written[this.written.length - 1] !== pair) this.written.push(pair);
    });
    ctx.watches.push(watch);
  }

  private apply(images: Images): Promise<KubeObject> {
    return this.ctx.gitops.apply(synthesizeOperatorGroup(this.ctx.namespace, this.name, images, this.replicas, this.rule, releaseOf(this.ctx)), { force: true });
  }

  /**
   * Creates the group at v1 (`sglang:v1`, or the images given) and waits until every workload is
   * ready and the operator armed the roles (paused; a StatefulSet, which ignores paused, held at
   * partition = replicas).
   */
  async create(images: Images = { default: 'sglang:v1' }): Promise<void> {
    await this.apply(images);
    const armed = await coordinationWhen(this.ctx, this.name, 'armed after the first revision', (c) => c?.phase === 'Complete');
    this.firstRevision = armed.revision;
    const held = (w: GroupState[string], n: number) => (this.honoursPaused ? w.paused : w.partition >= n);
    const ready = await this.recorder.until('every workload ready and armed at v1', (s) => this.roles.every((r) => s[r]?.observed && held(s[r], this.workloads[r]) && s[r].updated === this.workloads[r] && s[r].ready === this.workloads[r]));
    this.v1Revision = Object.fromEntries(this.roles.map((r) => [r, ready[r].updateRevision]));
  }

  /** Applies v2 (`sglang:v2`, or the images given); the rollout's states start here. */
  async changeTemplate(images: Images = { default: 'sglang:v2' }): Promise<void> {
    this.from = this.recorder.history.length - 1;
    this.recording = true;
    this.podRevisions?.from();
    await this.apply(images);
  }

  /** Waits until the operator reports the v2 rollout Complete and every workload is updated and ready. */
  async complete(timeoutMs = 180_000): Promise<CoordinationStatus> {
    const done = await coordinationWhen(this.ctx, this.name, 'the v2 rollout Complete', (c) => c?.phase === 'Complete' && c.revision !== this.firstRevision, timeoutMs);
    await this.recorder.until('every workload updated and ready at v2', (s) => this.roles.every((r) => s[r].observed && s[r].updateRevision !== this.v1Revision[r] && s[r].updated === this.workloads[r] && s[r].ready === this.workloads[r]), timeoutMs, this.from);
    await expectCurrentRevisionsRecorded(this.ctx, this.name, this.roles);
    if (this.podRevisions) {
      // A forward rollout moves each ordinal to the new revision once: none goes back, none on it is deleted.
      const old = new Set(Object.values(this.v1Revision));
      expect({ returnedToOld: this.podRevisions.returnedToOld(old), lostOnNew: this.podRevisions.lostOnNew(old) }).toEqual({ returnedToOld: {}, lostOnNew: [] });
    }
    return done;
  }

  /** The workloads' states since the template change, counting only replicas on the new revision. */
  rollout(): GroupState[] {
    return this.recorder.since(this.from).map((s) => Object.fromEntries(this.roles.map((r) => [r, { ...s[r], updated: s[r].updateRevision === this.v1Revision[r] ? 0 : s[r].updated }])));
  }
}

/** Every state passes RBG's own skew check (maxSkew + one replica of the smallest role); returns the worst skew, percent. */
export function expectSkewWithin(g: GroupUnderTest, states: readonly GroupState[], maxSkewPercent: number): number {
  let worst = 0;
  for (const s of states) {
    const roles = g.roles.map((r) => ({ name: r, desired: g.workloads[r], updatedReplicas: s[r].updated }));
    const fractions = roles.map((r) => r.updatedReplicas / r.desired);
    worst = Math.max(worst, (Math.max(...fractions) - Math.min(...fractions)) * 100);
    const verdict = rbgSkewCheck(maxSkewPercent, roles);
    if (!verdict.ok) expect({ verdict, state: s }).toEqual({ verdict: { ...verdict, ok: true }, state: s });
  }
  return worst;
}

/**
 * Partitions never rise during a rollout, per role. RoleInstanceSets: the partition each carries
 * while unpaused. StatefulSets (RBG v0.6.0): rayshift's writes on the group never rise before the
 * rollout ends (the last may arm the role at replicas once every replica is updated); the
 * StatefulSet's own partition does rise, and each rise is RBG's: v0.6.0 hashes the whole role,
 * rolling-update fields included, into the StatefulSet's revision label, takes every changed hash
 * for a new rolling update and resets the partition to the replicas (`rollingUpdateParameters`,
 * case 3, sts_reconciler.go) until rayshift carries the role's partition back (carry-partition.ts).
 * Or RBG steps the partition (case 6) from a StatefulSet its cache still shows above what rayshift
 * carried, and its forced apply puts that back. So each rise is written by a manager other than
 * rayshift's, and none returns a replica: the updated count, up to the role's replicas (a surge
 * replica above them goes at the end), never falls.
 */
export function expectPartitionsNeverRaised(g: GroupUnderTest, states: readonly GroupState[]): void {
  if (g.honoursPaused) {
    for (const role of g.roles) {
      const written = states.filter((s) => !s[role].paused && s[role].updateRevision !== g.v1Revision[role]).map((s) => s[role].partition);
      const raised = written.findIndex((p, i) => i > 0 && p > written[i - 1]);
      expect({ role, written, raised }).toEqual({ role, written, raised: -1 });
    }
    return;
  }
  g.roles.forEach((role, i) => {
    const byRayshift = g.written.map((pair) => Number(pair.split('/')[i]));
    const armed = byRayshift.length > 1 && byRayshift[byRayshift.length - 1] === g.workloads[role] ? byRayshift.slice(0, -1) : byRayshift;
    const raised = armed.findIndex((p, k) => k > 0 && p > armed[k - 1]);
    expect({ role, byRayshift, raised }).toEqual({ role, byRayshift, raised: -1 });
    // Updated replicas beyond the role's replicas are RBG's surge replicas, which it deletes by design
    // once the rollout is done ("deleting surge replica prefill-12", v0.6.0): only the role's own count.
    const v2 = states.map((s) => s[role]).filter((w) => w.updateRevision !== g.v1Revision[role]).map((w) => ({ ...w, updated: Math.min(w.updated, g.workloads[role]) }));
    const rises = v2.flatMap((w, k) => (k > 0 && w.partition > v2[k - 1].partition ? [{ to: w.partition, by: w.partitionWriter, updatedBefore: v2[k - 1].updated, updated: w.updated }] : []));
    const bad = rises.filter((r) => r.by === FIELD_MANAGER || r.updated < r.updatedBefore);
    const carried = v2.map((w) => `${w.partition}:${w.partitionWriter}:u${w.updated}`).filter((x, k, all) => x !== all[k - 1]).join(' ');
    expect({ role, byRayshift: byRayshift.join(' '), carried, bad }).toEqual({ role, byRayshift: byRayshift.join(' '), carried, bad: [] });
    const fell = v2.findIndex((w, k) => k > 0 && w.updated < v2[k - 1].updated);
    const around = fell < 0 ? [] : v2.slice(Math.max(0, fell - 3), fell + 2);
    expect({ role, updatedFell: fell, around }).toEqual({ role, updatedFell: -1, around: [] });
  });
}

/** A test cluster running an RBG release, its admin and "gitops" clients, and rayshift's RBG controller in this process. */
export interface RbgOperatorCluster {
  readonly cluster: TestCluster;
  readonly admin: KubeClient;
  readonly gitops: KubeClient;
  /** Stops the controller, closes the clients, stops the cluster. */
  stop(): Promise<void>;
}

/** Starts the test cluster with `rbg` and `nodes` kwok Nodes (8 GPUs each) and the operator's RBG controller on it. */
export async function startRbgOperatorCluster(rbg: ClusterRbg, nodes = 2): Promise<RbgOperatorCluster> {
  const cluster = await startTestCluster({ rbg, nodes });
  const admin = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
  const gitops = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath, { fieldManager: 'gitops' });
  const controller = new RbgRolloutController({ client: admin, log: { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined } });
  const stop = async () => {
    await controller.stop();
    admin.close();
    gitops.close();
    await cluster.stop();
  };
  try {
    await controller.start();
  } catch (e) {
    await stop();
    throw e;
  }
  return { cluster, admin, gitops, stop };
}
