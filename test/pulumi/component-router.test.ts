/** The Pulumi RoleBasedGroup component with a version-matched `router` (mocked engine: no cluster): it renders through the construct, routers included. */
import { installMocks, registered, reset, settle } from './mocks';

installMocks();

import { RoleBasedGroup } from '../../lib/pulumi';

beforeEach(reset);

const roles = ['prefill', 'decode'].map((name) => ({ name, replicas: 2, template: { spec: { containers: [{ name, image: 'sglang:v1' }] } } }));
const router = { kind: 'sglang' as const, image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'inference' } };

// The core kinds go through `k8s.apiextensions.CustomResource` like every child (createKubernetesChildren), hence `kubernetes:v1:…`.
test('executor operator with a router: the group, the release\'s router, its Service, RBAC and the route are children', async () => {
  const group = new RoleBasedGroup('pd', { metadata: { name: 'pd' }, roles, executor: 'operator', coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' }, router }] });
  await settle(group, group.group);
  const types = registered.map((r) => r.type).filter((t) => t.startsWith('kubernetes:')).sort();
  expect(types).toEqual([
    'kubernetes:apps/v1:Deployment',
    'kubernetes:gateway.networking.k8s.io/v1:HTTPRoute',
    'kubernetes:rbac.authorization.k8s.io/v1:Role',
    'kubernetes:rbac.authorization.k8s.io/v1:RoleBinding',
    'kubernetes:v1:Service',
    'kubernetes:v1:ServiceAccount',
    'kubernetes:workloads.x-k8s.io/v1alpha2:RoleBasedGroup',
  ]);
  const g = registered.find((r) => r.type === 'kubernetes:workloads.x-k8s.io/v1alpha2:RoleBasedGroup')!;
  const labels = g.inputs.spec.roles.map((r: any) => Object.keys(r.standalonePattern.template.metadata.labels));
  expect(labels).toEqual([['rayshift.dev/router-revision'], ['rayshift.dev/router-revision']]);
});

test('a router during a rollout (previousRevision) is refused by name: two releases would be two children of one kind', () => {
  const coordination = [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' }, router: { ...router, previousRevision: '0123456789' } }];
  expect(() => new RoleBasedGroup('pd', { metadata: { name: 'pd' }, roles, executor: 'operator', coordination })).toThrow(
    'coordination[0].router.previousRevision: "0123456789" asks for two releases\' routers, which the Pulumi component cannot render yet (it names its children by kind); allowed: unset (one router), or the cdk8s construct',
  );
});
