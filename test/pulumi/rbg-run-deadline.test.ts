/**
 * When a `RoleBasedGroupRollout` run ends (`rolloutComplete`: complete, carried, and nothing left
 * to write), and the error of a run whose own deadline (`deadlineSeconds`) passes: named as the
 * Pulumi run's deadline, never as the coordination's progress deadline, and, when a rollback is
 * under way, saying that it stops half done and the next `pulumi up` resumes it.
 */
import type { CoordinationStatus, RoleRolloutStatus } from '../../lib/engine/rbg-coordination-status';
import { rolloutComplete, runDeadlineMessage } from '../../lib/pulumi/rbg-rollout-operations';

const INPUTS = { namespace: 'serving', name: 'pd', deadlineSeconds: 240 };

function role(name: string, desired: number, updated: number, partition: number, abandoned?: number): RoleRolloutStatus {
  return { name, desired, updated, ready: desired, partition, skewPercent: 0, phase: 'Updating', reason: '', ...(abandoned !== undefined ? { replicasByRevision: { abandoned, previous: desired - abandoned } } : {}) };
}

function coordination(phase: CoordinationStatus['phase'], roles: RoleRolloutStatus[], rollbackRounds?: number): CoordinationStatus {
  return {
    name: 'pd', phase, reason: phase === 'RollingBack' ? 'AnalysisFailed' : 'RoundWritten', message: '', revision: 'abc', rounds: 2, skewPercent: 0, maxSkewPercent: 1,
    startedAt: '2026-01-01T00:00:00Z', lastProgressAt: '2026-01-01T00:00:00Z', progressMark: 0, roles,
    ...(rollbackRounds !== undefined ? { rollback: { cause: 'error-ratio failed', rounds: rollbackRounds, startedAt: '2026-01-01T00:01:00Z' } } : {}),
  };
}

describe('runDeadlineMessage', () => {
  test('mid-rollout: names the Pulumi run deadline and where the rollout stands', () => {
    const doc = { observedGeneration: 2, coordinations: [coordination('Progressing', [role('prefill', 4, 2, 2), role('decode', 2, 1, 1)])] };
    expect(runDeadlineMessage(INPUTS, doc)).toBe(
      "RoleBasedGroup serving/pd: the Pulumi run's deadline (deadlineSeconds 240) passed before the rollout completed: pd Progressing (round 2): prefill 2/4, decode 1/2 updated; skew 0.0% ≤ 1%",
    );
  });

  test('mid-rollback: says a rollback was under way and stops half done, and that the next `pulumi up` resumes it', () => {
    const doc = { observedGeneration: 2, coordinations: [coordination('RollingBack', [role('prefill', 4, 2, 2, 2), role('decode', 2, 1, 1, 1)], 1)] };
    expect(runDeadlineMessage(INPUTS, doc)).toBe(
      "RoleBasedGroup serving/pd: the Pulumi run's deadline (deadlineSeconds 240) passed while a rollback was under way, which stops here with replicas still on the abandoned revision: pd RollingBack (round 2, rollback round 1): prefill 2/4, decode 1/2 on the abandoned revision; skew 0.0% ≤ 1%; the next `pulumi up` resumes the rollback (give deadlineSeconds room for the rollback rounds)",
    );
  });

  test('before the first status: says so', () => {
    expect(runDeadlineMessage(INPUTS, undefined)).toBe("RoleBasedGroup serving/pd: the Pulumi run's deadline (deadlineSeconds 240) passed before the rollout completed: no status yet");
  });
});

describe('rolloutComplete', () => {
  const done = { observedGeneration: 3, coordinations: [{ ...coordination('Complete', [role('prefill', 4, 4, 0), role('decode', 2, 2, 0)]) }] };
  test('complete, carried and a pass with nothing left to write: the run ends', () => {
    expect(rolloutComplete(3, done, true, 0)).toBe(true);
  });
  test('the pass that completes a routed rollout, or scales its old router to 0, wrote: the run takes one more pass', () => {
    expect(rolloutComplete(3, done, true, 1)).toBe(false);
    expect(rolloutComplete(3, done, true, 2)).toBe(false);
  });
  test('not carried, an older generation, a role not ready, or no status: the run goes on', () => {
    expect(rolloutComplete(3, done, false, 0)).toBe(false);
    expect(rolloutComplete(4, done, true, 0)).toBe(false);
    const notReady = { ...done, coordinations: [{ ...done.coordinations[0], roles: [{ ...role('prefill', 4, 4, 0), ready: 3 }, role('decode', 2, 2, 0)] }] };
    expect(rolloutComplete(3, notReady, true, 0)).toBe(false);
    expect(rolloutComplete(3, undefined, true, 0)).toBe(false);
  });
});
