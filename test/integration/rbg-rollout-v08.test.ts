/**
 * RBG v0.8.0-alpha.5 on a real kube-apiserver: its CRDs (RoleBasedGroup, CoordinatedPolicy,
 * RoleInstanceSet, ScalingAdapter) and its validating webhook's rules, served by a TEST-ONLY
 * webhook (test/support/rbg-webhook.ts); no RBG controller runs (neither case needs one). Kept here:
 * the ScalingAdapter rule of rayshift's `validateRoleBasedGroupUpdate` (RBG's real webhook admitted
 * such a change in the one run of cluster-rbg-v08-webhook.test.ts, not diagnosed) and the API
 * server's CEL rule of `restartPolicyConfig` (no controller needed). The rollout under the webhook
 * and the partition denial run on RBG's real controller and webhook in
 * cluster-rbg-v08-webhook.test.ts. Needs `npm run controlplane:build`.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { validateRoleBasedGroup } from '../../lib/spec/rbg';
import { RbgV08Env, startRbgV08Env } from '../support/rbg-v08-env';
import { SCALING_ADAPTER_TYPE } from '../support/rbg-webhook';
import { v08Group } from '../support/rbg-v08-group';

const NS = 'pd';

let env: RbgV08Env;
let admin: KubeClient;
let gitops: KubeClient;

beforeAll(async () => {
  env = await startRbgV08Env({ namespace: NS, webhook: true });
  ({ admin, gitops } = env);
}, 300_000);

afterAll(async () => {
  await env?.stop();
}, 60_000);

/** The v0.8 group of `v08Group` at `image`. */
function synthesize(name: string, image: string): KubeObject {
  return v08Group(name, NS, image, { prefill: 8, decode: 4 });
}

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
