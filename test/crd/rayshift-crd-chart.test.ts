/**
 * The operator's install chart (operator/chart): the objects it synthesizes, a hardened Deployment,
 * least-privilege RBAC without wildcards, and the rayshift CRD (the generated one by default; one
 * built from another KubeRay release is test/upstream-crd/rayshift-crd-chart.test.ts). Applying it to a
 * real API server (and exercising the RBAC as the ServiceAccount) is test/integration/rayshift-crd-chart.test.ts.
 */
import { Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { SUPPORTED_VERSIONS } from '../../lib/crds/catalog';
import { RAYSHIFT_CRD_KUBERAY_VERSION, generatedRayshiftRayServiceCrd } from '../../lib/crds/generated-crd';
import {
  OPERATOR_HTTP_PORT,
  OPERATOR_LEASE_NAME,
  OperatorChart,
  OperatorChartProps,
  operatorClusterRules,
  rbacProblems,
  validateRayshiftCrd,
} from '../../operator/chart/operator-chart';
import { compileCrds, schemaErrors } from '../support/crd-schema';
import { rayshiftService } from '../spec/fixtures';

/** The oldest supported KubeRay: the generated CRD is built from the newest. */
const OLDEST = SUPPORTED_VERSIONS.kuberay[0];
function synth(props: OperatorChartProps = {}): any[] {
  return Testing.synth(new OperatorChart(Testing.app(), 'op', props));
}

const of = (objs: any[], kind: string) => objs.filter((o) => o.kind === kind);
const one = (objs: any[], kind: string) => {
  const found = of(objs, kind);
  expect(found).toHaveLength(1);
  return found[0];
};

test('synthesizes the namespace, the CRD, a ServiceAccount, RBAC, the Pod label policy and the Deployment, in apply order', () => {
  expect(synth().map((o) => `${o.apiVersion}/${o.kind}`)).toEqual([
    'v1/Namespace',
    'apiextensions.k8s.io/v1/CustomResourceDefinition',
    'v1/ServiceAccount',
    'rbac.authorization.k8s.io/v1/ClusterRole',
    'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
    'rbac.authorization.k8s.io/v1/Role',
    'rbac.authorization.k8s.io/v1/RoleBinding',
    'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy',
    'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding',
    'apps/v1/Deployment',
  ]);
  expect(synth({ createNamespace: false }).some((o) => o.kind === 'Namespace')).toBe(false);
});

test('the API server is installed only when asked for, in the operator namespace with the operator image', () => {
  expect(synth().filter((o) => o.kind === 'Deployment')).toHaveLength(1);
  const objects = synth({ operatorNamespace: 'ops', image: 'registry.example/rayshift:9', apiServer: { tlsSecretName: 'api-tls' } });
  const deployments = of(objects, 'Deployment');
  expect(deployments).toHaveLength(2);
  const api = deployments.find((d) => d.spec.template.spec.containers[0].args?.includes('api-server'));
  expect(api.metadata.namespace).toBe('ops');
  expect(api.spec.template.spec.containers[0].image).toBe('registry.example/rayshift:9');
  expect(JSON.stringify(api.spec.template.spec.volumes)).toContain('api-tls');
  expect(of(objects, 'Service').some((s) => s.metadata.namespace === 'ops')).toBe(true);
});

test('by default the CRD is the generated one (newest KubeRay), and it validates rayshift RayServices', () => {
  expect(OLDEST).not.toBe(RAYSHIFT_CRD_KUBERAY_VERSION);
  const crd = one(synth(), 'CustomResourceDefinition');
  expect(crd).toEqual(generatedRayshiftRayServiceCrd());
  expect(validateRayshiftCrd(crd).errors).toEqual([]);
  expect(schemaErrors(compileCrds([crd]), rayshiftService())).toEqual([]);
});

test('the CRD check fails synthesis when the CRD lacks what the operator relies on', () => {
  const crd: any = generatedRayshiftRayServiceCrd();
  delete crd.spec.versions[0].subresources;
  crd.spec.versions[0].schema.openAPIV3Schema.properties.status = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  expect(validateRayshiftCrd(crd).errors.map((e) => e.path)).toEqual([
    'spec.versions[0].subresources.status',
    'spec.versions[0].schema.openAPIV3Schema.properties.status',
  ]);
});

describe('Deployment', () => {
  const dep = () => one(synth(), 'Deployment');
  const container = () => dep().spec.template.spec.containers[0];

  test('runs `operator` with leader election as the ServiceAccount, two replicas', () => {
    const d = dep();
    expect(d.metadata.namespace).toBe('rayshift-system');
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.template.spec.serviceAccountName).toBe(one(synth(), 'ServiceAccount').metadata.name);
    expect(container().args).toEqual(['operator', '--leader-elect']);
    expect(container().env).toEqual(
      expect.arrayContaining([
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'RAYSHIFT_LEASE_NAME', value: OPERATOR_LEASE_NAME },
      ]),
    );
    expect(d.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'rayshift-operator' });
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
  });

  test('liveness /healthz and readiness /readyz on the declared metrics/health port', () => {
    const c = container();
    expect(c.ports).toEqual([{ name: 'http', containerPort: OPERATOR_HTTP_PORT, protocol: 'TCP' }]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe.failureThreshold * c.livenessProbe.periodSeconds).toBeGreaterThanOrEqual(30);
  });

  test('non-root, read-only root filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp', () => {
    const pod = dep().spec.template.spec;
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container().securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // The only writable path is an emptyDir on /tmp.
    expect(container().volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    expect(pod.volumes).toEqual([{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }]);
    expect(pod.hostNetwork ?? false).toBe(false);
  });

  test('requests and limits for CPU and memory', () => {
    expect(container().resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
  });

  test("Node's heap follows the memory limit (half of it as old space), as the API server's; none without a limit", () => {
    const nodeOptions = (props: Parameters<typeof synth>[0]) => one(synth(props), 'Deployment').spec.template.spec.containers[0].env.find((e: { name: string }) => e.name === 'NODE_OPTIONS');
    expect(nodeOptions({})).toEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=128 --max-semi-space-size=2' });
    expect(nodeOptions({ resources: { limits: { memory: k8s.Quantity.fromString('2Gi') } } })).toEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=1024 --max-semi-space-size=2' });
    expect(nodeOptions({ resources: { requests: { memory: k8s.Quantity.fromString('64Mi') } } })).toBeUndefined();
  });

  test('image, replicas, extra args and namespace are props', () => {
    const d = one(synth({ image: 'registry.local/rayshift:dev', replicas: 1, extraArgs: ['--log-level=debug'], operatorNamespace: 'ops' }), 'Deployment');
    expect(d.metadata.namespace).toBe('ops');
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.template.spec.containers[0].image).toBe('registry.local/rayshift:dev');
    expect(d.spec.template.spec.containers[0].args).toEqual(['operator', '--leader-elect', '--log-level=debug']);
  });

  test('the namespace enforces the restricted Pod Security Standard', () => {
    expect(one(synth(), 'Namespace').metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });
});

describe('RBAC', () => {
  const rules = (objs: any[]) => [...one(objs, 'ClusterRole').rules, ...one(objs, 'Role').rules];

  test('no wildcards and no escalate/bind/impersonate anywhere', () => {
    for (const r of rules(synth({ rayTokenAuth: { secretNames: ['ray-token'] } }))) {
      const words = [...(r.apiGroups ?? []), ...r.resources, ...r.verbs, ...(r.resourceNames ?? [])];
      expect(words.filter((w: string) => w.includes('*'))).toEqual([]);
      expect(r.verbs.filter((v: string) => ['escalate', 'bind', 'impersonate'].includes(v))).toEqual([]);
      expect(r.nonResourceURLs).toBeUndefined();
    }
  });

  test('the ClusterRole grants exactly what the operator sends (operator-access.ts; the audit test checks it against kube-apiserver)', () => {
    const granted = one(synth(), 'ClusterRole').rules.flatMap((r: any) => r.resources.flatMap((res: string) => r.apiGroups.map((g: string) => `${g || 'core'}/${res}: ${r.verbs.join(',')}`)));
    expect(granted).toEqual([
      'rayshift.dev/rayservices: list,watch,patch',
      'rayshift.dev/rayservices/status: patch',
      'rayshift.dev/rayservices/finalizers: update',
      'ray.io/rayclusters: create,get,list,watch,patch,delete',
      'ray.io/rayclusters/finalizers: update',
      'core/services: create,get,list,watch,patch,delete',
      'core/pods: list,watch,patch',
      'core/pods: delete',
      'core/nodes: list',
      'core/resourcequotas: list',
      'core/limitranges: list',
      'discovery.k8s.io/endpointslices: list,watch',
      'gateway.networking.k8s.io/gateways: create,list,watch',
      'gateway.networking.k8s.io/httproutes: create,get,list,watch,patch',
      'gateway.networking.k8s.io/grpcroutes: create,get,list,watch,patch',
      'workloads.x-k8s.io/rolebasedgroups: get,list,watch,patch',
      'workloads.x-k8s.io/rolebasedgroupwarmups: get,list,watch,create',
      'workloads.x-k8s.io/roleinstancesets: get,list,watch',
      'workloads.x-k8s.io/roleinstances: list,delete,update',
      'apps/controllerrevisions: get',
      'apps/statefulsets: get,list,watch,patch',
      'apps/deployments: list,watch',
      'apps/deployments/scale: patch',
      'leaderworkerset.x-k8s.io/leaderworkersets: get',
      'events.k8s.io/events: create',
    ]);
  });

  test('Secrets only with Ray token auth, and then get only, by name', () => {
    const noSecrets = one(synth(), 'ClusterRole').rules.filter((r: any) => r.resources.includes('secrets'));
    expect(noSecrets).toEqual([]);
    expect(one(synth({ rayTokenAuth: { secretNames: [] } }), 'ClusterRole').rules.filter((r: any) => r.resources.includes('secrets'))).toEqual([]);
    const withAuth = one(synth({ rayTokenAuth: { secretNames: ['ray-token', 'llm-token'] } }), 'ClusterRole').rules.filter((r: any) => r.resources.includes('secrets'));
    expect(withAuth).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['ray-token', 'llm-token'], verbs: ['get'] }]);
  });

  test('a ValidatingAdmissionPolicy bound with Deny limits the operator\'s Pod updates (and only its own) to the serve label', () => {
    const objs = synth({ operatorNamespace: 'ops' });
    const policy = one(objs, 'ValidatingAdmissionPolicy');
    expect(policy.apiVersion).toBe('admissionregistration.k8s.io/v1');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['UPDATE'] }]);
    expect(policy.spec.matchConditions).toEqual([{ name: 'rayshift-operator', expression: "request.userInfo.username == 'system:serviceaccount:ops:rayshift-operator'" }]);
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(one(objs, 'ValidatingAdmissionPolicyBinding').spec).toEqual({ policyName: policy.metadata.name, validationActions: ['Deny'] });
    // Installed before the Deployment, so the operator never runs without it.
    const kinds = objs.map((o) => o.kind);
    expect(kinds.indexOf('ValidatingAdmissionPolicyBinding')).toBeLessThan(kinds.indexOf('Deployment'));
  });

  test('leases only in the operator namespace, get/update only on its own Lease', () => {
    const objs = synth();
    const role = one(objs, 'Role');
    expect(role.metadata.namespace).toBe('rayshift-system');
    expect(role.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [OPERATOR_LEASE_NAME], verbs: ['get', 'update'] },
    ]);
    expect(one(objs, 'ClusterRole').rules.some((r: any) => r.resources.includes('leases'))).toBe(false);
  });

  test('sharded (shards above 1): every replica runs with --shards, and may list and update the Leases of its namespace', () => {
    const objs = synth({ replicas: 3, shards: 12 });
    expect(one(objs, 'Deployment').spec.template.spec.containers[0].args).toEqual(['operator', '--leader-elect', '--shards', '12']);
    expect(one(objs, 'Role').rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [OPERATOR_LEASE_NAME], verbs: ['get', 'update'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['list', 'update'] },
    ]);
    expect(one(synth({ shards: 1 }), 'Deployment').spec.template.spec.containers[0].args).toEqual(['operator', '--leader-elect']);
    expect(() => synth({ shards: 0 })).toThrow('shards: must be an integer from 1 to 256; got 0');
  });

  test('the bindings bind the ServiceAccount to the roles', () => {
    const objs = synth();
    const subject = { kind: 'ServiceAccount', name: 'rayshift-operator', namespace: 'rayshift-system' };
    expect(one(objs, 'ClusterRoleBinding')).toMatchObject({ roleRef: { kind: 'ClusterRole', name: one(objs, 'ClusterRole').metadata.name }, subjects: [subject] });
    expect(one(objs, 'RoleBinding')).toMatchObject({ metadata: { namespace: 'rayshift-system' }, roleRef: { kind: 'Role', name: one(objs, 'Role').metadata.name }, subjects: [subject] });
  });

  test('every rule is justified, and rbacProblems catches wildcards and escalation', () => {
    for (const r of operatorClusterRules({ rayTokenAuth: { secretNames: ['ray-token'] } })) expect(r.why.length).toBeGreaterThan(20);
    expect(rbacProblems(operatorClusterRules({ rayTokenAuth: { secretNames: ['ray-token'] } }))).toEqual([]);
    expect(rbacProblems([{ rule: { apiGroups: ['*'], resources: ['pods'], verbs: ['get'] }, why: 'x' }])).toEqual(['RBAC rule 0 (x) uses a wildcard']);
    expect(rbacProblems([{ rule: { apiGroups: [''], resources: ['roles'], verbs: ['bind'] }, why: 'y' }])).toEqual(['RBAC rule 0 (y) grants privilege escalation']);
  });
});
