/**
 * The `rollback` steering verb of RoleBasedGroups through the API server, against a real
 * kube-apiserver with RBAC (no operator: each group carries the status annotation the executor
 * writes). `:rollback` (gRPC `RollbackRoleBasedGroup`) writes `rayshift.dev/rollback` naming the
 * revision in flight and the last-steering record, as the caller; a caller without the virtual
 * subresource (`rolebasedgroups/rollback` in rayshift.dev) is PERMISSION_DENIED even with `patch` on
 * the group; with nothing in flight it is FAILED_PRECONDITION and writes nothing.
 * `rayshift rollback rbg/NAME --api-server` calls it. Needs `npm run controlplane:build`.
 */
import { Code } from '@connectrpc/connect';
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { RBG_ROLLBACK_ANNOTATION } from '../../lib/engine/rbg-steering';
import { LAST_STEERING_ANNOTATION } from '../../lib/engine/steering';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { RBG_V1ALPHA2_TYPE, STATUS_ANNOTATION } from '../../lib/spec/object-names';
import { ApiEnv, TEAM_A, grantUser, startApiEnv } from '../apiserver/support/api-env';
import { rayshiftIn } from '../cli/cli-io';

let env: ApiEnv;
const base = `/apis/rayshift/v1/namespaces/${TEAM_A}/rolebasedgroups`;
const REVISION = 'fedcba9876543210';

/** A group rayshift's executor runs, whose coordination `pd` is at `phase` (round 1: 2 of 4 prefill, 1 of 2 decode). */
function group(name: string, phase: string): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace: TEAM_A },
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 4, template: { spec: { containers: [{ name: 'prefill', image: 'sglang:v2' }] } } },
      { name: 'decode', replicas: 2, template: { spec: { containers: [{ name: 'decode', image: 'sglang:v2' }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 } }],
  });
  const g = Testing.synth(chart).find((o) => o.kind === 'RoleBasedGroup') as KubeObject;
  const done = phase === 'Complete';
  const roles = [
    { name: 'prefill', desired: 4, updated: done ? 4 : 2, ready: 4, partition: done ? 0 : 2, skewPercent: 0, phase: done ? 'Complete' : 'Updating', reason: '' },
    { name: 'decode', desired: 2, updated: done ? 2 : 1, ready: 2, partition: done ? 0 : 1, skewPercent: 0, phase: done ? 'Complete' : 'Updating', reason: '' },
  ];
  const status = { name: 'pd', phase, reason: done ? 'RolloutComplete' : 'WaitingForAnalysis', message: '', revision: REVISION, rounds: done ? 2 : 1, skewPercent: 0, maxSkewPercent: 1, startedAt: '2026-11-29T06:00:00.000Z', lastProgressAt: '2026-11-29T06:00:00.000Z', progressMark: 0, roles };
  return { ...g, metadata: { ...g.metadata, annotations: { ...g.metadata.annotations, [STATUS_ANNOTATION]: JSON.stringify({ observedGeneration: 1, coordinations: [status] }) } } };
}

async function annotations(name: string): Promise<Record<string, string>> {
  return (await env.admin.get(RBG_V1ALPHA2_TYPE, name, TEAM_A)).metadata.annotations ?? {};
}

beforeAll(async () => {
  env = await startApiEnv();
  for (const [name, phase] of [['flying', 'Progressing'], ['stopped', 'Failed'], ['done', 'Complete'], ['denied', 'Progressing'], ['cli', 'Progressing']]) await env.admin.create(group(name, phase));
  // alice may roll groups back in team-a; bob may get and patch them there, not roll them back.
  await grantUser(env.admin, TEAM_A, 'alice', 'alice-rolls-back', [
    { apiGroups: ['workloads.x-k8s.io'], resources: ['rolebasedgroups'], verbs: ['get', 'patch'] },
    { apiGroups: ['rayshift.dev'], resources: ['rolebasedgroups/rollback'], verbs: ['update'] },
  ]);
  await grantUser(env.admin, TEAM_A, 'bob', 'bob-patches-groups', [{ apiGroups: ['workloads.x-k8s.io'], resources: ['rolebasedgroups'], verbs: ['get', 'patch'] }]);
}, 300_000);

afterAll(async () => {
  await env?.stop();
});

test('rollback over REST and gRPC names the revision in flight, recorded as the caller', async () => {
  const rolled = await env.rest('POST', `${base}/flying:rollback`, { reason: 'decode p99 doubled' });
  expect(rolled.status).toBe(200);
  expect(rolled.body).toMatchObject({ name: 'flying', coordination: [{ rule: 'pd', phase: 'Progressing', rounds: 1 }] });
  const after = await annotations('flying');
  expect(after[RBG_ROLLBACK_ANNOTATION]).toBe(REVISION);
  expect(JSON.parse(after[LAST_STEERING_ANNOTATION])).toMatchObject({ verb: 'rollback', user: 'alice', reason: 'decode p99 doubled' });

  await env.client('grpc', env.tokens.alice).roleBasedGroups.rollbackRoleBasedGroup({ namespace: TEAM_A, name: 'stopped', reason: 'deadline passed' });
  expect((await annotations('stopped'))[RBG_ROLLBACK_ANNOTATION]).toBe(REVISION);
});

test('a caller without the subresource is PERMISSION_DENIED, even with patch on the group, and nothing is written', async () => {
  const before = (await env.admin.get(RBG_V1ALPHA2_TYPE, 'denied', TEAM_A)).metadata.resourceVersion;
  const r = await env.rest('POST', `${base}/denied:rollback`, { reason: 'try' }, { token: env.tokens.bob });
  expect(r.status).toBe(403);
  expect(r.body.code).toBe(Code.PermissionDenied);
  await expect(env.client('grpc', env.tokens.bob).roleBasedGroups.rollbackRoleBasedGroup({ namespace: TEAM_A, name: 'denied' })).rejects.toMatchObject({ code: Code.PermissionDenied });
  expect((await env.admin.get(RBG_V1ALPHA2_TYPE, 'denied', TEAM_A)).metadata.resourceVersion).toBe(before);
});

test('with nothing in flight it is FAILED_PRECONDITION naming why and writes nothing; a missing group is NOT_FOUND', async () => {
  const before = (await env.admin.get(RBG_V1ALPHA2_TYPE, 'done', TEAM_A)).metadata.resourceVersion;
  const r = await env.rest('POST', `${base}/done:rollback`, {});
  expect(r.status).toBe(400);
  expect(r.body).toMatchObject({ code: Code.FailedPrecondition, message: 'nothing to rollback: no rollout is in flight (pd Complete)' });
  expect((await env.admin.get(RBG_V1ALPHA2_TYPE, 'done', TEAM_A)).metadata.resourceVersion).toBe(before);
  const missing = await env.rest('POST', `${base}/nowhere:rollback`, {});
  expect(missing.status).toBe(404);
});

test('rayshift rollback rbg/NAME --api-server calls the RPC as the caller', async () => {
  const api = (token: string) => ['-n', TEAM_A, '--api-server', env.api.url, '--ca-file', env.cp.caFile, '--token', token];
  expect(await rayshiftIn(['rollback', 'rbg/cli', ...api(env.tokens.bob)])).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('permission denied') });
  expect(await rayshiftIn(['rollback', 'rbg/cli', ...api(env.tokens.alice)])).toEqual({
    code: 0,
    stdout: `RoleBasedGroup ${TEAM_A}/cli rolling back: every coordinated role returns to the revision before the rollout, in tandem\n`,
    stderr: '',
  });
  expect((await annotations('cli'))[RBG_ROLLBACK_ANNOTATION]).toBe(REVISION);
  expect(await rayshiftIn(['rollback', 'rbg/done', ...api(env.tokens.alice)])).toMatchObject({ code: 1, stderr: expect.stringContaining('nothing to rollback: no rollout is in flight (pd Complete)') });
  expect(await rayshiftIn(['pause', 'rbg/cli', ...api(env.tokens.alice)])).toMatchObject({ code: 2, stderr: 'error: pause applies to RayServices; a RoleBasedGroup rollout takes rollback only\n' });
});
