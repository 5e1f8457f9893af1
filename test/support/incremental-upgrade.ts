/**
 * The full incremental upgrade the operator's cluster suites check, whichever way the operator runs
 * (in-process: test/integration/cluster-operator-upgrade.test.ts; as the image's container:
 * test/integration/cluster-operator-image.test.ts): maxSurge 50, step 25, interval 1 s, and every
 * route weight change, seen through a watch, follows the literal sequence written from the rules.
 */
import { OperatorEnv, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, recordRouteWeights, recordedPendingWeights, waitFor } from './operator-env';

/** Creates service `fruit` in a new namespace `ns`, upgrades it, and checks every step against the plan. */
export async function expectIncrementalUpgradeFollowsPlan(env: OperatorEnv, ns: string): Promise<void> {
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, 'fruit', { maxSurge: 50, step: 25, interval: 1 }));
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).phase === 'Running', 'the first cluster to serve');
  const first = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).activeClusterName as string;
  const recorder = await recordRouteWeights(env.admin, ns, 'fruit-httproute');
  await waitFor(() => recorder.history.length > 0, 'the route to be watched');

  const current = (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns))!;
  await env.admin.update({ ...current, spec: { ...(current.spec as object), rayClusterConfig: rayClusterConfig('2') } });
  await waitFor(async () => {
    const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns));
    return s.phase === 'Running' && s.activeClusterName !== first && s.pendingClusterName === undefined;
  }, 'the upgrade to complete', 60_000);
  await waitFor(() => recorder.history[recorder.history.length - 1].weights.length === 1, 'the route to drop the old backend');
  recorder.stop();

  const second = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).activeClusterName as string;
  // maxSurge 50, step 25, written from the rules rather than by the planner under test: 25 and 50 onto
  // the pending cluster's 50 % capacity, then 75 and 100 once the old cluster gave up its half.
  expect(recordedPendingWeights(recorder.history, second)).toEqual([0, 25, 50, 75, 100]);
  const two = recorder.history.filter((h) => h.weights.length === 2);
  for (const h of two) expect(h.weights.reduce((a, w) => a + w.weight, 0)).toBe(100);
  expect(recorder.history[recorder.history.length - 1].weights).toEqual([{ name: `${second}-serve-svc`, weight: 100 }]);
  // consecutive traffic steps at least one interval apart (watch receipt times; never early by more than clock jitter)
  const stepTimes = two.slice(1).map((h) => h.at);
  for (let i = 1; i < stepTimes.length; i++) expect(stepTimes[i] - stepTimes[i - 1]).toBeGreaterThanOrEqual(950);
  // the old cluster is deleted after the (zero) deletion delay
  await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, first, ns)) === undefined, 'the old cluster to be deleted');
  // the new cluster's Serve runs at full capacity
  expect(env.fleet.dashboard(ns, second)!.targetCapacity()).toBeNull();
}
