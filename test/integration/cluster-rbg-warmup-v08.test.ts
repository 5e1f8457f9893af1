/**
 * The `warmup` option of a coordinated rollout on RBG v0.8.0-alpha.5's real controllers (the test
 * cluster's `rbg: 'v0.8'`, with its validating webhook): a group synthesized by the
 * `RoleBasedGroup` construct with `rbgVersion: 'v0.8'`, `executor: 'operator'` and `warmup`, rolled
 * out by the operator's RBG controller (in this process). RBG's RoleBasedGroupWarmup controller
 * creates one `restartPolicy: Never` Pod per Node running the roles' Pods, kube-scheduler binds it
 * to that Node and kwok runs it to Succeeded (its `pod-warmup-complete` stage, which only such Pods
 * match); RBG then counts the Node warm. A Node the warmup cannot reach is a real one: tainted
 * `NoSchedule` after the roles' Pods run there, so its warmup Pod stays Unschedulable and the
 * warmup times out (`globalTimeoutSeconds`). Needs `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok rbg-v08`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { KubeClient } from '../../lib/runtime/kube/client';
import { Informer } from '../../lib/runtime/kube/informer';
import { KubeObject } from '../../lib/runtime/kube/types';
import { POD, RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE, WARMUP_TYPE } from '../../lib/spec/object-names';
import { RolloutStatusDocument, readRolloutStatus } from '../../lib/runtime/rbg/status';
import { RolloutWarmup } from '../../lib/spec/rbg-warmup';
import { clusterStartTimeoutMs, TestCluster } from '../support/cluster';
import { RbgOperatorCluster, startRbgOperatorCluster } from '../support/rbg-operator-group';
import { waitFor } from '../support/wait-at-most';

const NS = 'default';
/** RBG v0.8's labels: a Pod's group and role (api/workloads/constants), a warmup Pod's warmup (rolebasedgroupwarmup_controller.go). */
const GROUP_LABEL = 'rbg.workloads.x-k8s.io/group-name';
const ROLE_LABEL = 'rbg.workloads.x-k8s.io/role-name';
const WARMUP_LABEL = 'workloads.x-k8s.io/warmup-name';
const NODE = { apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false } as const;
const template = (image: string) => ({ spec: { containers: [{ name: 'engine', image }] } });

let env: RbgOperatorCluster;
let cluster: TestCluster;
let admin: KubeClient;
let gitops: KubeClient;

beforeAll(async () => {
  env = await startRbgOperatorCluster('v0.8');
  ({ cluster, admin, gitops } = env);
}, clusterStartTimeoutMs('v0.8'));

afterAll(async () => {
  await env?.stop();
}, 60_000);

/** The group as the construct synthesizes it: prefill and decode coordinated and warmed, the router neither. */
function synthesize(name: string, image: string, warmup: RolloutWarmup): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace: NS },
    rbgVersion: 'v0.8',
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 4, template: template(image) },
      { name: 'decode', replicas: 2, template: template(image) },
      { name: 'router', replicas: 1, template: template('router:v1') },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%', maxUnavailable: 1 } }],
    warmup,
  });
  const objects = Testing.synth(chart) as KubeObject[];
  expect(objects.map((o) => o.kind)).toEqual(['RoleBasedGroup']);
  return objects[0];
}

/** Records every rollout-status document of group `name` from a watch; `until` resolves on the first (past or future) one satisfying `check`. */
function record(name: string): { seen: RolloutStatusDocument[]; until(what: string, check: (d: RolloutStatusDocument) => boolean, timeoutMs?: number): Promise<RolloutStatusDocument>; stop(): void } {
  const seen: RolloutStatusDocument[] = [];
  const waiters: { check: (d: RolloutStatusDocument) => boolean; resolve: (d: RolloutStatusDocument) => void }[] = [];
  const informer: Informer = admin.watch(RBG_V1ALPHA2_TYPE, NS, (e) => {
    const doc = e.type === 'delete' || e.object.metadata.name !== name ? undefined : readRolloutStatus(e.object);
    if (!doc) return;
    seen.push(doc);
    for (const w of [...waiters]) if (w.check(doc)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(doc));
  });
  return {
    seen,
    until: (what, check, timeoutMs = 120_000) => {
      const past = seen.find(check);
      if (past) return Promise.resolve(past);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: timed out waiting for ${what}; last: ${JSON.stringify(seen[seen.length - 1])}`)), timeoutMs);
        waiters.push({ check, resolve: (d) => (clearTimeout(timer), resolve(d)) });
      });
    },
    stop: () => informer.stop(),
  };
}

/** The warmup named `<group>-warmup-…` that the executor creates, once it exists. */
async function warmupOf(group: string): Promise<KubeObject> {
  let found: KubeObject | undefined;
  await waitFor(async () => {
    found = (await admin.list(WARMUP_TYPE, { namespace: NS })).items.find((w) => String(w.metadata.name).startsWith(`${group}-warmup-`));
    return found !== undefined;
  }, `a RoleBasedGroupWarmup ${group}-warmup-*`, { timeoutMs: 60_000, everyMs: 200 });
  return found!;
}

/** The Nodes running Pods of the warmed roles (prefill, decode) of `group`: what RBG warms. */
async function warmedNodes(group: string): Promise<string[]> {
  const pods = await admin.list(POD, { namespace: NS, labelSelector: `${GROUP_LABEL}=${group},${ROLE_LABEL} in (prefill,decode)` });
  return [...new Set(pods.items.map((p) => String((p.spec as any).nodeName)))].sort();
}

/** The updated replicas each of `group`'s RoleInstanceSets reports. */
async function updatedByRole(group: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const role of ['prefill', 'decode']) out[role] = Number(((await admin.get(ROLE_INSTANCE_SET_TYPE, `${group}-${role}`, NS)).status as any)?.updatedReplicas ?? -1);
  return out;
}

/** Applies v1, waits until the operator armed it and every Pod of it is Ready, applies v2 and returns the v1 revision and the warmup the operator created. */
async function rollToV2(name: string, rec: ReturnType<typeof record>, warmup: RolloutWarmup, beforeV2?: () => Promise<void>): Promise<{ v1: string; warmup: KubeObject }> {
  await gitops.apply(synthesize(name, 'sglang:v1', warmup), { force: true });
  const armed = await rec.until('armed', (d) => d.coordinations[0]?.phase === 'Complete');
  await waitFor(async () => {
    const pods = await admin.list(POD, { namespace: NS, labelSelector: `${GROUP_LABEL}=${name}` });
    const ready = pods.items.filter((p) => ((p.status as any)?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'));
    return ready.length === 7 || `${ready.length}/7 Pods Ready`;
  }, `${name}: every Pod Ready at v1`, { timeoutMs: 120_000, everyMs: 250 });
  await beforeV2?.();
  await gitops.apply(synthesize(name, 'sglang:v2', warmup), { force: true });
  return { v1: armed.coordinations[0].revision, warmup: await warmupOf(name) };
}

test('RBG warms the new image on every Node of the warmed roles, one Pod per Node run to Succeeded; the operator moves no partition until the warmup completes', () =>
  cluster.printLogsOnFailure(async () => {
    const name = 'pd-warm';
    const rec = record(name);
    try {
      const { v1, warmup } = await rollToV2(name, rec, { parallelism: 1, backoffLimitPerNode: 1, globalTimeoutSeconds: 600 });
      // One warmup of the v2 images for the warmed roles' nodes, owned by the group; the router is not warmed.
      expect(warmup.spec).toEqual({
        targetRoleBasedGroup: { name, roles: { prefill: { imagePreload: { images: ['sglang:v2'] } }, decode: { imagePreload: { images: ['sglang:v2'] } } } },
        policies: { parallelism: 1, backoffLimitPerNode: 1, maxFailedNodes: 0, globalTimeoutSeconds: 600 },
      });
      expect(warmup.metadata.ownerReferences?.map((o) => [o.kind, o.name])).toEqual([['RoleBasedGroup', name]]);

      const done = await rec.until('the v2 rollout to complete', (d) => d.coordinations[0]?.phase === 'Complete' && d.coordinations[0].revision !== v1);
      const nodes = await warmedNodes(name);
      expect(done.coordinations[0].rounds).toBeGreaterThan(0);
      expect(done.warmup).toMatchObject({ phase: 'Complete', message: `images warm on ${nodes.length}/${nodes.length} nodes` });
      // RBG's own account: every warmed Node succeeded, through one Succeeded Pod per Node pulling v2.
      const finished = await admin.get(WARMUP_TYPE, String(warmup.metadata.name), NS);
      expect([(finished.status as any).phase, (finished.status as any).desired, (finished.status as any).succeeded]).toEqual(['Completed', nodes.length, nodes.length]);
      const pods = (await admin.list(POD, { namespace: NS, labelSelector: `${WARMUP_LABEL}=${warmup.metadata.name}` })).items;
      expect(pods.map((p) => [(p.spec as any).nodeName, (p.status as any).phase, (p.spec as any).containers.map((c: any) => c.image)]).sort()).toEqual(nodes.map((n) => [n, 'Succeeded', ['sglang:v2']]));
      // The first round of v2 (written in the same patch as its status) came after the warmup
      // completed, never before. (Whether a `Warming` status is written first depends on whether RBG
      // finished the warmup before the executor's next pass: kwok runs its Pods in milliseconds.)
      const warm = rec.seen.findIndex((d) => d.warmup?.phase === 'Complete');
      const firstRound = rec.seen.findIndex((d) => d.coordinations[0]?.revision !== v1 && (d.coordinations[0]?.rounds ?? 0) > 0);
      expect(warm).toBeGreaterThanOrEqual(0);
      expect(firstRound).toBeGreaterThanOrEqual(warm);
      await waitFor(async () => JSON.stringify(await updatedByRole(name)) === JSON.stringify({ prefill: 4, decode: 2 }) || JSON.stringify(await updatedByRole(name)), `${name}: every replica updated`, { timeoutMs: 60_000, everyMs: 250 });
    } finally {
      rec.stop();
    }
  }), 240_000);

/** Taints `node` NoSchedule (the roles' Pods already run there; a new warmup Pod cannot be placed), or removes the taint. */
async function setUnreachable(node: string, unreachable: boolean): Promise<void> {
  await admin.patchMerge(NODE, node, undefined, { spec: { taints: unreachable ? [{ key: 'rayshift.dev/test-no-warmup', value: 'true', effect: 'NoSchedule' }] : null } });
}

test('a warmup that cannot reach a Node times out: onFailure Fail holds the rollout on v1 and says why; with Proceed the rollout runs on the cold Node', () =>
  cluster.printLogsOnFailure(async () => {
    const tainted = new Set<string>();
    /** Before v2: a Node running the group's warmed Pods turns unreachable for new Pods. */
    const taintOneOf = (group: string) => async () => {
      const nodes = await warmedNodes(group);
      const cold = nodes[nodes.length - 1];
      tainted.add(cold);
      await setUnreachable(cold, true);
    };
    const untaint = async () => {
      for (const n of tainted) await setUnreachable(n, false);
      tainted.clear();
    };
    try {
      const held = record('pd-cold');
      try {
        const { warmup } = await rollToV2('pd-cold', held, { globalTimeoutSeconds: 8 }, taintOneOf('pd-cold'));
        const stopped = await held.until('the warmup failure', (d) => d.coordinations[0]?.phase === 'Failed');
        expect(['WarmupFailed', 'WarmupTimedOut']).toContain(stopped.coordinations[0].reason);
        expect(stopped.coordinations[0].message).toMatch(/: warm on \d\/\d nodes.*; the rollout is held before any partition moved \(onFailure Fail\); change the images or delete the warmup to try again$/);
        // The Pod for the tainted Node was never placed: the scheduler's verdict, not a stand-in's.
        const pods = (await admin.list(POD, { namespace: NS, labelSelector: `${WARMUP_LABEL}=${warmup.metadata.name}` })).items;
        expect(pods.filter((p) => tainted.has((p.spec as any).nodeName))).toEqual([]);
        expect(await updatedByRole('pd-cold')).toEqual({ prefill: 0, decode: 0 });
        const group = await admin.get(RBG_V1ALPHA2_TYPE, 'pd-cold', NS);
        expect((group.spec as any).roles.slice(0, 2).map((r: any) => r.rolloutStrategy.rollingUpdate.paused)).toEqual([true, true]);
      } finally {
        held.stop();
      }
      await untaint();

      const proceeding = record('pd-proceed');
      try {
        const { v1 } = await rollToV2('pd-proceed', proceeding, { onFailure: 'Proceed', globalTimeoutSeconds: 8 }, taintOneOf('pd-proceed'));
        const done = await proceeding.until('the v2 rollout to complete', (d) => d.coordinations[0]?.phase === 'Complete' && d.coordinations[0].revision !== v1, 180_000);
        expect(done.warmup?.phase).toBe('Proceeded');
        expect(['WarmupFailed', 'WarmupTimedOut']).toContain(done.warmup?.reason);
        await waitFor(async () => JSON.stringify(await updatedByRole('pd-proceed')) === JSON.stringify({ prefill: 4, decode: 2 }) || JSON.stringify(await updatedByRole('pd-proceed')), 'pd-proceed: every replica updated', { timeoutMs: 60_000, everyMs: 250 });
      } finally {
        proceeding.stop();
      }
    } finally {
      await untaint();
    }
  }), 360_000);
