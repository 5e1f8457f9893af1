/**
 * RBG v0.8.0-alpha.5 on a real kube-apiserver: its CRDs (RoleBasedGroup, CoordinatedPolicy,
 * RoleInstanceSet, ScalingAdapter) and its validating webhook's rules, served by a TEST-ONLY
 * webhook (test/support/rbg-webhook.ts) that sees every create and update of a group — the GitOps
 * applies and the operator's patches. The TEST-ONLY simulated RBG controller keeps each role's
 * RoleInstanceSet with the true counts and lets the group's `roleStatuses` go stale as RBG does,
 * so the operator must read the RoleInstanceSets. A group is synthesized by the `RoleBasedGroup`
 * construct with `rbgVersion: 'v0.8'` and `executor: 'operator'` and rolled out by the operator's
 * RBG controller. Needs `npm run controlplane:build`.
 */
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeApiError } from '../../lib/runtime/kube/errors';
import { Informer } from '../../lib/runtime/kube/informer';
import { KubeObject } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE } from '../../lib/spec/object-names';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-types';
import { readRolloutStatus } from '../../lib/runtime/rbg/status';
import { validateRoleBasedGroup } from '../../lib/spec/rbg';
import { RbgV08Env, startRbgV08Env } from '../support/rbg-v08-env';
import { SCALING_ADAPTER_TYPE, SimulatedRbgWebhook } from '../support/rbg-webhook';
import { waitFor } from '../support/wait-at-most';

const NS = 'pd';
const template = (image: string) => ({ spec: { containers: [{ name: 'engine', image }] } });

let env: RbgV08Env;
let admin: KubeClient;
let gitops: KubeClient;
let webhook: SimulatedRbgWebhook;

beforeAll(async () => {
  // Decode replicas are ready the moment they are updated: its readyReplicas never change, so RBG never rewrites its roleStatuses entry.
  env = await startRbgV08Env({ namespace: NS, webhook: true, readyDelayMs: (_g, role) => (role === 'decode' ? 0 : 20) });
  ({ admin, gitops } = env);
  webhook = env.webhook!;
}, 300_000);

afterAll(async () => {
  await env?.stop();
}, 60_000);

/** The group as the construct synthesizes it for RBG v0.8, run by the operator. */
function synthesize(name: string, image: string): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace: NS },
    rbgVersion: 'v0.8',
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 8, leaderWorkerSize: 2, template: template(image), restartPolicyConfig: { type: 'RecreateRoleInstanceOnPodRestart', baseDelaySeconds: 10, maxDelaySeconds: 120 } },
      { name: 'decode', replicas: 4, template: template(image) },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%', maxUnavailable: 1 }, progressDeadlineSeconds: 120 }],
  });
  const objects = Testing.synth(chart) as KubeObject[];
  expect(objects.map((o) => o.kind)).toEqual(['RoleBasedGroup']);
  return objects[0];
}

/** One observed state: the executor's coordination status and the group's (possibly stale) roleStatuses entries. */
interface Seen {
  readonly coordination?: CoordinationStatus;
  readonly entries: Record<string, number>;
}

/** Records every state of group `name` from a watch; `until` resolves on the first (past or future) state satisfying `check`. */
function record(name: string): { seen: Seen[]; until(what: string, check: (s: Seen) => boolean): Promise<Seen>; stop(): void } {
  const seen: Seen[] = [];
  const waiters: { check: (s: Seen) => boolean; resolve: (s: Seen) => void }[] = [];
  const informer: Informer = admin.watch(RBG_V1ALPHA2_TYPE, NS, (e) => {
    if (e.object.metadata.name !== name || e.type === 'delete') return;
    const entries = Object.fromEntries(((e.object.status as any)?.roleStatuses ?? []).map((s: any) => [s.name, s.updatedReplicas]));
    const s: Seen = { coordination: readRolloutStatus(e.object)?.coordinations[0], entries };
    seen.push(s);
    for (const w of [...waiters]) if (w.check(s)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(s));
  });
  return {
    seen,
    until: (what, check) => {
      const past = seen.find(check);
      if (past) return Promise.resolve(past);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: timed out waiting for ${what}; last: ${JSON.stringify(seen[seen.length - 1])}`)), 90_000);
        waiters.push({ check, resolve: (s) => (clearTimeout(timer), resolve(s)) });
      });
    },
    stop: () => informer.stop(),
  };
}

/**
 * The RoleInstanceSet `name` once the simulated RBG controller has observed its latest generation
 * (the operator's last write, releasing the hold, can land just after it reports Complete), or as it
 * is after 30 s, for the assertion to show.
 */
async function observed(name: string): Promise<KubeObject> {
  let ris!: KubeObject;
  await waitFor(async () => {
    ris = await admin.get(ROLE_INSTANCE_SET_TYPE, name, NS);
    return (ris.status as { observedGeneration?: number } | undefined)?.observedGeneration === ris.metadata.generation;
  }, `RoleInstanceSet ${name} observed`, { timeoutMs: 30_000, everyMs: 100 }).catch(() => undefined); // the caller's assertion shows a stale one
  return ris;
}

test('a v0.8 group (RoleInstanceSets, restartPolicyConfig) rolls out under RBG v0.8\'s webhook: every write admitted, progress read from the RoleInstanceSets', async () => {
  const name = 'pd-v08';
  const rec = record(name);
  try {
    await gitops.apply(synthesize(name, 'sglang:v1'), { force: true });
    const armed = await rec.until('armed', (s) => s.coordination?.phase === 'Complete');
    const from = rec.seen.length;
    await gitops.apply(synthesize(name, 'sglang:v2'), { force: true });
    const done = await rec.until('the v2 rollout to complete', (s) => s.coordination?.phase === 'Complete' && s.coordination.revision !== armed.coordination!.revision);
    expect(done.coordination!.rounds).toBeGreaterThan(0);

    // Every RoleInstanceSet reached the new revision with every replica updated.
    for (const [role, replicas] of [['prefill', 8], ['decode', 4]] as const) {
      const ris = await observed(`${name}-${role}`);
      expect([role, (ris.status as any).updatedReplicas, (ris.status as any).observedGeneration]).toEqual([role, replicas, ris.metadata.generation]);
    }
    // The group's decode entry stayed at 4 updated (stale) through the rollout, while the executor
    // reported decode below 4: it read the RoleInstanceSet.
    const rollout = rec.seen.slice(from);
    expect(rollout.every((s) => s.entries.decode === 4)).toBe(true);
    expect(rollout.some((s) => s.coordination?.revision === done.coordination!.revision && (s.coordination.roles.find((r) => r.name === 'decode')?.updated ?? 4) < 4)).toBe(true);

    // The webhook saw the GitOps applies and the operator's patches, and denied none of them.
    const reviews = webhook.reviews.filter((r) => r.name === name);
    expect(reviews.filter((r) => !r.allowed)).toEqual([]);
    expect(reviews.filter((r) => r.operation === 'UPDATE').length).toBeGreaterThan(done.coordination!.rounds);
    const stored = await admin.get(RBG_V1ALPHA2_TYPE, name, NS);
    expect((stored.spec as any).roles[0].leaderWorkerPattern.restartPolicyConfig).toEqual({ type: 'RecreateRoleInstanceOnPodRestart', baseDelaySeconds: 10, maxDelaySeconds: 120 });
  } finally {
    rec.stop();
  }
}, 180_000);

test('the webhook is enforced: a partition equal to replicas is denied, naming the field and the allowed range', async () => {
  const group = synthesize('pd-denied', 'sglang:v1');
  (group.spec as any).roles[1].rolloutStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 4 } };
  const err = await gitops.apply(group, { force: true }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(KubeApiError);
  expect((err as Error).message).toMatch(/denied the request: spec\.roles\[1\]\.rolloutStrategy\.rollingUpdate\.partition: 4 is not below replicas.*allowed: 0–3/);
});

test('replicas of a role a ScalingAdapter owns may change only to the adapter\'s value', async () => {
  const group = synthesize('pd-scaled', 'sglang:v1');
  delete (group.metadata.labels as Record<string, string>)['rayshift.dev/coordination-executor'];
  (group.spec as any).roles[1].scalingAdapter = { enable: true };
  await gitops.apply(group, { force: true });
  await admin.create({ apiVersion: SCALING_ADAPTER_TYPE.apiVersion, kind: SCALING_ADAPTER_TYPE.kind, metadata: { name: 'pd-scaled-decode', namespace: NS }, spec: { replicas: 6, scaleTargetRef: { name: 'pd-scaled', role: 'decode' } } });
  (group.spec as any).roles[1].replicas = 5;
  await expect(gitops.apply(group, { force: true })).rejects.toThrow(/spec\.roles\[1\]\.replicas: 5 differs from 4 while scalingAdapter\.enable is true and ScalingAdapter "pd-scaled-decode" has spec\.replicas 6/);
  (group.spec as any).roles[1].replicas = 6;
  await expect(gitops.apply(group, { force: true })).resolves.toBeDefined();
});

test("rayshift's restartPolicyConfig rule is the API server's CEL rule with the defaults filled in", async () => {
  const group = synthesize('pd-restart', 'sglang:v1');
  const config = (value: object) => {
    const g = structuredClone(group);
    (g.spec as any).roles[0].leaderWorkerPattern.restartPolicyConfig = value;
    return g;
  };
  for (const value of [{ maxDelaySeconds: 10 }, { baseDelaySeconds: 700 }, { baseDelaySeconds: 60, maxDelaySeconds: 30 }]) {
    await expect(admin.create(config(value), { dryRun: true })).rejects.toThrow(/maxDelaySeconds must be greater than or equal to baseDelaySeconds/);
    expect(validateRoleBasedGroup(config(value), { rbgVersion: 'v0.8' }).errors.map((e) => e.path)).toEqual(['spec.roles[0].leaderWorkerPattern.restartPolicyConfig.maxDelaySeconds']);
  }
  for (const value of [{ maxDelaySeconds: 30 }, { baseDelaySeconds: 600 }, { baseDelaySeconds: 0, maxDelaySeconds: 0 }]) {
    await expect(admin.create(config(value), { dryRun: true })).resolves.toBeDefined();
    expect(validateRoleBasedGroup(config(value), { rbgVersion: 'v0.8' }).errors).toEqual([]);
  }
});
