/**
 * The Helm chart (charts/rayshift) installed with a real helm (scripts/build-helm.sh) into the test
 * cluster (test/support/operator-env.ts, with no rayshift CRD until the chart's crds/ installs it)
 * as a user installs it, with the operator image of scripts/build-operator-image.sh:
 * - `helm install`: the cluster's Deployment and ReplicaSet controllers make the operator's Pod
 *   from the chart's Deployment; kwok's Node runs no container, so the TEST-ONLY kubelet stand-in
 *   (test/support/pod-container.ts) runs that Pod's container as its ServiceAccount, with the
 *   chart's args, env and RBAC, and that operator carries out the same full incremental upgrade
 *   as the process-based and container suites (test/support/incremental-upgrade.ts);
 * - `helm upgrade` of values: replicas, the token-auth Secrets rule and the API server (on, its
 *   port, constrained impersonation) take effect;
 * - `helm uninstall`: every templated object is gone, the CRD (in crds/) and the RayServices stay.
 */
import { CHART_DIR, Helm, startHelm } from '../support/helm';
import { OperatorImage, buildOperatorImage, waitForContainer } from '../support/operator-container';
import { OperatorEnv, RAYSHIFT_RAYSERVICE, startOperatorEnv, waitFor } from '../support/operator-env';
import { expectIncrementalUpgradeFollowsPlan } from '../support/incremental-upgrade';
import { PodContainer, PodToRun, runPodContainer } from '../support/pod-container';
import { KubeObject } from '../../lib/runtime/kube/types';

const NS = 'rayshift-system';
const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments', namespaced: true };
const POD = { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const CLUSTER_ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false };
const CRD = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false };
/** Every object the chart's templates make with the API server off, by type. */
const TEMPLATED: [typeof DEPLOYMENT, string, string | undefined][] = [
  [DEPLOYMENT, 'rayshift-operator', NS],
  [{ apiVersion: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true }, 'rayshift-operator', NS],
  [CLUSTER_ROLE, 'rayshift-operator', undefined],
  [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false }, 'rayshift-operator', undefined],
  [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', plural: 'roles', namespaced: true }, 'rayshift-operator-leader-election', NS],
  [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true }, 'rayshift-operator-leader-election', NS],
  [{ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies', namespaced: false }, 'rayshift-operator-pod-labels', undefined],
  [{ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', plural: 'validatingadmissionpolicybindings', namespaced: false }, 'rayshift-operator-pod-labels', undefined],
];

const API_SERVICE = { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true };
/** What `apiServer.enabled` adds. */
const API_SERVER_TEMPLATED: typeof TEMPLATED = [
  [DEPLOYMENT, 'rayshift-api-server', NS],
  [API_SERVICE, 'rayshift-api-server', NS],
  [CLUSTER_ROLE, 'rayshift-api-server:impersonator', undefined],
  [CLUSTER_ROLE, 'rayshift-api-server:namespace-lister', undefined],
];

let helm: Helm;
let image: OperatorImage;
let env: OperatorEnv;
let operator: PodContainer | undefined;

const kube = () => ['--kubeconfig', env.cp.kubeconfigPath, '--namespace', NS];

async function operatorPods(): Promise<KubeObject[]> {
  return (await env.admin.list(POD, { namespace: NS })).items.filter((p) => (p.metadata.labels ?? {})['app.kubernetes.io/name'] === 'rayshift-operator' && p.metadata.deletionTimestamp === undefined);
}

beforeAll(async () => {
  helm = startHelm();
  image = buildOperatorImage();
  env = await startOperatorEnv({ rayshiftCrd: false });
}, 1_800_000);

afterAll(async () => {
  operator?.stop();
  await env?.stop();
  helm?.cleanup();
});

test('helm install: the chart\'s CRD, RBAC and Deployment; its Pod\'s container carries out a full incremental upgrade', async () => {
  const [repository, tag] = [image.ref.slice(0, image.ref.lastIndexOf(':')), image.ref.slice(image.ref.lastIndexOf(':') + 1)];
  const values = helm.valuesFile('install', {
    image: { repository, tag, pullPolicy: 'Never' },
    replicas: 1,
    extraArgs: ['--dashboard-address-template', env.fleet.template],
  });
  const out = helm.run(['install', 'rayshift', CHART_DIR, ...kube(), '--create-namespace', '-f', values]);
  expect(out).toContain('STATUS: deployed');
  // helm installs crds/ first and waits until they are established
  const crd = await env.admin.get(CRD, 'rayservices.rayshift.dev');
  expect((crd.status as { conditions: { type: string; status: string }[] }).conditions).toContainEqual(expect.objectContaining({ type: 'Established', status: 'True' }));

  let pod: KubeObject | undefined;
  await waitFor(async () => {
    [pod] = await operatorPods();
    return pod !== undefined;
  }, 'the ReplicaSet controller to create the operator\'s Pod');
  operator = await runPodContainer(image, env.cp, pod as unknown as PodToRun, 'RAYSHIFT_HTTP_PORT');
  await waitForContainer(operator.container, () => operator!.container.log.some((l) => l.includes('watches synced')), 'the chart\'s operator to sync its watches');
  await expectIncrementalUpgradeFollowsPlan(env, 'helm-upgrade');
}, 600_000);

test('helm upgrade: changed values take effect (2 replicas; the token-auth Secrets rule; the API server on port 9443)', async () => {
  const before = await env.admin.get(CLUSTER_ROLE, 'rayshift-operator');
  expect(JSON.stringify(before.rules)).not.toContain('secrets');
  expect(await env.admin.tryGet(API_SERVICE, 'rayshift-api-server', NS)).toBeUndefined();
  const out = helm.run(['upgrade', 'rayshift', CHART_DIR, ...kube(), '--reuse-values', '--set', 'replicas=2', '--set', 'rbac.rayTokenAuthSecrets={ray-token}',
    '--set', 'apiServer.enabled=true', '--set', 'apiServer.tlsSecretName=api-tls', '--set', 'apiServer.port=9443', '--set', 'apiServer.impersonation=constrained']);
  expect(out).toContain('REVISION: 2');
  expect((await env.admin.get(DEPLOYMENT, 'rayshift-operator', NS)).spec).toMatchObject({ replicas: 2 });
  await waitFor(async () => (await operatorPods()).length === 2, 'the ReplicaSet controller to create the second Pod');
  const after = await env.admin.get(CLUSTER_ROLE, 'rayshift-operator');
  expect(after.rules).toContainEqual({ apiGroups: [''], resources: ['secrets'], resourceNames: ['ray-token'], verbs: ['get'] });
  expect((await env.admin.get(API_SERVICE, 'rayshift-api-server', NS)).spec).toMatchObject({ ports: [expect.objectContaining({ port: 9443 })] });
  expect(JSON.stringify((await env.admin.get(CLUSTER_ROLE, 'rayshift-api-server:impersonator')).rules)).toContain('impersonate:user-info');
  expect(helm.run(['history', 'rayshift', ...kube(), '--output', 'json'])).toMatch(/"revision":2,[^}]*"status":"deployed"/);
}, 120_000);

test('helm uninstall: the templated objects are gone; the CRD and the RayServices stay', async () => {
  expect(helm.run(['uninstall', 'rayshift', ...kube(), '--wait'])).toContain('release "rayshift" uninstalled');
  for (const [type, name, ns] of [...TEMPLATED, ...API_SERVER_TEMPLATED]) expect({ kind: type.kind, name, left: (await env.admin.tryGet(type, name, ns)) !== undefined }).toEqual({ kind: type.kind, name, left: false });
  await waitFor(async () => (await operatorPods()).length === 0, 'the garbage collector to delete the operator\'s Pods');
  expect(await env.admin.tryGet(CRD, 'rayservices.rayshift.dev')).toBeDefined();
  expect(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', 'helm-upgrade')).toBeDefined();
}, 120_000);
