/**
 * Faults around a running operator, on the test cluster with the real KubeRay and the TEST-ONLY
 * Gateway status writer and Serve fleet (setup in test/support/operator-resilience.ts):
 *
 * - Bad input: specs that pass CEL but fail the model get Ready=False/ValidationFailed naming the
 *   field, and the operator process keeps reconciling other services.
 * - kube-apiserver restarted mid-upgrade, while the Gateway holds its acknowledgment of the 20 %
 *   step: the in-process operator's watches resume (their backoffs end at the client's first
 *   answered request, `Reachability`) and see the acknowledgment, the upgrade completes with exactly
 *   the weights the rules give, and a spec change made after the restart is picked up.
 *
 * The operator process itself dying is in operator-resilience-crash.test.ts. Needs
 * `npm run controlplane:build` and `npm run build` (the bad-input test's child runs build/).
 */
import pino from 'pino';
import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { Operator } from '../../operator/operator';
import { HTTPROUTE, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, rayService, recordRouteWeights, recordedPendingWeights, waitFor } from '../support/operator-env';
import { changeCpu, useResilienceSuite } from '../support/operator-resilience';
import { routeBackends } from '../support/route-weights';
import { SERVICE } from '../../lib/spec/object-names';

const suite = useResilienceSuite();
const { stoppers, spawnOperator, state } = suite;

// --- bad input ------------------------------------------------------------------------------------

test('specs that pass CEL but fail the model get Ready=False/ValidationFailed naming the field; the operator process keeps reconciling others', async () => {
  const { env } = suite;
  const ns = 'badinput';
  await createNamespace(env.admin, ns);
  const op = spawnOperator(env.cp.kubeconfigPath);
  try {
    await waitFor(() => op.synced(), 'the operator to sync', 30_000);
    const notYaml = rayService(ns, 'notyaml', { serve: 'applications: [ {name: app, import_path: "x.y:z"' });
    const dup = rayService(ns, 'dupgroups');
    const cfg = (dup.spec as { rayClusterConfig: { workerGroupSpecs: unknown[] } }).rayClusterConfig;
    cfg.workerGroupSpecs = [cfg.workerGroupSpecs[0], cfg.workerGroupSpecs[0]];
    // Both pass the API server (schema + CEL).
    await env.admin.create(notYaml);
    await env.admin.create(dup);
    await env.admin.create(rayService(ns, 'healthy'));

    const invalid = async (name: string) => ((await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns))?.status ?? {}) as Record<string, any>;
    await waitFor(async () => (await invalid('notyaml')).reason === 'ValidationFailed' && (await invalid('dupgroups')).reason === 'ValidationFailed', 'both to be rejected', 30_000, 100);
    for (const [name, field] of [['notyaml', /spec\.serveConfigV2.*not valid YAML/], ['dupgroups', /spec\.rayClusterConfig\.workerGroupSpecs\[1\]\.groupName.*already used/]] as const) {
      const st = await invalid(name);
      const ready = (st.conditions as { type: string; status: string; reason: string; message: string }[]).find((c) => c.type === 'Ready')!;
      expect({ name, status: ready.status, reason: ready.reason }).toEqual({ name, status: 'False', reason: 'ValidationFailed' });
      expect(ready.message).toMatch(field);
      expect(st.message).toMatch(field);
      expect(st.phase).toBe('Invalid');
      // Nothing was created for it.
      expect((await env.admin.list(RAYCLUSTER, { namespace: ns, labelSelector: { 'ray.io/originated-from-cr-name': name } })).items).toHaveLength(0);
    }
    // The others reconcile: the healthy service serves and then upgrades.
    await waitFor(async () => (await state(ns, 'healthy')).phase === 'Running', 'healthy to serve', 60_000, 100);
    const from = (await state(ns, 'healthy')).activeClusterName as string;
    await changeCpu(env.admin, ns, 'healthy', '2');
    await waitFor(async () => {
      const st = await state(ns, 'healthy');
      return st.phase === 'Running' && st.activeClusterName !== from && st.pendingClusterName === undefined;
    }, 'healthy to upgrade', 90_000, 100);

    // No crash loop: the same process still runs, the rejections are not retried as errors, and a
    // pass over an invalid service does not rewrite its status: an annotation (which the operator
    // reconciles on) makes it run one, proven by its logged rejection, and the object stays at the
    // annotation's resourceVersion.
    const rejections = () => op.lines.filter((l) => l.includes('spec rejected') && l.includes(`"${ns}/notyaml"`)).length;
    const before = rejections();
    const rv = (await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'notyaml', ns, { metadata: { annotations: { 'test.rayshift.dev/nudge': '1' } } })).metadata.resourceVersion;
    await waitFor(() => rejections() > before, 'the operator to reconcile the annotated service', 30_000);
    expect((await env.admin.get(RAYSHIFT_RAYSERVICE, 'notyaml', ns)).metadata.resourceVersion).toBe(rv);
    expect(op.proc.exitCode).toBeNull();
    expect(op.proc.signalCode).toBeNull();
    expect(op.lines.filter((l) => l.includes('reconcile failed'))).toEqual([]);
    expect(op.lines.filter((l) => l.includes('spec rejected')).length).toBeGreaterThanOrEqual(2);

    // Fixing the spec lets it through.
    await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'notyaml', ns, { spec: { serveConfigV2: (rayService(ns, 'x').spec as { serveConfigV2: string }).serveConfigV2 } });
    await waitFor(async () => (await state(ns, 'notyaml')).phase === 'Running', 'the fixed service to serve', 60_000, 100);
    const fixed = await invalid('notyaml');
    expect(fixed.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'True' });
  } finally {
    op.proc.kill('SIGTERM');
    await op.exited;
  }
}, 120_000);

// --- kube-apiserver restart mid-upgrade ---------------------------------------------------------

test('kube-apiserver restarted mid-upgrade: the upgrade completes with the right end state and watches resume (a later spec change is picked up)', async () => {
  const { env } = suite;
  const ns = 'restart';
  await createNamespace(env.admin, ns);
  // The operator's log stays in memory and is printed if the test fails (what it retried, and when).
  const logLines: string[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line.trimEnd()) });
  const operator = new Operator({ client: env.admin, resolver: templateDashboardResolver(env.fleet.template), log, capacityPollMs: 50 });
  await operator.start();
  try {
    await env.admin.create(rayService(ns, 'kiwi', { maxSurge: 50, step: 10, interval: 1 }));
    await waitFor(async () => (await state(ns, 'kiwi')).phase === 'Running', 'kiwi to serve');
    const first = (await state(ns, 'kiwi')).activeClusterName as string;
    const recorder = await recordRouteWeights(env.admin, ns, 'kiwi-httproute');
    stoppers.push(() => recorder.stop());
    await waitFor(() => recorder.latest() !== undefined, 'the weight recorder to see the route', 30_000);
    // The Gateway does not acknowledge the route once it sends 20 % to the new cluster: the operator
    // stays at that step (WaitingForRoute) across the restart, and the route cannot change while the
    // recorder's watch is down.
    const release = env.gateway.holdWhere((route) => route.metadata.namespace === ns && route.metadata.name === 'kiwi-httproute' && routeBackends(route).length === 2 && routeBackends(route)[1].weight >= 20);
    stoppers.push(release);
    await changeCpu(env.admin, ns, 'kiwi', '2');
    await waitFor(() => {
      const backends = routeBackends(recorder.latest());
      return backends.length === 2 && backends[1].weight >= 20;
    }, 'the migration to reach 20 %', 60_000);
    const mid = await state(ns, 'kiwi');
    expect(mid.phase).toBe('Upgrading');
    await env.cp.restart();
    // The recorder's watch is live again once it delivers a version written after the restart; only
    // then may the upgrade move on.
    await env.admin.patchMerge(HTTPROUTE, 'kiwi-httproute', ns, { metadata: { annotations: { 'test.rayshift.dev/after-restart': 'true' } } });
    await waitFor(() => recorder.latest()?.metadata.annotations?.['test.rayshift.dev/after-restart'] === 'true', 'the weight recorder to watch again after the restart', 60_000);
    await release();
    await waitFor(async () => {
      const st = await state(ns, 'kiwi').catch(() => ({}) as Record<string, any>);
      return st.phase === 'Running' && st.activeClusterName === mid.pendingClusterName && st.pendingClusterName === undefined;
    }, 'the upgrade to complete after the restart', 90_000, 200);
    const second = mid.pendingClusterName as string;
    // End state (the promotion's status is written before its actions, so wait for them): route on the
    // new cluster only, stable Service selects it, old cluster deleted, Serve at full capacity, Ready.
    await waitFor(async () => {
      const route = routeBackends(await env.admin.get(HTTPROUTE, 'kiwi-httproute', ns));
      const selector = ((await env.admin.get(SERVICE, 'kiwi-serve-svc', ns)).spec as { selector: Record<string, string> }).selector['ray.io/cluster'];
      return JSON.stringify(route) === JSON.stringify([{ name: `${second}-serve-svc`, weight: 100 }]) && selector === second && (await env.admin.tryGet(RAYCLUSTER, first, ns)) === undefined;
    }, 'the route, the stable Service and the old cluster to reflect the promotion', 30_000, 100);
    expect(env.fleet.dashboard(ns, second)!.targetCapacity()).toBeNull();
    const status = (await env.admin.get(RAYSHIFT_RAYSERVICE, 'kiwi', ns)).status as { conditions: { type: string; status: string }[] };
    expect(status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    // Every weight the route carried (the recorder watched throughout but for the restart, when the
    // held route could not change): exactly the sequence written from the rules for maxSurge 50,
    // step 10 (not by the planner under test), none skipped or repeated across the restart: 0 when the
    // backend joins, 10 … 50 onto the pending cluster's 50 % capacity, 60 … 100 after the old half goes.
    expect(recordedPendingWeights(recorder.history, second)).toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    recorder.stop();

    // Only a watch tells the operator about a spec change (resync is 5 min away): a second upgrade after the restart completes.
    await changeCpu(env.admin, ns, 'kiwi', '3');
    await waitFor(async () => {
      const st = await state(ns, 'kiwi');
      return st.phase === 'Running' && st.activeClusterName !== second && st.pendingClusterName === undefined;
    }, 'the upgrade started after the restart to complete', 60_000, 100);
  } catch (e) {
    process.stderr.write(`--- restart test: engine state ${JSON.stringify(await state(ns, 'kiwi').catch((err) => String(err)))}\n--- last 150 operator log lines:\n${logLines.slice(-150).join('\n')}\n`);
    throw e;
  } finally {
    await operator.stop();
  }
}, 180_000);
