/** The `RoleBasedGroup` construct targeting RBG v0.8: restartPolicyConfig, workload kinds, its webhook's rules and deprecations. */
import { Chart, Testing } from 'cdk8s';
import { RoleBasedGroup, RoleBasedGroupProps } from '../../lib/cdk8s';
import { PodTemplateJson, RoleSpec } from '../../lib/spec';
import { captureStderr, single, synthError } from './helpers';

const template: PodTemplateJson = { spec: { containers: [{ name: 'engine', image: 'lmsysorg/sglang:v0.5.5' }] } };

const ROLES: RoleSpec[] = [
  { name: 'prefill', replicas: 4, template, leaderWorkerSize: 2, restartPolicyConfig: { type: 'RecreateRoleInstanceOnPodRestart', baseDelaySeconds: 10, maxDelaySeconds: 120 } },
  { name: 'decode', replicas: 2, template },
];

function synth(props: Partial<RoleBasedGroupProps>): any {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'pd' });
  new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, rbgVersion: 'v0.8', roles: ROLES, ...props });
  return single(Testing.synth(chart), 'RoleBasedGroup');
}

function synthFails(props: Partial<RoleBasedGroupProps>): string {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'pd' });
  new RoleBasedGroup(chart, 'pd', { metadata: { name: 'pd' }, rbgVersion: 'v0.8', roles: ROLES, ...props });
  return synthError(chart);
}

test('v1alpha2: restartPolicyConfig goes to the leader/worker pattern; roles are RoleInstanceSets (no workload annotation)', () => {
  const g = synth({});
  expect(g.apiVersion).toBe('workloads.x-k8s.io/v1alpha2');
  expect(g.spec.roles[0].leaderWorkerPattern).toEqual({ size: 2, template, restartPolicyConfig: { type: 'RecreateRoleInstanceOnPodRestart', baseDelaySeconds: 10, maxDelaySeconds: 120 } });
  expect(g.spec.roles.map((r: any) => r.annotations)).toEqual([undefined, undefined]);
});

test('v1alpha2: a deprecated workload kind is written to the role-workload-type annotation, next to the role\'s own annotations, with a warning', () => {
  const { result: g, stderr } = captureStderr(() =>
    synth({ roles: [{ name: 'router', replicas: 1, template, workload: 'LeaderWorkerSet', annotations: { team: 'a' } }] }),
  );
  expect(g.spec.roles[0].annotations).toEqual({ team: 'a', 'rbg.workloads.x-k8s.io/role-workload-type': 'leaderworkerset.x-k8s.io/v1/LeaderWorkerSet' });
  expect(stderr).toContain('warning: RoleBasedGroup/pd: spec.roles[0].workload: LeaderWorkerSet is deprecated in RBG v0.8');
});

test('v1alpha1 for v0.8: RoleInstanceSet is written out (the schema would default StatefulSet), with a deprecation warning', () => {
  const { result: g, stderr } = captureStderr(() => synth({ version: 'v1alpha1', roles: [{ name: 'prefill', replicas: 4, template, leaderWorkerSize: 2 }, { name: 'decode', replicas: 2, template }] }));
  expect(g.spec.roles.map((r: any) => [r.workload, r.leaderWorkerSet])).toEqual([
    [{ apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet' }, { size: 2 }],
    [{ apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet' }, undefined],
  ]);
  expect(stderr).toContain('apiVersion: workloads.x-k8s.io/v1alpha1 is deprecated in RBG v0.8');
});

test('v1alpha1 before v0.8 is unchanged: StatefulSet by the schema default, LeaderWorkerSet for leader/worker roles', () => {
  const g = synth({ rbgVersion: 'v0.7', version: 'v1alpha1', roles: [{ name: 'prefill', replicas: 4, template, leaderWorkerSize: 2 }, { name: 'decode', replicas: 2, template }] });
  expect(g.spec.roles.map((r: any) => r.workload)).toEqual([{ apiVersion: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet' }, undefined]);
});

test('the v0.8 webhook rules fail synthesis, naming field, value and allowed range', () => {
  const msg = synthFails({ roles: [{ name: 'router', replicas: 5, template, rollingUpdate: { maxUnavailable: '10%', partition: '90%' } }] });
  expect(msg).toContain('spec.roles[0].rollingUpdate.maxUnavailable: maxUnavailable "10%" resolves to 0 of 5 replicas (rounded down)');
  expect(msg).toContain('spec.roles[0].rollingUpdate.partition: "90%" resolves to 5 of 5 replicas (rounded up) and is not below replicas');
  expect(msg).toContain('allowed: 0–4 or "0%"–"80%"');
});

test('restartPolicyConfig before v0.8 fails synthesis', () => {
  expect(synthFails({ rbgVersion: 'v0.7' })).toContain('spec.roles[0].restartPolicyConfig: exists from RBG v0.8 on');
});

test('the construct reports its RBG release; the default is v0.7', () => {
  const chart = new Chart(Testing.app(), 'test');
  expect(new RoleBasedGroup(chart, 'a', { roles: [{ name: 'x', template }] }).rbgVersion).toBe('v0.7');
  expect(new RoleBasedGroup(chart, 'b', { roles: [{ name: 'x', template }], rbgVersion: 'v0.8' }).rbgVersion).toBe('v0.8');
});
