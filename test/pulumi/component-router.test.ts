/**
 * The Pulumi RoleBasedGroup component with a version-matched `router` (mocked engine: no cluster):
 * it renders through the construct, both releases' routers during a rollout included, each router
 * object a child with a name that stays the same across the rollout.
 */
import { createHash } from 'node:crypto';
import * as pulumi from '@pulumi/pulumi';
import { Chart, Testing } from 'cdk8s';
import { installMocks, registered, reset, settle, valueOf } from './mocks';

installMocks();

import { RoleBasedGroup as RoleBasedGroupConstruct } from '../../lib/cdk8s';
import { RoleBasedGroup } from '../../lib/pulumi';

beforeEach(reset);

const roles = (image = 'sglang:v1') => ['prefill', 'decode'].map((name) => ({ name, replicas: 2, template: { spec: { containers: [{ name, image: name === 'prefill' ? image : 'sglang:v1' }] } } }));
const router = { kind: 'sglang' as const, image: 'lmsysorg/sglang:v0.5.5', gateway: { name: 'inference' } };
const props = (image?: string, extra: object = {}) => ({
  metadata: { name: 'pd', namespace: 'serving' },
  roles: roles(image),
  executor: 'operator' as const,
  coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '50%' }, router: { ...router, ...extra } }],
});

// The releases, hashed here from the literal canonical JSON of the two templates (keys sorted).
const release = (prefillImage: string) =>
  createHash('sha256')
    .update(`{"decode":{"spec":{"containers":[{"image":"sglang:v1","name":"decode"}]}},"prefill":{"spec":{"containers":[{"image":"${prefillImage}","name":"prefill"}]}}}`)
    .digest('hex')
    .slice(0, 10);
const V1 = release('sglang:v1');
const V2 = release('sglang:v2');

/** The kubernetes children as registered: Pulumi name → the manifest (without the mock's Pulumi-only fields). */
function children(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(registered.filter((r) => r.type.startsWith('kubernetes:')).map((r) => [r.name, r.inputs]));
}

/** The same props synthesized by the cdk8s construct. */
function constructManifests(p: ReturnType<typeof props>): Record<string, unknown>[] {
  const chart = new Chart(Testing.app(), 'rayshift');
  new RoleBasedGroupConstruct(chart, 'pd', p);
  return Testing.synth(chart);
}

/** The URNs a child's aliases stand for, reduced to the aliased Pulumi name. */
async function aliasNames(group: RoleBasedGroup): Promise<Record<string, string[]>> {
  const resources = await valueOf(group.children);
  const out: Record<string, string[]> = {};
  for (const r of resources) {
    const urn = await valueOf(r.urn);
    const aliases = await Promise.all(((r as any).__aliases as pulumi.Output<string>[]).map((a) => valueOf(a)));
    out[urn.split('::').pop()!] = aliases.map((a) => a.split('::').pop()!);
  }
  return out;
}

test('one release: the group, the release\'s router Deployment and Service, RBAC and the route, named by object and aliased to their earlier names', async () => {
  const group = new RoleBasedGroup('pd', props());
  await settle(group, group.group);
  expect(await valueOf(group.routerRevisions)).toEqual({ pd: V1 });
  expect(Object.keys(children()).sort()).toEqual([
    `pd-deployment-pd-pd-router-${V1}`,
    'pd-httproute-pd-pd-router',
    'pd-role-pd-pd-router',
    'pd-rolebasedgroup',
    'pd-rolebinding-pd-pd-router',
    'pd-service-pd-pd-router-' + V1,
    'pd-serviceaccount-pd-pd-router',
  ]);
  const route = children()['pd-httproute-pd-pd-router'] as any;
  expect(route.spec.rules).toEqual([{ backendRefs: [{ name: `pd-pd-router-${V1}`, port: 30000, weight: 100 }] }]);
  expect(await aliasNames(group)).toEqual({
    'pd-rolebasedgroup': [],
    'pd-serviceaccount-pd-pd-router': ['pd-serviceaccount'],
    'pd-role-pd-pd-router': ['pd-role'],
    'pd-rolebinding-pd-pd-router': ['pd-rolebinding'],
    [`pd-deployment-pd-pd-router-${V1}`]: ['pd-deployment'],
    [`pd-service-pd-pd-router-${V1}`]: ['pd-service'],
    'pd-httproute-pd-pd-router': ['pd-httproute'],
  });
});

test('a rollout (previousRevision): both releases\' routers as children, the old ones keeping their names, the route all on the old release', async () => {
  const group = new RoleBasedGroup('pd', props('sglang:v2', { previousRevision: V1 }));
  await settle(group, group.group);
  expect(await valueOf(group.routerRevisions)).toEqual({ pd: V2 });
  const c = children();
  const deployments = Object.keys(c).filter((n) => n.startsWith('pd-deployment-')).sort();
  expect(deployments).toEqual([`pd-deployment-pd-pd-router-${V1}`, `pd-deployment-pd-pd-router-${V2}`].sort());
  expect((c[`pd-service-pd-pd-router-${V2}`] as any).spec.selector).toEqual({ 'rayshift.dev/router-for': 'pd', 'rayshift.dev/router-rule': 'pd', 'rayshift.dev/router-revision': V2 });
  expect((c['pd-httproute-pd-pd-router'] as any).spec.rules[0].backendRefs).toEqual([
    { name: `pd-pd-router-${V1}`, port: 30000, weight: 100 },
    { name: `pd-pd-router-${V2}`, port: 30000, weight: 0 },
  ]);
  const aliases = await aliasNames(group);
  expect([aliases[`pd-deployment-pd-pd-router-${V1}`], aliases[`pd-deployment-pd-pd-router-${V2}`], aliases[`pd-service-pd-pd-router-${V2}`]]).toEqual([['pd-deployment'], [], []]);
});

test('every child is the cdk8s construct\'s object for the same props, one rendering for both', async () => {
  for (const [p, objects] of [[props(), 7], [props('sglang:v2', { previousRevision: V1 }), 9]] as const) {
    reset();
    const group = new RoleBasedGroup('pd', p);
    await settle(group, group.group);
    const pulumiObjects = Object.values(children())
      .map(({ apiVersion, kind, metadata, ...rest }: any) => ({ apiVersion, kind, metadata, ...Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith('__'))) }))
      .sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`));
    const cdk8sObjects = constructManifests(p).sort((a: any, b: any) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`));
    expect(pulumiObjects).toHaveLength(objects);
    expect(pulumiObjects).toEqual(cdk8sObjects);
  }
});

test('two routed rules: every router object a child of its own, without aliases', async () => {
  const four = ['p1', 'd1', 'p2', 'd2'].map((name) => ({ name, replicas: 1, template: { spec: { containers: [{ name, image: 'sglang:v1' }] } } }));
  const rule = (n: string) => ({ name: `r${n}`, roles: [`p${n}`, `d${n}`], rollingUpdate: {}, router: { ...router, prefill: `p${n}`, decode: `d${n}` } });
  const group = new RoleBasedGroup('pd', { metadata: { name: 'pd' }, roles: four, executor: 'operator', coordination: [rule('1'), rule('2')] });
  await settle(group, group.group);
  const names = Object.keys(children());
  expect(names.filter((n) => n.startsWith('pd-httproute-'))).toEqual(['pd-httproute-pd-r1-router', 'pd-httproute-pd-r2-router']);
  expect(names).toHaveLength(13);
  expect(Object.values(await aliasNames(group)).flat()).toEqual([]);
});
