/** The executor's writes and reports, pure: role patch ops, Events, the status annotation and metrics. */
import { Registry } from 'prom-client';
import { buildEvent, microTime } from '../../../lib/runtime/kube/events';
import { RbgRolloutMetrics } from '../../../lib/runtime/rbg/metrics';
import { EVENT_CONTROLLER, STATUS_ANNOTATION } from '../../../lib/spec/object-names';
import { roleWriteOps } from '../../../lib/runtime/rbg/reconciler';
import type { CoordinationStatus } from '../../../lib/engine/rbg-coordination-status';
import { RolloutStatusDocument, describeCoordination, readRolloutStatus } from '../../../lib/runtime/rbg/status';

const group = (roles: unknown[]) => ({ apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroup', metadata: { name: 'pd', namespace: 'serving', uid: 'u-1', resourceVersion: '42' }, spec: { roles } });
const write = { name: 'decode', index: 1, partition: 17, maxUnavailable: 2, paused: false };

describe('roleWriteOps', () => {
  test('guards the role by name and creates the rollout strategy when the role has none', () => {
    expect(roleWriteOps(group([{ name: 'prefill' }, { name: 'decode' }]), write)).toEqual([
      { op: 'test', path: '/spec/roles/1/name', value: 'decode' },
      { op: 'add', path: '/spec/roles/1/rolloutStrategy', value: { type: 'RollingUpdate', rollingUpdate: { partition: 17, maxUnavailable: 2, paused: false } } },
    ]);
  });

  test('adds rollingUpdate under an existing strategy, and sets only the three fields of an existing rollingUpdate', () => {
    expect(roleWriteOps(group([{}, { name: 'decode', rolloutStrategy: { type: 'RollingUpdate' } }]), write)[1]).toEqual({
      op: 'add',
      path: '/spec/roles/1/rolloutStrategy/rollingUpdate',
      value: { partition: 17, maxUnavailable: 2, paused: false },
    });
    const ops = roleWriteOps(group([{}, { name: 'decode', rolloutStrategy: { rollingUpdate: { maxSurge: 1, partition: 20 } } }]), write);
    expect(ops.slice(1)).toEqual([
      { op: 'add', path: '/spec/roles/1/rolloutStrategy/rollingUpdate/partition', value: 17 },
      { op: 'add', path: '/spec/roles/1/rolloutStrategy/rollingUpdate/maxUnavailable', value: 2 },
      { op: 'add', path: '/spec/roles/1/rolloutStrategy/rollingUpdate/paused', value: false },
    ]);
  });
});

describe('Events', () => {
  test('microTime has the six fractional digits the API server parses', () => {
    expect(microTime(Date.parse('2026-11-21T16:04:05.123Z'))).toBe('2026-11-21T16:04:05.123000Z');
  });

  test('an Event regards the group, names it like client-go does and bounds its note', () => {
    const e = buildEvent(group([]), { type: 'Warning', reason: 'ProgressDeadlineExceeded', message: 'x'.repeat(2000) }, Date.parse('2026-11-21T16:04:05Z'), { controller: EVENT_CONTROLLER, action: 'CoordinatedRollout' }, 'pod-a') as any;
    expect(e.metadata.name).toMatch(/^pd\.[0-9a-f]+$/);
    expect(e).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      type: 'Warning',
      reason: 'ProgressDeadlineExceeded',
      reportingController: 'rayshift.dev/rbg-coordinator',
      reportingInstance: 'pod-a',
      regarding: { kind: 'RoleBasedGroup', name: 'pd', namespace: 'serving', uid: 'u-1', resourceVersion: '42' },
    });
    expect(e.note).toHaveLength(1024);
  });
});

const coordination: CoordinationStatus = {
  name: 'pd-rollout',
  phase: 'Progressing',
  reason: 'RoundWritten',
  message: 'round 3 written',
  revision: 'abc',
  rounds: 3,
  skewPercent: 5,
  maxSkewPercent: 10,
  blockingRole: 'decode',
  startedAt: '2026-11-21T16:00:00.000Z',
  lastProgressAt: '2026-11-21T16:01:00.000Z',
  deadlineAt: '2026-11-21T16:11:00.000Z',
  progressMark: 100,
  roles: [
    { name: 'prefill', desired: 40, updated: 12, ready: 38, partition: 26, skewPercent: 5, phase: 'Updating', reason: '' },
    { name: 'decode', desired: 20, updated: 5, ready: 20, partition: 14, skewPercent: 0, phase: 'Updating', reason: '' },
  ],
};
const doc: RolloutStatusDocument = { observedGeneration: 7, coordinations: [coordination] };

describe('status annotation', () => {
  test('round-trips through the annotation; an unreadable annotation reads as none', () => {
    expect(readRolloutStatus({ metadata: { annotations: { [STATUS_ANNOTATION]: JSON.stringify(doc) } } })).toEqual(doc);
    expect(readRolloutStatus({ metadata: { annotations: { [STATUS_ANNOTATION]: '{oops' } } })).toBeUndefined();
    expect(readRolloutStatus({ metadata: {} })).toBeUndefined();
  });

  test('describeCoordination says phase, round, per-role progress, skew and the blocking role', () => {
    expect(describeCoordination(coordination)).toBe('pd-rollout Progressing (round 3): prefill 12/40, decode 5/20 updated; skew 5.0% ≤ 10%; blocked by decode');
  });

  test('describeCoordination adds the scheduler watch\'s record when there is one', () => {
    const surgeUnschedulable = { pods: 2, roles: ['decode'], since: '2026-11-30T10:00:02.000Z', message: '0/2 nodes are available', boundExceeded: true };
    expect(describeCoordination({ ...coordination, surgeUnschedulable })).toBe(
      'pd-rollout Progressing (round 3): prefill 12/40, decode 5/20 updated; skew 5.0% ≤ 10%; blocked by decode; 2 Pods of decode Unschedulable since 2026-11-30T10:00:02.000Z (past surgeUnschedulableSeconds)',
    );
  });

  test('describeCoordination adds the first round\'s capacity preflight when it did not fit', () => {
    const capacity = { outcome: 'doesNotFit' as const, message: 'decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free', at: '2026-11-30T10:00:01.000Z' };
    expect(describeCoordination({ ...coordination, phase: 'Failed', reason: 'InsufficientCapacity', rounds: 0, blockingRole: undefined, capacity })).toBe(
      'pd-rollout Failed (round 0): prefill 12/40, decode 5/20 updated; skew 5.0% ≤ 10%; first round did not fit (2026-11-30T10:00:01.000Z): decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free',
    );
  });

  test('describeCoordination says a first round held because the cluster could not be read was not placed', () => {
    const capacity = { outcome: 'unknown' as const, message: 'the cluster could not be read: nodes is forbidden', at: '2026-11-30T10:00:01.000Z' };
    expect(describeCoordination({ ...coordination, reason: 'CapacityUnknown', rounds: 0, blockingRole: undefined, capacity })).toBe(
      'pd-rollout Progressing (round 0): prefill 12/40, decode 5/20 updated; skew 5.0% ≤ 10%; first round not placed (2026-11-30T10:00:01.000Z): the cluster could not be read: nodes is forbidden',
    );
  });
});

describe('RbgRolloutMetrics', () => {
  test('records per-role gauges, the phase, rounds and deadlines, and forgets exactly a deleted group\'s series', async () => {
    const registry = new Registry();
    const m = new RbgRolloutMetrics(registry);
    m.observe('serving', 'pd', doc, { rounds: 2, deadlines: 1 });
    m.observe('serving', 'other', { observedGeneration: 1, coordinations: [{ ...coordination, phase: 'Complete' }] }, { rounds: 0, deadlines: 0 });
    const text = await registry.metrics();
    expect(text).toContain('rayshift_rbg_role_partition{namespace="serving",name="pd",coordination="pd-rollout",role="decode"} 14');
    expect(text).toContain('rayshift_rbg_phase{namespace="serving",name="pd",coordination="pd-rollout",phase="Progressing"} 1');
    expect(text).toContain('rayshift_rbg_rounds_total{namespace="serving",name="pd"} 2');
    expect(text).toContain('rayshift_rbg_progress_deadline_exceeded_total{namespace="serving",name="pd"} 1');
    m.forget('serving', 'pd');
    const after = await registry.metrics();
    expect(after).not.toContain('name="pd"');
    expect(after).toContain('rayshift_rbg_phase{namespace="serving",name="other",coordination="pd-rollout",phase="Complete"} 1');
  });

  test('rayshift_rbg_surge_unschedulable_seconds: the seconds since the surge became Unschedulable at scrape time, 0 once it is not, gone with the group', async () => {
    const registry = new Registry();
    let now = Date.parse('2026-11-30T10:00:12.500Z');
    const m = new RbgRolloutMetrics(registry, undefined, () => now);
    const surgeUnschedulable = { pods: 2, roles: ['decode'], since: '2026-11-30T10:00:02.000Z', message: '0/2 nodes are available', boundExceeded: false };
    m.observe('serving', 'pd', { observedGeneration: 1, coordinations: [{ ...coordination, surgeUnschedulable }] }, { rounds: 0, deadlines: 0 });
    const series = 'rayshift_rbg_surge_unschedulable_seconds{namespace="serving",name="pd",coordination="pd-rollout"}';
    expect(await registry.metrics()).toContain(`${series} 10.5`);
    now += 30_000;
    expect(await registry.metrics()).toContain(`${series} 40.5`);
    m.observe('serving', 'pd', { observedGeneration: 1, coordinations: [coordination] }, { rounds: 0, deadlines: 0 });
    expect(await registry.metrics()).toContain(`${series} 0`);
    m.forget('serving', 'pd');
    expect(await registry.metrics()).not.toContain('rayshift_rbg_surge_unschedulable_seconds{');
  });
});
