/**
 * RBG v0.8.0-alpha.5's real controller with its REAL validating webhook (the chart's configuration,
 * served by `rbgs`; test/support/rbg-v08-webhook.ts): a leader/worker group with
 * `restartPolicyConfig` rolls out under the operator, every patch admitted, and the webhook's own
 * denials, as upstream words them: the cases that ran on the TEST-ONLY simulated controller and
 * webhook in rbg-rollout-v08.test.ts, which keeps the ScalingAdapter rule (the real webhook admitted
 * such a change in the one run here, not diagnosed) and the API server's CEL rule. Needs
 * `npm run controlplane:build` and
 * `bash scripts/build-cluster.sh kwok rbg-v08`.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeApiError } from '../../lib/runtime/kube/errors';
import { KubeObject } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE, ROLE_INSTANCE_SET_TYPE } from '../../lib/spec/object-names';
import { clusterStartTimeoutMs, TestCluster } from '../support/cluster';
import { coordinationStatuses, RbgOperatorCluster, startRbgOperatorCluster } from '../support/rbg-operator-group';
import { waitFor } from '../support/wait-at-most';
import { v08Group } from '../support/rbg-v08-group';

const NS = 'default';

let cluster: TestCluster;
let admin: KubeClient;
let gitops: KubeClient;
let env: RbgOperatorCluster;

beforeAll(async () => {
  env = await startRbgOperatorCluster('v0.8');
  ({ cluster, admin, gitops } = env);
}, clusterStartTimeoutMs('v0.8'));

afterAll(async () => {
  await env?.stop();
}, 60_000);

/** The v0.8 group of `v08Group` at `image`. */
function synthesize(name: string, image: string): KubeObject {
  return v08Group(name, NS, image, { prefill: 4, decode: 2 });
}

test('a v0.8 leader/worker group with restartPolicyConfig rolls out under the real webhook: every patch admitted, every RoleInstanceSet on the new revision', () =>
  cluster.printLogsOnFailure(async () => {
    const name = 'pd-v08';
    await gitops.apply(synthesize(name, 'sglang:v1'), { force: true });
    const armed = await coordinationStatuses(admin, RBG_V1ALPHA2_TYPE, NS, name, 'armed at v1', (c) => c.phase === 'Complete', 180_000);
    await gitops.apply(synthesize(name, 'sglang:v2'), { force: true });
    const seen = await coordinationStatuses(admin, RBG_V1ALPHA2_TYPE, NS, name, 'the v2 rollout to complete', (c) => c.phase === 'Complete' && c.revision !== armed[armed.length - 1].revision, 180_000);
    expect(seen[seen.length - 1].rounds).toBeGreaterThan(0);
    // A refused patch would have left the rollout where it stood: it completed, each set carries it.
    for (const [role, replicas] of [['prefill', 4], ['decode', 2]] as const) {
      await waitFor(async () => {
        const ris = await admin.get(ROLE_INSTANCE_SET_TYPE, `${name}-${role}`, NS);
        const s = ris.status as { updatedReplicas?: number; observedGeneration?: number };
        return (s.updatedReplicas === replicas && s.observedGeneration === ris.metadata.generation) || `${role}: ${JSON.stringify(s)}`;
      }, `${name}-${role} updated`, { timeoutMs: 60_000, everyMs: 250 });
    }
    const stored = await admin.get(RBG_V1ALPHA2_TYPE, name, NS);
    expect((stored.spec as any).roles[0].leaderWorkerPattern.restartPolicyConfig).toEqual({ type: 'RecreateRoleInstanceOnPodRestart', baseDelaySeconds: 10, maxDelaySeconds: 120 });
  }), 300_000);

test('the real webhook denies a partition equal to replicas, in upstream\'s words', async () => {
  const group = synthesize('pd-denied', 'sglang:v1');
  (group.spec as any).roles[1].rolloutStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 2 } };
  const err = await gitops.apply(group, { force: true }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(KubeApiError);
  expect((err as Error).message).toMatch(/denied the request: .*spec\.roles\[1\]\.rolloutStrategy\.rollingUpdate\.partition: 2 must be less than replicas 2/);
});
