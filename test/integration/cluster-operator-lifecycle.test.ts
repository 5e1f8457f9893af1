/**
 * Operator lifecycle on the test cluster (test/support/operator-env.ts: the real KubeRay;
 * TEST-ONLY Gateway status writer and Serve dashboards): the finalizer puts all traffic back on the active cluster when a service is
 * deleted mid-upgrade, and leader election hands the Lease over on release and on expiry.
 */
import { LeaderElector } from '../../lib/runtime/kube/leader-election';
import { HTTPROUTE, OperatorEnv, OperatorHarness, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, waitFor, startOperatorHarness } from '../support/operator-env';
import { routeBackends } from '../support/route-weights';

let harness: OperatorHarness;
let env: OperatorEnv;

beforeAll(async () => {
  harness = await startOperatorHarness();
  env = harness.env;
}, 300_000);

afterAll(async () => {
  await harness?.stop();
});

test('deleting a service mid-upgrade routes 100% to the active cluster, then releases the finalizer', async () => {
  const ns = 'finalizer';
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, 'svc', { maxSurge: 50, step: 25, interval: 2 }));
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'svc', ns)).phase === 'Running', 'the service to run');
  const svc = (await env.admin.get(RAYSHIFT_RAYSERVICE, 'svc', ns))!;
  expect(svc.metadata.finalizers).toContain('rayshift.dev/finalizer');
  const active = engineState(svc).activeClusterName as string;
  await env.admin.update({ ...svc, spec: { ...(svc.spec as object), rayClusterConfig: rayClusterConfig('3') } });
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'svc', ns)).pendingWeight > 0, 'traffic on the pending cluster');

  await env.admin.delete(RAYSHIFT_RAYSERVICE, 'svc', ns);
  await waitFor(async () => (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'svc', ns)) === undefined, 'the service to be gone');
  const route = await env.admin.get(HTTPROUTE, 'svc-httproute', ns);
  expect(routeBackends(route)).toEqual([{ name: `${active}-serve-svc`, weight: 100 }]);
}, 120_000);

test('leader election: one leader at a time; the Lease passes on release and on expiry', async () => {
  const ns = 'leases';
  await createNamespace(env.admin, ns);
  const a = new LeaderElector(env.admin, { namespace: ns, identity: 'a', leaseDurationSeconds: 2, renewMs: 300, retryMs: 200 });
  const b = new LeaderElector(env.admin, { namespace: ns, identity: 'b', leaseDurationSeconds: 2, renewMs: 300, retryMs: 200 });
  const lost: string[] = [];
  await a.run(() => lost.push('a'));
  let bLeads = false;
  const bRun = b.run(() => lost.push('b')).then(() => (bLeads = true));
  // b's attempts while a renews are the proof that it tried and was refused, not merely slow.
  await waitFor(async () => b.attempts >= 3, "b's third attempt at the Lease a holds");
  expect(a.isLeader).toBe(true);
  expect(bLeads).toBe(false);
  await a.release();
  await bRun;
  expect(b.isLeader).toBe(true);

  // A candidate that stops renewing (a crash) loses the Lease once it expires.
  const c = new LeaderElector(env.admin, { namespace: ns, identity: 'c', leaseDurationSeconds: 2, renewMs: 300, retryMs: 200 });
  const cRun = c.run(() => lost.push('c'));
  b.abandon(); // b crashes: no release, no renewals
  await cRun;
  expect(c.isLeader).toBe(true);
  await c.release();
  expect(lost).toEqual([]);
}, 60_000);
