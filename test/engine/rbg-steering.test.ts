/**
 * The `rollback` steering verb of RoleBasedGroups (lib/engine/rbg-steering.ts): when it applies,
 * the patch it makes, the request the executor reads back, and `coordinationPass` starting the
 * same rollback rounds as a failed gate for the revisions it names, and only those.
 */
import { coordinationStep } from '../../lib/engine/rbg-coordination';
import { coordinationPass } from '../../lib/engine/rbg-coordination-pass';
import type { ObservedRole } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { RBG_ROLLBACK_ANNOTATION, rbgRollbackPatch, rbgRollbackRefusal, rbgRollbackRequestOf } from '../../lib/engine/rbg-steering';
import { LAST_STEERING_ANNOTATION } from '../../lib/engine/steering';
import { prefillDecodeRule } from '../support/rbg-rules';

const T0 = Date.parse('2026-11-29T06:00:00Z');

const rule = prefillDecodeRule({ maxSkewPercent: 1, progressDeadlineSeconds: 600 });

/** The roles with `updated` replicas on the new template (revision `v2`), every replica ready, written partitions `desired − updated`. */
function roles(updated: Record<string, number>, partitionCarried = true): Map<string, ObservedRole> {
  const desired: Record<string, number> = { prefill: 4, decode: 2 };
  return new Map(
    Object.entries(updated).map(([name, u], index) => [
      name,
      {
        name,
        index,
        desired: desired[name],
        partition: desired[name] - u,
        maxUnavailable: 1,
        paused: false,
        revision: `${name}-v2`,
        progress: { updatedReplicas: u, readyReplicas: desired[name], updatedReadyReplicas: u, source: 'workload' as const, workloadRevision: `${name}-rev2`, ...(partitionCarried ? { workloadPartition: desired[name] - u } : {}) },
      },
    ]),
  );
}

/** The status after round 1 (2 prefill, 1 decode updated). */
function afterRoundOne(): CoordinationStatus {
  const status = coordinationStep({ rule, roles: roles({ prefill: 2, decode: 1 }), controllerCaughtUp: true, now: T0 }).status;
  return { ...status, phase: 'Progressing', reason: 'RoundWritten', rounds: 1 };
}

describe('rbgRollbackRefusal', () => {
  test('applies to a rollout in flight or stopped', () => {
    const s = afterRoundOne();
    expect(rbgRollbackRefusal([s])).toBeUndefined();
    expect(rbgRollbackRefusal([{ ...s, phase: 'Failed', reason: 'ProgressDeadlineExceeded' }])).toBeUndefined();
  });

  test('is refused, naming the phases, with no rollout in flight or with one rolling back already', () => {
    const s = afterRoundOne();
    expect(rbgRollbackRefusal([])).toBe('nothing to rollback: no rollout is in flight (no coordination reported)');
    expect(rbgRollbackRefusal([{ ...s, phase: 'Complete' }])).toBe('nothing to rollback: no rollout is in flight (pd Complete)');
    expect(rbgRollbackRefusal([{ ...s, phase: 'RolledBack' }])).toBe('nothing to rollback: no rollout is in flight (pd RolledBack)');
    expect(rbgRollbackRefusal([{ ...s, phase: 'RollingBack' }])).toBe('cannot rollback: a rollback is already running (pd RollingBack)');
  });

  test('is refused when a role has every replica on the new revision (its workload recreates replicas from it)', () => {
    const s = afterRoundOne();
    const done = { ...s, roles: s.roles.map((r) => (r.name === 'decode' ? { ...r, updated: 2, partition: 0 } : r)) };
    expect(rbgRollbackRefusal([done])).toBe('cannot rollback pd: decode has every replica (2/2) on the new revision, which its workload now recreates replicas from; revert the template to roll forward instead (pd Progressing)');
  });
});

describe('rbgRollbackPatch and rbgRollbackRequestOf', () => {
  test('the patch names the revisions in flight and records the steering; the executor reads back the revisions and who asked', () => {
    const s = afterRoundOne();
    const record = { verb: 'rollback', user: 'alice', reason: 'decode p99 up', time: '2026-11-29T06:00:00.000Z' };
    const patch = rbgRollbackPatch([s, { ...s, name: 'other', revision: 'done', phase: 'Complete' }], record);
    expect(patch).toEqual({ metadata: { annotations: { [RBG_ROLLBACK_ANNOTATION]: s.revision, [LAST_STEERING_ANNOTATION]: JSON.stringify(record) } } });
    expect(rbgRollbackRequestOf(patch.metadata.annotations)).toEqual({ revisions: [s.revision], cause: 'rollback requested by alice: decode p99 up' });
  });

  test('no annotation, an empty one, or one without a rollback record', () => {
    expect(rbgRollbackRequestOf(undefined)).toBeUndefined();
    expect(rbgRollbackRequestOf({ [RBG_ROLLBACK_ANNOTATION]: ' , ' })).toBeUndefined();
    expect(rbgRollbackRequestOf({ [RBG_ROLLBACK_ANNOTATION]: 'a, b' })).toEqual({ revisions: ['a', 'b'], cause: 'rollback requested' });
  });
});

describe('coordinationPass with a rollback request', () => {
  test('starts the rollback rounds of the named revision: RollingBack, its first round raising both partitions, RollbackStarted then RollbackRound', () => {
    const prior = afterRoundOne();
    const pass = coordinationPass({ rules: [rule], roles: roles({ prefill: 2, decode: 1 }), controllerCaughtUp: true, previous: [prior], rollback: { revisions: [prior.revision], cause: 'rollback requested by alice' }, now: T0 + 1000 });
    const [step] = pass.steps;
    expect(step.status).toMatchObject({ phase: 'RollingBack', reason: 'RollbackRequested', rounds: 1, rollback: { cause: 'rollback requested by alice', rounds: 1 } });
    expect(step.events.map((e) => e.reason)).toEqual(['RollbackStarted', 'RollbackRound']);
    expect(step.events[0].message).toBe('pd: rollback requested by alice; returning prefill, decode to the revision before the rollout');
    // maxUnavailable 1 each: one prefill and one decode back per round (2→3 and 1→2).
    expect(step.writes).toEqual([
      { name: 'prefill', index: 0, partition: 3, maxUnavailable: 1, paused: true },
      { name: 'decode', index: 1, partition: 2, maxUnavailable: 1, paused: true },
    ]);
    expect(step.status.roles.map((r) => [r.name, r.replicasByRevision])).toEqual([
      ['prefill', { abandoned: 2, previous: 2 }],
      ['decode', { abandoned: 1, previous: 1 }],
    ]);
    expect(pass.rounds).toBe(0);
  });

  test('a request naming another revision, or a rollout already rolling back, is left alone', () => {
    const prior = afterRoundOne();
    const other = coordinationPass({ rules: [rule], roles: roles({ prefill: 2, decode: 1 }), controllerCaughtUp: true, previous: [prior], rollback: { revisions: ['an-earlier-rollout'], cause: 'rollback requested' }, now: T0 + 1000 });
    expect(other.steps[0].status.phase).toBe('Progressing');
    const started = coordinationPass({ rules: [rule], roles: roles({ prefill: 2, decode: 1 }), controllerCaughtUp: true, previous: [prior], rollback: { revisions: [prior.revision], cause: 'rollback requested' }, now: T0 + 1000 }).steps[0];
    // The next pass, once the workloads carry the round's partitions, returns its replicas: the request in place starts nothing again.
    const landed = new Map([...roles({ prefill: 2, decode: 1 })].map(([n, r]) => {
      const w = started.writes.find((x) => x.name === n)!;
      return [n, { ...r, partition: w.partition, paused: true, progress: { ...r.progress!, workloadPartition: w.partition } }];
    }));
    const next = coordinationPass({ rules: [rule], roles: landed, controllerCaughtUp: true, previous: [started.status], rollback: { revisions: [prior.revision], cause: 'rollback requested' }, now: T0 + 2000 }).steps[0];
    expect(next.status).toMatchObject({ phase: 'RollingBack', rollback: { rounds: 1 } });
    expect(next.events).toEqual([]);
    expect(next.returns?.map(({ name, index, below }) => ({ name, index, below }))).toEqual([{ name: 'prefill', index: 0, below: 3 }, { name: 'decode', index: 1, below: 2 }]);
  });

  test('a new template (another revision) is a new rollout, which the request in place does not roll back', () => {
    const prior = afterRoundOne();
    const newer = new Map([...roles({ prefill: 0, decode: 0 })].map(([n, r]) => [n, { ...r, revision: `${n}-v3` }]));
    const pass = coordinationPass({ rules: [rule], roles: newer, controllerCaughtUp: true, previous: [{ ...prior, phase: 'RolledBack' }], rollback: { revisions: [prior.revision], cause: 'rollback requested' }, now: T0 + 1000 });
    expect(pass.steps[0].status.phase).toBe('Progressing');
    expect(pass.steps[0].status.revision).not.toBe(prior.revision);
  });
});
