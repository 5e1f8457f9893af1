/**
 * The way back of a RoleBasedGroup rollout in the API (lib/apiserver/convert/rolebasedgroup.ts): a
 * coordination rayshift's executor rolls back carries its phase, reason, rounds, its rollback (cause,
 * rounds, start), its `RolledBack` condition and each role's phase, partition and replicas on the
 * abandoned and the previous revision, over REST JSON and gRPC binary alike; a rule RBG runs itself
 * has none of them.
 */
import { fromBinary, toBinary, toJson } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Testing } from 'cdk8s';
import { roleBasedGroupFromKube } from '../../lib/apiserver/convert/rolebasedgroup';
import { RoleBasedGroupSchema } from '../../lib/apiserver/gen/rayshift/v1/rolebasedgroup_pb';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { STATUS_ANNOTATION } from '../../lib/spec/object-names';

const T0 = Date.parse('2026-11-29T06:00:00.000Z');

/** Round 2 of the way back from a rollout that reached 2 of 4 prefill and 1 of 2 decode. */
const ROLLING_BACK: CoordinationStatus = {
  name: 'pd',
  phase: 'RollingBack',
  reason: 'RollbackRequested',
  message: 'rollback requested by alice; rollback round 2: prefill partition 3→4 (1/4 on the abandoned revision)',
  revision: '0123456789abcdef',
  rounds: 1,
  skewPercent: 25,
  maxSkewPercent: 1,
  startedAt: new Date(T0 - 60_000).toISOString(),
  lastProgressAt: new Date(T0 - 30_000).toISOString(),
  progressMark: 9,
  rollback: { cause: 'rollback requested by alice', rounds: 2, startedAt: new Date(T0 - 10_000).toISOString() },
  conditions: [{ type: 'RolledBack', status: 'False', reason: 'RollbackRound', message: 'rollback round 2: prefill partition 3→4 (1/4 on the abandoned revision)', lastTransitionTime: new Date(T0).toISOString() }],
  roles: [
    { name: 'prefill', desired: 4, updated: 1, ready: 4, partition: 4, skewPercent: 25, phase: 'RollingBack', reason: 'returning ordinals 3–3', replicasByRevision: { abandoned: 1, previous: 3 } },
    { name: 'decode', desired: 2, updated: 0, ready: 2, partition: 2, skewPercent: 0, phase: 'RollingBack', reason: '2/2 on the previous revision', replicasByRevision: { abandoned: 0, previous: 2 } },
  ],
};

function group(status: CoordinationStatus | undefined): KubeObject {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'pd', {
    metadata: { name: 'pd', namespace: 'llm' },
    executor: 'operator',
    roles: [
      { name: 'prefill', replicas: 4, template: { spec: { containers: [{ name: 'prefill', image: 'sglang:2' }] } } },
      { name: 'decode', replicas: 2, template: { spec: { containers: [{ name: 'decode', image: 'sglang:2' }] } } },
    ],
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '1%', maxUnavailable: 1 } }],
  });
  const g = Testing.synth(chart).find((o) => o.kind === 'RoleBasedGroup') as KubeObject;
  if (status) g.metadata.annotations = { ...g.metadata.annotations, [STATUS_ANNOTATION]: JSON.stringify({ observedGeneration: 3, coordinations: [status] }) };
  g.status = { roleStatuses: [{ name: 'prefill', replicas: 4, readyReplicas: 4, updatedReplicas: 1 }, { name: 'decode', replicas: 2, readyReplicas: 2, updatedReplicas: 0 }] };
  return g;
}

test('a rollout rolling back shows its rounds, its condition and each role on either revision', () => {
  const c = roleBasedGroupFromKube(group(ROLLING_BACK), undefined).coordination[0];
  expect(c).toMatchObject({ rule: 'pd', phase: 'RollingBack', reason: 'RollbackRequested', rounds: 1, rollback: { cause: 'rollback requested by alice', rounds: 2, startedAt: '2026-11-29T05:59:50.000Z' } });
  expect(c.message).toBe(ROLLING_BACK.message);
  expect(c.roles.map((r) => [r.role, r.phase, r.partition, r.abandonedReplicas, r.previousReplicas])).toEqual([
    ['prefill', 'RollingBack', 4, 1, 3],
    ['decode', 'RollingBack', 2, 0, 2],
  ]);
  expect(c.conditions.map((x) => [x.type, x.status, x.reason, x.lastTransitionTime])).toEqual([['RolledBack', 'False', 'RollbackRound', timestampFromMs(T0)]]);
  const json = toJson(RoleBasedGroupSchema, roleBasedGroupFromKube(group(ROLLING_BACK), undefined)) as any;
  expect(json.coordination[0]).toMatchObject({ phase: 'RollingBack', rollback: { cause: 'rollback requested by alice', rounds: 2 }, roles: [{ role: 'prefill', abandonedReplicas: 1, previousReplicas: 3 }, { role: 'decode', previousReplicas: 2 }] });
  expect(json.coordination[0].conditions[0]).toMatchObject({ type: 'RolledBack', status: 'False', lastTransitionTime: '2026-11-29T06:00:00Z' });
  const g = roleBasedGroupFromKube(group(ROLLING_BACK), undefined);
  expect(fromBinary(RoleBasedGroupSchema, toBinary(RoleBasedGroupSchema, g))).toEqual(g);
});

test('a rollout going forward has a phase and rounds but no rollback and no replicas by revision', () => {
  const forward: CoordinationStatus = { ...ROLLING_BACK, phase: 'Progressing', reason: 'RoundWritten', message: 'round 1 written', rollback: undefined, conditions: undefined, roles: ROLLING_BACK.roles.map((r) => ({ ...r, phase: 'Updating', replicasByRevision: undefined })) };
  const c = roleBasedGroupFromKube(group(forward), undefined).coordination[0];
  expect(c).toMatchObject({ phase: 'Progressing', reason: 'RoundWritten', rounds: 1, conditions: [] });
  expect(c.rollback).toBeUndefined();
  expect(c.roles.map((r) => [r.role, r.phase, r.abandonedReplicas, r.previousReplicas])).toEqual([['prefill', 'Updating', 0, 0], ['decode', 'Updating', 0, 0]]);
});

test('without the executor\'s status the rule has no phase', () => {
  const c = roleBasedGroupFromKube(group(undefined), undefined).coordination[0];
  expect(c.phase).toBe('');
  expect(c.rollback).toBeUndefined();
});

test('a routed rule carries its router route\'s weight per release, over REST JSON and gRPC binary alike', () => {
  const router = { route: 'pd-pd-router', removeOld: false, releases: [{ revision: '1a2b3c4d5e', service: 'pd-pd-router-1a2b3c4d5e', weight: 100, current: false }, { revision: '6f7a8b9c0d', service: 'pd-pd-router-6f7a8b9c0d', weight: 0, current: true }] };
  const g = roleBasedGroupFromKube(group({ ...ROLLING_BACK, router }), undefined);
  expect(g.coordination[0].router).toMatchObject({ route: 'pd-pd-router', removeOld: false, problem: '' });
  expect(g.coordination[0].router?.releases.map((r) => [r.revision, r.service, r.weight, r.current])).toEqual([
    ['1a2b3c4d5e', 'pd-pd-router-1a2b3c4d5e', 100, false],
    ['6f7a8b9c0d', 'pd-pd-router-6f7a8b9c0d', 0, true],
  ]);
  const json = toJson(RoleBasedGroupSchema, g) as any;
  expect(json.coordination[0].router).toEqual({ route: 'pd-pd-router', releases: [{ revision: '1a2b3c4d5e', service: 'pd-pd-router-1a2b3c4d5e', weight: 100 }, { revision: '6f7a8b9c0d', service: 'pd-pd-router-6f7a8b9c0d', current: true }] });
  expect(fromBinary(RoleBasedGroupSchema, toBinary(RoleBasedGroupSchema, g))).toEqual(g);
  expect(roleBasedGroupFromKube(group(ROLLING_BACK), undefined).coordination[0].router).toBeUndefined();
});

test('a routed rule carries the old routers scaled to 0 and the routers its route waits for', () => {
  const releases = [{ revision: '1a2b3c4d5e', service: 'pd-pd-router-1a2b3c4d5e', weight: 0, current: false }, { revision: '6f7a8b9c0d', service: 'pd-pd-router-6f7a8b9c0d', weight: 100, current: true }];
  const router = { route: 'pd-pd-router', removeOld: true, releases, scaledDown: [{ deployment: 'pd-pd-router-1a2b3c4d5e', replicas: 2 }], waitingForRouter: ['pd-pd-router-9e8d7c6b5a'] };
  const g = roleBasedGroupFromKube(group({ ...ROLLING_BACK, router }), undefined);
  expect(g.coordination[0].router?.scaledDown.map((d) => [d.deployment, d.replicas])).toEqual([['pd-pd-router-1a2b3c4d5e', 2]]);
  expect(g.coordination[0].router?.waitingForRouter).toEqual(['pd-pd-router-9e8d7c6b5a']);
  const json = toJson(RoleBasedGroupSchema, g) as any;
  expect(json.coordination[0].router).toMatchObject({ scaledDown: [{ deployment: 'pd-pd-router-1a2b3c4d5e', replicas: 2 }], waitingForRouter: ['pd-pd-router-9e8d7c6b5a'] });
  expect(fromBinary(RoleBasedGroupSchema, toBinary(RoleBasedGroupSchema, g))).toEqual(g);
  const before = roleBasedGroupFromKube(group({ ...ROLLING_BACK, router: { route: 'pd-pd-router', removeOld: false, releases } }), undefined);
  expect([before.coordination[0].router?.scaledDown, before.coordination[0].router?.waitingForRouter]).toEqual([[], []]);
});
