/**
 * The chart's RBAC against what the operator sends, on the test cluster (test/support/operator-env.ts:
 * the real KubeRay runs the operator's RayClusters as kwok Pods; TEST-ONLY Gateway status writer and
 * Serve fleet), with kube-apiserver's audit log as the oracle: every request of the operator's
 * ServiceAccount is logged (`--audit-policy-file`), the chart (with `rayTokenAuth`) is installed, and
 * the operator runs as that ServiceAccount, leader-elected, through an incremental HTTPRoute upgrade,
 * a GRPCRoute upgrade, a service whose dashboards need the token of a named Secret, and a service
 * deletion (finalizer). Then:
 * - no request of the operator was refused;
 * - every (group, resource, subresource, verb) it sent is granted by the synthesized ClusterRole or Role;
 * - every granted one was sent, except the ones this suite cannot reach, listed below with why.
 * The ValidatingAdmissionPolicy the chart installs lets the same identity change a Pod's
 * `ray.io/serve` label and nothing else (its image, another label, an annotation: refused), and the
 * operator's own label patches of KubeRay's head Pods pass it.
 *
 * Needs `npm run controlplane:build` and `bash scripts/build-cluster.sh kwok kuberay`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { KubeClient } from '../../lib/runtime/kube/client';
import { LeaderElector } from '../../lib/runtime/kube/leader-election';
import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { OPERATOR_LEASE_NAME, OPERATOR_NAME, OPERATOR_NAMESPACE } from '../../operator/chart/operator-chart';
import { NODE_TYPE_LABEL, POD, SERVE_LABEL } from '../../lib/spec/object-names';
import { Operator } from '../../operator/operator';
import { RbgRolloutController } from '../../operator/rbg-controller';
import { OperatorEnv, RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, startOperatorEnv, waitFor } from '../support/operator-env';
import { installOperatorChart } from '../support/operator-chart-install';

const SA_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_NAME}`;
const TOKEN_NS = 'token-auth';
const RAY_TOKEN = 'ray-dashboard-token-9b2e';
/** Requests this file sends itself with the operator's token (the policy probe), left out of the audit. */
const PROBE_NS = 'policy-probe';
const SILENT = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

/**
 * Granted but not sent by this suite, each with why: a grant added to the chart and never sent
 * fails the test until it is exercised or named here.
 */
const NOT_REACHED: Record<string, string> = {
  'ray.io/rayclusters/finalizers update': 'checked by OwnerReferencesPermissionEnforcement on the RayCluster\'s owned Service create (admission, never a request); a missing grant refuses that create',
  'rayshift.dev/rayservices/finalizers update': 'the same check for the objects a RayService owns',
  'ray.io/rayclusters get': 're-read only after a create answered 409 (a pass that crashed between the create and its status write)',
  'core/services get': 're-read only after a create answered 409',
  'gateway.networking.k8s.io/httproutes get': 're-read only after a weight patch\'s test guard failed (a concurrent writer)',
  'gateway.networking.k8s.io/grpcroutes get': 're-read only after a weight patch\'s test guard failed',
  'workloads.x-k8s.io/rolebasedgroups get': 'RBG executor passes: the executor watches the installed RBG CRDs, but no group rolls out here (no RBG controller; cluster-rbg-operator.test.ts runs one)',
  'workloads.x-k8s.io/rolebasedgroups patch': 'RBG executor',
  'workloads.x-k8s.io/rolebasedgroupwarmups get': 'RBG v0.8 warmups of a rollout (watched here, none created)',
  'workloads.x-k8s.io/rolebasedgroupwarmups create': 'RBG v0.8 warmups',
  'workloads.x-k8s.io/roleinstancesets get': 'RBG executor, a role whose group status is stale',
  'workloads.x-k8s.io/roleinstances list': 'a rollback round of the RBG executor (cluster-rbg-analysis.test.ts)',
  'workloads.x-k8s.io/roleinstances delete': 'a rollback round of the RBG executor',
  'workloads.x-k8s.io/roleinstances update': 'a rollback round on RBG v0.8 reverting a last ordinal in place (cluster-rbg-analysis.test.ts, RBG v0.8.0-alpha.5)',
  'apps/controllerrevisions get': 'the same revert reads the template of the revision before the rollout',
  'apps/statefulsets get': 'RBG v1alpha1 roles run as StatefulSets',
  'apps/statefulsets list': 'the watch of StatefulSets runs only for v1alpha1 groups (RBG v0.6.0), none served here',
  'apps/statefulsets watch': 'the same watch',
  'apps/statefulsets patch': 'RBG v0.6.0 StatefulSets whose partition a round carries (cluster-rbg-analysis.test.ts, RBG v0.6.0)',
  'core/pods delete': 'a rollback round of a StatefulSet role (cluster-rbg-analysis.test.ts, RBG v0.6.0)',
  'apps/deployments/scale patch': 'a routed rule\'s old router scaled to 0 after its rollout, and back (cluster-rbg-router-operator.test.ts)',
  'leaderworkerset.x-k8s.io/leaderworkersets get': 'RBG v1alpha1 roles run as LeaderWorkerSets',
  'events.k8s.io/events create': 'Events of RBG rounds and analysis verdicts (cluster-operator-analysis.test.ts, cluster-rbg-operator.test.ts)',
};

let env: OperatorEnv;
let objects: any[];
let token: string;
let auditLog: string;
let dir: string;
let client: KubeClient;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-audit-'));
  const policy = path.join(dir, 'audit-policy.yaml');
  auditLog = path.join(dir, 'audit.log');
  // Metadata of every request of the operator's identity (no bodies), nothing else.
  fs.writeFileSync(policy, stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', omitStages: ['RequestReceived'], rules: [{ level: 'Metadata', users: [SA_USER] }, { level: 'None' }] }));
  env = await startOperatorEnv({
    apiserverArgs: ['--enable-admission-plugins=OwnerReferencesPermissionEnforcement', `--audit-policy-file=${policy}`, `--audit-log-path=${auditLog}`, '--audit-log-mode=blocking'],
    serve: (ns) => ({ replicaStartDelayMs: 20, ...(ns === TOKEN_NS ? { token: RAY_TOKEN } : {}) }),
  });
  let kubeconfig: string;
  ({ objects, token, kubeconfig } = await installOperatorChart(env, dir, { rayTokenAuth: { secretNames: ['ray-token'] } }));
  client = KubeClient.fromKubeconfig(kubeconfig);
  for (const ns of ['serving', 'grpc', TOKEN_NS, PROBE_NS]) await createNamespace(env.admin, ns);
  await env.admin.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ray-token', namespace: TOKEN_NS }, data: { auth_token: Buffer.from(RAY_TOKEN).toString('base64') } });
  // A Pod to probe the policy with; the policy is in force once it refuses the operator an image change.
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'probe', namespace: PROBE_NS, labels: { 'ray.io/serve': 'false', app: 'probe' }, annotations: { note: 'a' } }, spec: { containers: [{ name: 'c', image: 'registry.local/app:1' }] } };
  expect((await env.cp.request('POST', `/api/v1/namespaces/${PROBE_NS}/pods`, pod)).status).toBe(201);
  // A new value each time: a patch that changes nothing passes the policy.
  let attempt = 0;
  await waitFor(async () => (await patchProbe({ metadata: { annotations: { attempt: String(++attempt) } } })).status === 422, 'the ValidatingAdmissionPolicy to be in force');
}, 300_000);

afterAll(async () => {
  client?.close();
  await env?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A merge patch of the probe Pod as the operator's ServiceAccount. */
function patchProbe(body: unknown) {
  return env.cp.request('PATCH', `/api/v1/namespaces/${PROBE_NS}/pods/probe`, body, { token, contentType: 'application/merge-patch+json' });
}

test('the policy lets the operator change a Pod\'s ray.io/serve label and nothing else', async () => {
  const serve = await patchProbe({ metadata: { labels: { 'ray.io/serve': 'true' } } });
  expect(serve.status).toBe(200);
  expect(serve.body.metadata.labels).toEqual({ 'ray.io/serve': 'true', app: 'probe' });
  const refused = [
    [{ spec: { containers: [{ name: 'c', image: 'attacker.example/shell:1' }] } }, 'may not change a Pod\'s spec'],
    [{ metadata: { labels: { app: 'other' } } }, 'may change no Pod label but ray.io/serve'],
    [{ metadata: { labels: { app: null } } }, 'may change no Pod label but ray.io/serve'],
    [{ metadata: { labels: { extra: 'x' } } }, 'may change no Pod label but ray.io/serve'],
    [{ metadata: { labels: { 'ray.io/serve': 'maybe' } } }, 'only to "true" or "false"'],
    [{ metadata: { annotations: { note: 'b' } } }, 'may not change a Pod\'s annotations'],
    [{ metadata: { finalizers: ['example.com/hold'] } }, 'may not change a Pod\'s annotations, owner references or finalizers'],
  ] as const;
  for (const [body, message] of refused) {
    const r = await patchProbe(body);
    expect({ body, status: r.status, message: String(r.body?.message).includes(message) }).toEqual({ body, status: 422, message: true });
  }
  // The admin is not matched: the same image change is its to make.
  const admin = await env.cp.request('PATCH', `/api/v1/namespaces/${PROBE_NS}/pods/probe`, { spec: { containers: [{ name: 'c', image: 'registry.local/app:2' }] } }, { contentType: 'application/merge-patch+json' });
  expect(admin.status).toBe(200);
});

test('as its ServiceAccount the operator runs its paths, and the chart grants exactly what it sent', async () => {
  const elector = new LeaderElector(client, { namespace: OPERATOR_NAMESPACE, name: OPERATOR_LEASE_NAME, identity: 'audit-test' });
  await elector.run(() => undefined);
  const operator = new Operator({ client, resolver: templateDashboardResolver(env.fleet.template), log: SILENT, capacityPollMs: 50 });
  const rbg = new RbgRolloutController({ client, log: SILENT });
  try {
    await operator.start();
    await rbg.start();
    const state = async (ns: string, name: string) => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns));
    const upgrade = async (ns: string, name: string, config: (cpu: string) => Record<string, unknown>) => {
      await waitFor(async () => (await state(ns, name)).phase === 'Running', `${ns}/${name} to serve`, 90_000, 100);
      const first = (await state(ns, name)).activeClusterName;
      await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, name, ns, { spec: { rayClusterConfig: config('2') } });
      await waitFor(async () => {
        const s = await state(ns, name);
        return s.phase === 'Running' && s.activeClusterName !== first && s.pendingClusterName === undefined;
      }, `the upgrade of ${ns}/${name}`, 120_000, 100);
      await waitFor(async () => (await env.admin.tryGet(RAYCLUSTER, first, ns)) === undefined, `the old cluster of ${ns}/${name} to be deleted`);
    };
    const grpcConfig = (cpu: string) => {
      const c = rayClusterConfig(cpu) as any;
      c.headGroupSpec.template.spec.containers[0].ports.push({ name: 'serve-grpc', containerPort: 9000 });
      return c;
    };
    const tokenConfig = (cpu: string) => ({ ...rayClusterConfig(cpu), rayVersion: '2.52.0', authOptions: { mode: 'token', secretName: 'ray-token' } });
    const grpcServe = 'grpc_options:\n  port: 9000\n  grpc_servicer_functions:\n  - echo_pb2_grpc.add_EchoServicer_to_server\napplications:\n- name: echo\n  import_path: rayshift_testapp.grpc_app:build\n  route_prefix: null\n  deployments:\n  - name: Echo\n    num_replicas: 2\n';
    const grpc = rayService('grpc', 'echo', { extensions: { routeKind: 'GRPC' }, serve: grpcServe });
    (grpc.spec as Record<string, unknown>).rayClusterConfig = grpcConfig('1');
    const tok = rayService(TOKEN_NS, 'fruit');
    (tok.spec as Record<string, unknown>).rayClusterConfig = tokenConfig('1');
    await env.admin.create(rayService('serving', 'fruit'));
    await env.admin.create(grpc);
    await env.admin.create(tok);
    await Promise.all([
      upgrade('serving', 'fruit', rayClusterConfig),
      upgrade('grpc', 'echo', grpcConfig),
      upgrade(TOKEN_NS, 'fruit', tokenConfig),
    ]);
    // Every head Pod serves: the label patches passed the policy.
    const servingHeads = async () => (await env.admin.list(POD, { namespace: 'serving', labelSelector: { [NODE_TYPE_LABEL]: 'head', [SERVE_LABEL]: 'true' } })).items;
    await waitFor(async () => (await servingHeads()).length > 0, 'a head Pod labelled ray.io/serve=true');
    // Deletion: the finalizer is released, then the service is gone.
    await env.admin.delete(RAYSHIFT_RAYSERVICE, 'fruit', 'serving');
    await waitFor(async () => (await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', 'serving')) === undefined, 'the deleted service to be released');
  } finally {
    await operator.stop();
    await rbg.stop();
    await elector.release();
  }

  const events = fs.readFileSync(auditLog, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l))
    .filter((e) => e.user?.username === SA_USER && e.objectRef !== undefined && e.objectRef.namespace !== PROBE_NS);
  const key = (group: string, resource: string, verb: string) => `${group || 'core'}/${resource} ${verb}`;
  // Refused by RBAC (403) or by the Pod label policy (422 on a Pod).
  const refused = events.filter((e) => e.responseStatus?.code === 403 || (e.objectRef.resource === 'pods' && e.responseStatus?.code === 422)).map((e) => `${e.verb} ${e.requestURI}`);
  expect(refused).toEqual([]);
  const sent = new Set(events.map((e) => key(e.objectRef.apiGroup ?? '', e.objectRef.subresource ? `${e.objectRef.resource}/${e.objectRef.subresource}` : e.objectRef.resource, e.verb)));
  const rules = [...objects.find((o) => o.kind === 'ClusterRole').rules, ...objects.find((o) => o.kind === 'Role').rules];
  const granted = new Set<string>(rules.flatMap((r: any) => r.apiGroups.flatMap((g: string) => r.resources.flatMap((res: string) => r.verbs.map((v: string) => key(g, res, v))))));
  expect([...sent].filter((s) => !granted.has(s)).sort()).toEqual([]);
  expect([...granted].filter((g) => !sent.has(g)).sort()).toEqual(Object.keys(NOT_REACHED).sort());
  // The one name-limited cluster-wide grant names exactly the Secret the operator read.
  const secretsRead = [...new Set(events.filter((e) => e.objectRef.resource === 'secrets').map((e) => `${e.verb} ${e.objectRef.name}`))];
  expect(secretsRead).toEqual(['get ray-token']);
  expect(rules.filter((r: any) => r.resources.includes('secrets'))).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['ray-token'], verbs: ['get'] }]);
  // Listed for the record (the closing note names them).
  process.stdout.write(`operator requests seen in the audit log (${events.length}):\n${[...sent].sort().join('\n')}\n`);
}, 300_000);
