/** Version-matched routing in the `RoleBasedGroup` construct: the release label on prefill and decode, one router per release, the route between them. */
import { createHash } from 'node:crypto';
import { Chart, Testing } from 'cdk8s';
import { CoordinatedPolicy, RoleBasedGroup, RoleBasedGroupProps } from '../../lib/cdk8s';
import type { PodTemplateJson, RoleSpec } from '../../lib/spec';
import { ofKind, single, synthError } from './helpers';

const engine = (image: string): PodTemplateJson => ({ spec: { containers: [{ name: 'engine', image }] } });
const roles = (prefillImage = 'sglang:v1'): RoleSpec[] => [
  { name: 'prefill', replicas: 4, template: engine(prefillImage) },
  { name: 'decode', replicas: 2, template: engine('sglang:v1') },
  { name: 'gateway', replicas: 1, template: engine('nginx:1') },
];
const router = { kind: 'sglang' as const, image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'inference' } };

function synth(props: Partial<RoleBasedGroupProps> = {}, routerExtra: object = {}) {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'serving' });
  const group = new RoleBasedGroup(chart, 'pd', {
    metadata: { name: 'pd', namespace: 'serving' },
    executor: 'operator',
    roles: roles(),
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%' }, router: { ...router, ...routerExtra } }],
    ...props,
  });
  return { group, manifests: Testing.synth(chart) };
}

// The release, hashed here from the literal canonical JSON of the two templates (keys sorted).
const V1 = createHash('sha256')
  .update('{"decode":{"spec":{"containers":[{"image":"sglang:v1","name":"engine"}]}},"prefill":{"spec":{"containers":[{"image":"sglang:v1","name":"engine"}]}}}')
  .digest('hex')
  .slice(0, 10);

test('outside a rollout: the release on prefill and decode pods, one router over exactly that release, a route to it alone', () => {
  const { group, manifests } = synth();
  expect(group.routerRevision('pd')).toBe(V1);
  const g = single(manifests, 'RoleBasedGroup');
  const meta = (i: number) => g.spec.roles[i].standalonePattern.template.metadata;
  expect(meta(0)).toEqual({ labels: { 'rayshift.dev/router-revision': V1 }, annotations: { 'sglang.ai/bootstrap-port': '8998' } });
  expect(meta(1)).toEqual({ labels: { 'rayshift.dev/router-revision': V1 } });
  expect(meta(2)).toBeUndefined();
  // The routed roles' Pods are replaced, not updated in place: sglang-router's discovery drops a Pod
  // only at its deletion, so a Pod relabelled in place would stay in the old release's router. RBG
  // v0.7.0 honors RecreatePod only in a Stateless RoleInstanceSet.
  expect(g.spec.roles.map((r: any) => [r.rolloutStrategy, r.annotations])).toEqual([
    [{ type: 'RollingUpdate', rollingUpdate: { type: 'RecreatePod' } }, { 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateless' }],
    [{ type: 'RollingUpdate', rollingUpdate: { type: 'RecreatePod' } }, { 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateless' }],
    [undefined, undefined],
  ]);
  expect(JSON.parse(g.metadata.annotations['rayshift.dev/coordination']).policies[0].router).toEqual(router);

  const d = single(manifests, 'Deployment');
  expect(d.metadata.name).toBe(`pd-pd-router-${V1}`);
  const labels = { 'rayshift.dev/router-for': 'pd', 'rayshift.dev/router-rule': 'pd', 'rayshift.dev/router-revision': V1 };
  expect(d.spec.selector.matchLabels).toEqual(labels);
  // The replicas are the operator's (scaled to 0 once the release's router is done): a re-apply must not carry them.
  expect(d.spec.replicas).toBeUndefined();
  const c = d.spec.template.spec.containers[0];
  expect(d.spec.template.spec.serviceAccountName).toBe('pd-pd-router');
  expect([c.image, ...c.command, ...c.args]).toEqual([
    'lmsysorg/sglang:v0.5.5', 'python3', '-m', 'sglang_router.launch_router',
    '--pd-disaggregation', '--service-discovery', '--service-discovery-namespace', '$(POD_NAMESPACE)', '--service-discovery-port', '30000',
    '--prefill-selector', 'rbg.workloads.x-k8s.io/group-name=pd', 'rbg.workloads.x-k8s.io/role-name=prefill', `rayshift.dev/router-revision=${V1}`,
    '--decode-selector', 'rbg.workloads.x-k8s.io/group-name=pd', 'rbg.workloads.x-k8s.io/role-name=decode', `rayshift.dev/router-revision=${V1}`,
    '--host', '0.0.0.0', '--port', '30000',
  ]);
  // Ready only with a healthy pair discovered (sglang-router's /readiness), not when it merely listens.
  expect(c.readinessProbe).toEqual({ httpGet: { path: '/readiness', port: 30000 }, periodSeconds: 2 });
  const svc = single(manifests, 'Service');
  expect([svc.metadata.name, svc.spec.selector, svc.spec.ports]).toEqual([`pd-pd-router-${V1}`, labels, [{ name: 'http', port: 30000, targetPort: 30000, protocol: 'TCP' }]]);
  expect(single(manifests, 'Role').rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }]);
  expect(single(manifests, 'RoleBinding').subjects).toEqual([{ kind: 'ServiceAccount', name: 'pd-pd-router', namespace: 'serving' }]);
  const route = single(manifests, 'HTTPRoute');
  expect([route.metadata.name, route.spec.parentRefs, route.spec.rules]).toEqual(['pd-pd-router', [{ name: 'inference' }], [{ backendRefs: [{ name: `pd-pd-router-${V1}`, port: 30000, weight: 100 }] }]]);
  // The operator watches routes by these labels (a reset of the weights wakes the group).
  expect(route.metadata.labels).toEqual({ 'rayshift.dev/router-for': 'pd', 'rayshift.dev/router-rule': 'pd' });
});

test('a new prefill image is a new release of both roles; with previousRevision both routers run and the route starts all on the old one', () => {
  const { group, manifests } = synth({ roles: roles('sglang:v2') }, { previousRevision: V1 });
  const v2 = group.routerRevision('pd')!;
  expect(v2).toMatch(/^[0-9a-f]{10}$/);
  expect(v2).not.toBe(V1);
  const g = single(manifests, 'RoleBasedGroup');
  expect(g.spec.roles.slice(0, 2).map((r: any) => r.standalonePattern.template.metadata.labels['rayshift.dev/router-revision'])).toEqual([v2, v2]);
  expect(ofKind(manifests, 'Deployment').map((d) => d.metadata.name)).toEqual([`pd-pd-router-${V1}`, `pd-pd-router-${v2}`]);
  expect(ofKind(manifests, 'Service').map((d) => d.metadata.name)).toEqual([`pd-pd-router-${V1}`, `pd-pd-router-${v2}`]);
  const oldArgs = ofKind(manifests, 'Deployment')[0].spec.template.spec.containers[0].args;
  expect(oldArgs.filter((a: string) => a.startsWith('rayshift.dev/'))).toEqual([`rayshift.dev/router-revision=${V1}`, `rayshift.dev/router-revision=${V1}`]);
  expect(single(manifests, 'HTTPRoute').spec.rules[0].backendRefs).toEqual([
    { name: `pd-pd-router-${V1}`, port: 30000, weight: 100 },
    { name: `pd-pd-router-${v2}`, port: 30000, weight: 0 },
  ]);
});

test('a change of a role the router does not route keeps the release', () => {
  const { group } = synth({ roles: [...roles().slice(0, 2), { name: 'gateway', replicas: 1, template: engine('nginx:2') }] });
  expect(group.routerRevision('pd')).toBe(V1);
});

test('v1alpha1 pods are selected by RBG\'s v1alpha1 labels; ports and roles are the options\'', () => {
  const { manifests } = synth({ version: 'v1alpha1' }, { port: 8080, workerPort: 8000 });
  const args = single(manifests, 'Deployment').spec.template.spec.containers[0].args;
  expect(args.filter((a: string) => a.startsWith('rolebasedgroup.'))).toEqual([
    'rolebasedgroup.workloads.x-k8s.io/name=pd', 'rolebasedgroup.workloads.x-k8s.io/role=prefill',
    'rolebasedgroup.workloads.x-k8s.io/name=pd', 'rolebasedgroup.workloads.x-k8s.io/role=decode',
  ]);
  expect(args.slice(args.indexOf('--service-discovery-port'), args.indexOf('--service-discovery-port') + 2)).toEqual(['--service-discovery-port', '8000']);
  expect(single(manifests, 'HTTPRoute').spec.rules[0].backendRefs[0].port).toBe(8080);
  // v1alpha1 roles (StatefulSets on RBG v0.6/v0.7) replace their Pods anyway: no v1alpha2 update type.
  expect(single(manifests, 'RoleBasedGroup').spec.roles.map((r: any) => [r.rolloutStrategy, r.annotations])).toEqual([[undefined, undefined], [undefined, undefined], [undefined, undefined]]);
});

test("synthesis fails naming the router's field, value and limit: a bad kind, a name too long for a Service", () => {
  const bad = new Chart(Testing.app(), 'bad');
  new RoleBasedGroup(bad, 'pd', { metadata: { name: 'pd' }, executor: 'operator', roles: roles(), coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: {}, router: { ...router, kind: 'vllm' as 'sglang' } }] });
  expect(synthError(bad)).toContain('spec.coordination[0].router.kind: "vllm" is not a router kind; allowed: sglang');
  const long = new Chart(Testing.app(), 'long');
  const name = 'a'.repeat(40);
  new RoleBasedGroup(long, 'pd', { metadata: { name }, executor: 'operator', roles: roles(), coordination: [{ name: 'prefill-decode', roles: ['prefill', 'decode'], rollingUpdate: {}, router }] });
  expect(synthError(long)).toContain(`spec.coordination[0].router: makes router Services named "${name}-prefill-decode-router-0000000000" (73 characters; the revision is 10 hex digits); allowed: at most 63, so shorten the group or rule name by 10`);
});

test('a CoordinatedPolicy (executor rbg) refuses a router rather than drop it', () => {
  const chart = new Chart(Testing.app(), 'policy');
  const group = new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, roles: roles() });
  new CoordinatedPolicy(chart, 'policy', { group, rules: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: {}, router }] });
  expect(synthError(chart)).toContain("rules[0].router: cannot be carried by a CoordinatedPolicy (RBG's controller moves no route weight between releases)");
});

test('a routed role on a StatefulSet (it replaces its Pods anyway) is rendered as given: no Stateless pattern, no RecreatePod', () => {
  const [prefill, decode, gateway] = roles();
  const { manifests } = synth({ roles: [prefill, { ...decode, workload: 'StatefulSet' }, gateway] });
  const g = single(manifests, 'RoleBasedGroup');
  expect(g.spec.roles[0].annotations).toEqual({ 'rbg.workloads.x-k8s.io/role-instance-pattern': 'Stateless' });
  expect(g.spec.roles[1].annotations).toEqual({ 'rbg.workloads.x-k8s.io/role-workload-type': 'apps/v1/StatefulSet' });
  expect(g.spec.roles[1].rolloutStrategy).toBeUndefined();
});

