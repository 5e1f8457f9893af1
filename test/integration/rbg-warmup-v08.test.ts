/**
 * The `warmup` option of a coordinated rollout on a real kube-apiserver with RBG v0.8.0-alpha.5's
 * CRDs (RoleBasedGroupWarmup included): a group synthesized by the `RoleBasedGroup` construct with
 * `rbgVersion: 'v0.8'`, `executor: 'operator'` and `warmup`, rolled out by the operator's RBG
 * controller. RBG v0.8's controllers are not buildable here, so two TEST-ONLY stand-ins play them:
 * the simulated RBG controller (test/support/simulated-rbg.ts) keeps the RoleInstanceSets, and a
 * warmup status writer (test/support/simulated-rbg-warmup.ts) reports what the test decides as the
 * warmup's status. Needs `npm run controlplane:build`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { KubeClient } from '../../lib/runtime/kube/client';
import { Informer } from '../../lib/runtime/kube/informer';
import { KubeObject } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE } from '../../lib/spec/object-names';
import { RolloutStatusDocument, readRolloutStatus } from '../../lib/runtime/rbg/status';
import { RolloutWarmup } from '../../lib/spec/rbg-warmup';
import { JsonObject } from '../../lib/spec/read';
import { RbgV08Env, startRbgV08Env } from '../support/rbg-v08-env';
import { simulatedRoleRevision } from '../support/simulated-rbg';
import { warmupCreated, writeWarmupStatus } from '../support/simulated-rbg-warmup';
import { waitFor } from '../support/wait-at-most';

const NS = 'warm';
const template = (image: string) => ({ spec: { containers: [{ name: 'engine', image }] } });

let env: RbgV08Env;
let admin: KubeClient;
let gitops: KubeClient;

beforeAll(async () => {
  env = await startRbgV08Env({ namespace: NS, readyDelayMs: () => 10 });
  ({ admin, gitops } = env);
}, 300_000);

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
function record(name: string): { seen: RolloutStatusDocument[]; until(what: string, check: (d: RolloutStatusDocument) => boolean): Promise<RolloutStatusDocument>; stop(): void } {
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
    until: (what, check) => {
      const past = seen.find(check);
      if (past) return Promise.resolve(past);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: timed out waiting for ${what}; last: ${JSON.stringify(seen[seen.length - 1])}`)), 90_000);
        waiters.push({ check, resolve: (d) => (clearTimeout(timer), resolve(d)) });
      });
    },
    stop: () => informer.stop(),
  };
}

/** The updated replicas of a role's RoleInstanceSet once the simulated RBG controller has applied the group's current template to it and observed it. */
async function observed(group: string, role: string): Promise<number> {
  let updated = -1;
  await waitFor(async () => {
    const stored = await admin.get(RBG_V1ALPHA2_TYPE, group, NS);
    const revision = simulatedRoleRevision(((stored.spec as any).roles as JsonObject[]).find((r) => r.name === role)!);
    const ris = await admin.get(ROLE_INSTANCE_SET_TYPE, `${group}-${role}`, NS);
    const status = ris.status as { observedGeneration?: number; updatedReplicas?: number } | undefined;
    updated = status?.updatedReplicas ?? -1;
    return (ris.spec as any)?.roleInstanceTemplate?.revision === revision && status?.observedGeneration === ris.metadata.generation;
  }, `RoleInstanceSet ${group}-${role} observed at the group's template`, { timeoutMs: 30_000, everyMs: 100 }).catch(() => undefined); // the caller's assertion shows a stale one
  return updated;
}

/** Applies v1, waits until the operator armed it, applies v2 and returns the v1 revision and the warmup the operator created. */
async function rollToV2(name: string, rec: ReturnType<typeof record>, warmup: RolloutWarmup): Promise<{ v1: string; warmup: KubeObject }> {
  await gitops.apply(synthesize(name, 'sglang:v1', warmup), { force: true });
  const armed = await rec.until('armed', (d) => d.coordinations[0]?.phase === 'Complete');
  await gitops.apply(synthesize(name, 'sglang:v2', warmup), { force: true });
  return { v1: armed.coordinations[0].revision, warmup: await warmupCreated(admin, NS, `${name}-warmup-`) };
}

test('the operator warms the new images on the roles\' nodes and moves no partition until the warmup completes', async () => {
  const name = 'pd-warm';
  const rec = record(name);
  try {
    const { v1, warmup } = await rollToV2(name, rec, { parallelism: 2, backoffLimitPerNode: 1, globalTimeoutSeconds: 600 });
    // One warmup of the v2 images for the warmed roles' nodes, owned by the group; the router is not warmed.
    expect(warmup.spec).toEqual({
      targetRoleBasedGroup: { name, roles: { prefill: { imagePreload: { images: ['sglang:v2'] } }, decode: { imagePreload: { images: ['sglang:v2'] } } } },
      policies: { parallelism: 2, backoffLimitPerNode: 1, maxFailedNodes: 0, globalTimeoutSeconds: 600 },
    });
    expect(warmup.metadata.ownerReferences?.map((o) => [o.kind, o.name])).toEqual([['RoleBasedGroup', name]]);

    await writeWarmupStatus(admin, NS, String(warmup.metadata.name), { phase: 'Running', desired: 8, succeeded: 3 });
    const warming = await rec.until('3/8 nodes', (d) => d.coordinations[0]?.message === 'warming images: 3/8 nodes');
    expect([warming.coordinations[0].phase, warming.coordinations[0].reason, warming.warmup?.phase]).toEqual(['Progressing', 'WarmingImages', 'Warming']);
    // The simulated RBG controller has seen v2, and no replica moved to it: every partition is held.
    for (const role of ['prefill', 'decode']) expect([role, await observed(name, role)]).toEqual([role, 0]);

    await writeWarmupStatus(admin, NS, String(warmup.metadata.name), { phase: 'Completed', desired: 8, succeeded: 8 });
    const done = await rec.until('the v2 rollout to complete', (d) => d.coordinations[0]?.phase === 'Complete' && d.coordinations[0].revision !== v1);
    expect(done.coordinations[0].rounds).toBeGreaterThan(0);
    expect(done.warmup).toMatchObject({ phase: 'Complete', message: 'images warm on 8/8 nodes' });
    // The first round of v2 was written after the warmup completed, and never before.
    const rounds = rec.seen.findIndex((d) => d.coordinations[0]?.revision !== v1 && (d.coordinations[0]?.rounds ?? 0) > 0);
    const warm = rec.seen.findIndex((d) => d.warmup?.phase === 'Complete');
    expect(warm).toBeGreaterThanOrEqual(0);
    expect(rounds).toBeGreaterThanOrEqual(warm);
    for (const [role, replicas] of [['prefill', 4], ['decode', 2]] as const) expect([role, await observed(name, role)]).toEqual([role, replicas]);
  } finally {
    rec.stop();
  }
}, 180_000);

test('a failed warmup holds the rollout on the old revision (onFailure Fail) and says why; with Proceed the rollout runs on cold nodes', async () => {
  const failure = { reason: 'MaxFailedNodesExceeded', message: '2 nodes failed (max tolerated: 0)' };
  const held = record('pd-cold');
  try {
    const { warmup } = await rollToV2('pd-cold', held, {});
    await writeWarmupStatus(admin, NS, String(warmup.metadata.name), { phase: 'Failed', desired: 8, succeeded: 6, failed: 2, failure });
    const stopped = await held.until('the warmup failure', (d) => d.coordinations[0]?.phase === 'Failed');
    expect(stopped.coordinations[0].reason).toBe('WarmupFailed');
    expect(stopped.coordinations[0].message).toBe(
      'RBG failed the warmup (2 nodes failed (max tolerated: 0)): warm on 6/8 nodes, 2 failed; the rollout is held before any partition moved (onFailure Fail); change the images or delete the warmup to try again',
    );
    for (const role of ['prefill', 'decode']) expect([role, await observed('pd-cold', role)]).toEqual([role, 0]);
    const group = await admin.get(RBG_V1ALPHA2_TYPE, 'pd-cold', NS);
    expect((group.spec as any).roles.slice(0, 2).map((r: any) => r.rolloutStrategy.rollingUpdate.paused)).toEqual([true, true]);
  } finally {
    held.stop();
  }

  const proceeding = record('pd-proceed');
  try {
    const { v1, warmup } = await rollToV2('pd-proceed', proceeding, { onFailure: 'Proceed' });
    await writeWarmupStatus(admin, NS, String(warmup.metadata.name), { phase: 'Failed', desired: 8, succeeded: 6, failed: 2, failure });
    const done = await proceeding.until('the v2 rollout to complete', (d) => d.coordinations[0]?.phase === 'Complete' && d.coordinations[0].revision !== v1);
    expect(done.warmup).toMatchObject({ phase: 'Proceeded', reason: 'WarmupFailed' });
    expect(await observed('pd-proceed', 'prefill')).toBe(4);
  } finally {
    proceeding.stop();
  }
}, 240_000);
