/**
 * The operator with exactly the install chart's RBAC, on the test cluster
 * (test/support/operator-env.ts: the real KubeRay runs the operator's RayClusters as kwok
 * Pods; TEST-ONLY Gateway status writer and Serve fleet): the chart's non-CRD objects (Namespace,
 * ServiceAccount, ClusterRole and binding, leader-election Role and binding, Deployment) are
 * created, `node bin/rayshift.js operator --leader-elect` runs as a child process with a kubeconfig
 * holding the ServiceAccount's token, and a full incremental upgrade succeeds — with
 * OwnerReferencesPermissionEnforcement on, as on clusters that enforce who may set
 * `blockOwnerDeletion`. The same token is then refused what the role does not grant.
 *
 * Needs `npm run controlplane:build`, `bash scripts/build-cluster.sh kwok kuberay` and `npm run build`
 * (the child runs build/).
 */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';
import { KubeClient } from '../../lib/runtime/kube/client';
import { isStatus } from '../../lib/runtime/kube/errors';
import { OPERATOR_LEASE_NAME, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../operator/chart/operator-chart';
import { OperatorEnv, startOperatorEnv, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, recordRouteWeights, waitFor, recordedPendingWeights } from '../support/operator-env';
import { spawnOperatorChild } from '../support/operator-child';
import { installOperatorChart } from '../support/operator-chart-install';

const ROOT = projectRoot();
const NS = 'serving';
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases', namespaced: true };

let env: OperatorEnv;
let objects: any[];
let token: string;
let kubeconfig: string;
let child: ChildProcess | undefined;


beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'build', 'lib', 'cli', 'main.js'))) throw new Error('build/ is missing: run `npm run build` first (the operator child runs bin/rayshift.js → build/)');
  env = await startOperatorEnv({ apiserverArgs: ['--enable-admission-plugins=OwnerReferencesPermissionEnforcement'] });
  ({ objects, token, kubeconfig } = await installOperatorChart(env, env.cp.dir));
  await createNamespace(env.admin, NS);
}, 300_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await env?.stop();
});

test('the chart creates the operator\'s identity and RBAC, with no Secrets and, in apps/*, only StatefulSets read, watched and patched, ControllerRevisions read, Deployments listed and watched and their scale patched', () => {
  expect(objects.map((o) => o.kind)).toEqual(['Namespace', 'CustomResourceDefinition', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'Deployment']);
  const role = objects.find((o) => o.kind === 'ClusterRole');
  expect(role.rules.some((r: any) => r.resources.includes('secrets'))).toBe(false);
  // The RBG executor reads a role's StatefulSet status where the group's own status is stale, watches
  // them for v1alpha1 groups and carries a round's partition into them (RBG v0.6.0); a rollback on
  // RBG v0.8 reads the template of the revision before the rollout; a routed rule's router
  // Deployments are read and the old release's scaled (never their spec); nothing else in apps.
  expect(role.rules.filter((r: any) => r.apiGroups.includes('apps'))).toEqual([
    { apiGroups: ['apps'], resources: ['controllerrevisions'], verbs: ['get'] },
    { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list', 'watch'] },
    { apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['patch'] },
  ]);
});

test('as its ServiceAccount, with the chart\'s RBAC only, the operator (child process, leader-elected) runs a full incremental upgrade', async () => {
  const operator = spawnOperatorChild(kubeconfig, env.fleet.template, ['--leader-elect', '--lease-namespace', OPERATOR_NAMESPACE]);
  const { proc, lines, exited } = operator;
  child = proc;
  /** Runs a wait; on failure, adds the operator's last log lines to the error. */
  const logged = async (wait: () => Promise<void>) => {
    try {
      await wait();
    } catch (e) {
      throw new Error(`${(e as Error).message}; operator log:\n${lines.slice(-30).join('\n')}`);
    }
  };
  let recorder: Awaited<ReturnType<typeof recordRouteWeights>> | undefined;
  try {
    await logged(() => waitFor(() => operator.synced(), 'the operator to lead and sync', 60_000));
    // It holds its Lease (created and renewed with the Role's create/get/update).
    const lease = await env.admin.get(LEASE, OPERATOR_LEASE_NAME, OPERATOR_NAMESPACE);
    expect((lease.spec as { holderIdentity?: string }).holderIdentity).toMatch(new RegExp(`-${proc.pid}$`));

    await env.admin.create(rayService(NS, 'fruit', { maxSurge: 50, step: 25, interval: 1 }));
    const state = async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', NS));
    await logged(() => waitFor(async () => (await state()).phase === 'Running', 'the first cluster to serve', 60_000, 100));
    const first = (await state()).activeClusterName as string;
    recorder = await recordRouteWeights(env.admin, NS, 'fruit-httproute');
    const rec = recorder;
    await logged(() => waitFor(() => rec.history.length > 0, 'the route to be watched'));
    await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'fruit', NS, { spec: { rayClusterConfig: rayClusterConfig('2') } });
    await logged(() => waitFor(async () => {
      const s = await state();
      return s.phase === 'Running' && s.activeClusterName !== first && s.pendingClusterName === undefined;
    }, 'the upgrade to complete', 90_000, 100));
    const second = (await state()).activeClusterName as string;
    await waitFor(() => rec.history[rec.history.length - 1].weights.length === 1, 'the route to drop the old backend');
    await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, first, NS)) === undefined, 'the old cluster to be deleted');
    recorder.stop();

    // maxSurge 50, step 25, written from the rules (not by the planner under test): 25 and 50 onto the
    // pending cluster's 50 % capacity, then 75 and 100 once the old cluster gave up its half.
    expect(recordedPendingWeights(rec.history, second)).toEqual([0, 25, 50, 75, 100]);
    expect(rec.history[rec.history.length - 1].weights).toEqual([{ name: `${second}-serve-svc`, weight: 100 }]);
    // Everything it created exists: the per-cluster backend Service (owned by its RayCluster, which
    // needs `update` on rayclusters/finalizers under OwnerReferencesPermissionEnforcement), the
    // stable Services, the Gateway and route (owned by the RayService).
    const svc = await env.admin.get({ apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true }, `${second}-serve-svc`, NS);
    expect(svc.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'RayCluster', name: second, blockOwnerDeletion: true });
    expect(await env.admin.tryGet({ apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true }, 'fruit-serve-svc', NS)).toBeDefined();
    expect(await env.admin.tryGet({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', plural: 'gateways', namespaced: true }, 'fruit-gateway', NS)).toBeDefined();
    expect(env.fleet.dashboard(NS, second)!.targetCapacity()).toBeNull();
    // Not one request was refused along the way.
    expect(lines.filter((l) => /reconcile failed|forbidden|\b403\b/i.test(l))).toEqual([]);

    // SIGTERM: it stops and hands its Lease back (an `update` of that one Lease).
    proc.kill('SIGTERM');
    await exited;
    expect(proc.exitCode).toBe(0);
    const released = await env.admin.get(LEASE, OPERATOR_LEASE_NAME, OPERATOR_NAMESPACE);
    expect((released.spec as { holderIdentity?: string }).holderIdentity).toBe('');
  } finally {
    recorder?.stop();
    proc.kill('SIGKILL');
  }
}, 150_000);

test('the same token is refused what the role does not grant (403)', async () => {
  const as = { token };
  // Secrets: not granted (rayTokenAuth is off).
  expect((await env.cp.request('GET', `/api/v1/namespaces/${NS}/secrets`, undefined, as)).status).toBe(403);
  expect((await env.cp.request('GET', `/api/v1/namespaces/${OPERATOR_NAMESPACE}/secrets`, undefined, as)).status).toBe(403);
  // Its own Deployment: no apps/* rights at all.
  const dep = await env.cp.request('GET', `/apis/apps/v1/namespaces/${OPERATOR_NAMESPACE}/deployments/${OPERATOR_NAME}`);
  expect(dep.status).toBe(200);
  const scaled = { ...dep.body, spec: { ...dep.body.spec, replicas: 5 } };
  expect((await env.cp.request('PUT', `/apis/apps/v1/namespaces/${OPERATOR_NAMESPACE}/deployments/${OPERATOR_NAME}`, scaled, as)).status).toBe(403);
  // A RayService's spec through PUT: it may watch RayServices (no get: it reads its watch cache), not update them.
  const rsPath = `/apis/rayshift.dev/v1alpha1/namespaces/${NS}/rayservices/fruit`;
  expect((await env.cp.request('GET', rsPath, undefined, as)).status).toBe(403);
  const rs = await env.cp.request('GET', rsPath);
  expect(rs.status).toBe(200);
  const put = await env.cp.request('PUT', rsPath, { ...rs.body, spec: { ...rs.body.spec, rayClusterDeletionDelaySeconds: 60 } }, as);
  expect(put.status).toBe(403);
  expect(put.body.reason).toBe('Forbidden');
  // Nor delete them, nor touch its RBAC.
  expect((await env.cp.request('DELETE', rsPath, undefined, as)).status).toBe(403);
  expect((await env.cp.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${OPERATOR_NAME}`, undefined, as)).status).toBe(403);
  // The same refusal through the operator's own client, from the same kubeconfig.
  const client = KubeClient.fromKubeconfig(kubeconfig);
  try {
    const err = await client.list({ apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true }, { namespace: NS }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStatus(err, 403)).toBe(true);
    // …while what it is granted still works with that client.
    expect((await client.list(RAYSHIFT_RAYSERVICE, { namespace: NS })).items.map((o) => o.metadata.name)).toEqual(['fruit']);
  } finally {
    client.close();
  }
  // Unchanged by the refused writes.
  expect((await env.admin.get(RAYSHIFT_RAYSERVICE, 'fruit', NS)).spec).toMatchObject({ rayClusterDeletionDelaySeconds: 0 });
});
