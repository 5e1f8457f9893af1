/**
 * A pass over every coordination of a group and the warmup's part in it (lib/engine): the revision
 * a rule rolls to, the holds, the warmup a group needs, the rules that wait for it, and
 * `coordinationPass` putting them together.
 */
import { holdWrites, ruleRevision } from '../../lib/engine/rbg-coordination';
import { coordinationPass } from '../../lib/engine/rbg-coordination-pass';
import type { ExecutorRule, ObservedRole } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { heldByWarmup, heldForWarmup, plannedWarmup, warmupGate, warmupPendingRules } from '../../lib/engine/rbg-warmup';
import { resolveRolloutWarmup } from '../../lib/spec/rbg-warmup';
import { prefillDecodeRule } from '../support/rbg-rules';

const T0 = Date.parse('2026-11-24T10:00:00Z');

const rule = prefillDecodeRule({ maxSkewPercent: 10, progressDeadlineSeconds: 60 });

function observed(revision: Record<string, string>, extra: Partial<ObservedRole> = {}): Map<string, ObservedRole> {
  const desired: Record<string, number> = { prefill: 4, decode: 2, router: 1 };
  return new Map(
    Object.entries(revision).map(([name, rev], index) => [
      name,
      { name, index, desired: desired[name], partition: 0, maxUnavailable: 1, paused: false, revision: rev, progress: { updatedReplicas: desired[name], readyReplicas: desired[name], source: 'group' as const }, ...extra },
    ]),
  );
}

const atV1 = observed({ prefill: 'a1', decode: 'b1', router: 'r1' });
const prefillAtV2 = observed({ prefill: 'a2', decode: 'b1', router: 'r1' });

describe('ruleRevision', () => {
  test('changes when a coordinated role\'s template changes, not when a role outside the rule does', () => {
    expect(ruleRevision(rule, atV1)).toMatch(/^[0-9a-f]{16}$/);
    expect(ruleRevision(rule, prefillAtV2)).not.toBe(ruleRevision(rule, atV1));
    expect(ruleRevision(rule, observed({ prefill: 'a1', decode: 'b1', router: 'r2' }))).toBe(ruleRevision(rule, atV1));
  });

  test('is the revision coordinationPass reports for the rule', () => {
    const pass = coordinationPass({ rules: [rule], roles: prefillAtV2, controllerCaughtUp: true, previous: [], now: T0 });
    expect(pass.steps[0].status.revision).toBe(ruleRevision(rule, prefillAtV2));
  });
});

describe('holdWrites', () => {
  test('pauses every role of the rule at the partition it has, and only roles not already held', () => {
    const roles = observed({ prefill: 'a1', decode: 'b1' });
    roles.set('decode', { ...roles.get('decode')!, paused: true });
    expect(holdWrites(rule, roles)).toEqual([{ name: 'prefill', index: 0, partition: 0, maxUnavailable: 1, paused: true }]);
  });

  test('a role held at every replica keeps a partition below replicas (v0.8\'s webhook refuses replicas)', () => {
    const roles = observed({ prefill: 'a1', decode: 'b1' }, { partition: undefined });
    const held = new Map([...roles].map(([n, r]) => [n, { ...r, partition: r.desired }]));
    expect(holdWrites(rule, held).map((w) => [w.name, w.partition, w.paused])).toEqual([
      ['prefill', 3, true],
      ['decode', 1, true],
    ]);
  });
});

const group = {
  apiVersion: 'workloads.x-k8s.io/v1alpha2',
  kind: 'RoleBasedGroup',
  metadata: { name: 'pd', namespace: 'ns' },
  spec: {
    roles: [
      { name: 'prefill', replicas: 4, standalonePattern: { template: { spec: { containers: [{ name: 'main', image: 'sglang:v2' }] } } } },
      { name: 'decode', replicas: 2, standalonePattern: { template: { spec: { initContainers: [{ name: 'init', image: 'busybox:1' }], containers: [{ name: 'main', image: 'sglang:v2' }] } } } },
      { name: 'router', replicas: 1, standalonePattern: { template: { spec: { containers: [{ name: 'main', image: 'router:v1' }] } } } },
    ],
  },
};

describe('plannedWarmup', () => {
  const w = resolveRolloutWarmup({ roles: ['prefill', 'decode'], parallelism: 2 }, ['prefill', 'decode']);

  test('warms the images of the warmed roles only, named by the group and the spec\'s hash', () => {
    const p = plannedWarmup(group, w);
    expect(p.name).toBe(`pd-warmup-${p.revision}`);
    expect(p.revision).toMatch(/^[0-9a-f]{8}$/);
    expect(p.spec.targetRoleBasedGroup).toEqual({
      name: 'pd',
      roles: { prefill: { imagePreload: { images: ['sglang:v2'] } }, decode: { imagePreload: { images: ['busybox:1', 'sglang:v2'] } } },
    });
    expect(p.spec.policies).toEqual({ parallelism: 2, backoffLimitPerNode: 2, maxFailedNodes: 0, globalTimeoutSeconds: 900 });
  });

  test('new images are a new warmup; the same images are the same one', () => {
    const bumped = JSON.parse(JSON.stringify(group));
    bumped.spec.roles[0].standalonePattern.template.spec.containers[0].image = 'sglang:v3';
    expect(plannedWarmup(bumped, w).name).not.toBe(plannedWarmup(group, w).name);
    expect(plannedWarmup(JSON.parse(JSON.stringify(group)), w).name).toBe(plannedWarmup(group, w).name);
  });
});

function completeAt(revision: string): CoordinationStatus {
  return { name: 'pd', phase: 'Complete', reason: 'RolloutComplete', message: 'done', revision, rounds: 1, skewPercent: 0, maxSkewPercent: 10, startedAt: new Date(T0).toISOString(), lastProgressAt: new Date(T0).toISOString(), progressMark: 12, roles: [] };
}

describe('warmupPendingRules', () => {
  const w = resolveRolloutWarmup({ roles: ['prefill'] }, ['prefill', 'decode']);
  const other: ExecutorRule = { ...rule, name: 'routing', roles: [{ name: 'router', replicas: 1, partition: 0, maxUnavailable: 1 }] };

  test('a rule with a warmed role whose revision changed waits; an unchanged one, or one without a warmed role, does not', () => {
    const previous = [completeAt(ruleRevision(rule, atV1)), { ...completeAt(ruleRevision(other, atV1)), name: 'routing' }];
    expect(warmupPendingRules([rule, other], w, prefillAtV2, previous)).toEqual([rule]);
    expect(warmupPendingRules([rule, other], w, atV1, previous)).toEqual([]);
    const routerChanged = observed({ prefill: 'a1', decode: 'b1', router: 'r2' });
    expect(warmupPendingRules([rule, other], w, routerChanged, previous)).toEqual([]);
  });

  test('nothing waits on a group\'s first pass (no status yet: its Pods are created, not updated)', () => {
    expect(warmupPendingRules([rule], w, prefillAtV2, [])).toEqual([]);
  });
});

describe('heldForWarmup and coordinationPass', () => {
  const prior = {
    ...completeAt(ruleRevision(rule, atV1)),
    deadlineAt: new Date(T0).toISOString(),
    blockingRole: 'decode',
    // The previous rollout's preflight and scheduler watch.
    capacity: { outcome: 'doesNotFit' as const, message: 'decode: needs 4 nvidia.com/gpu on nodes matching {}, 1 free', at: new Date(T0).toISOString() },
    surgeUnschedulable: { pods: 1, roles: ['decode'], since: new Date(T0).toISOString(), message: '0/1 nodes are available', boundExceeded: true },
  };
  const gateAt = (now: number, observedPhase?: string) =>
    warmupGate({ name: 'pd-warmup-x', revision: 'x', onFailure: 'Fail', timeoutSeconds: 900, now, ...(observedPhase ? { observed: { phase: observedPhase, desired: 2, succeeded: 0, failed: 0, active: 2 } } : {}) });

  test('heldForWarmup keeps the last status with the warmup\'s words, holds every role, and heldByWarmup recognizes it', () => {
    const gate = gateAt(T0, 'Running');
    const held = heldForWarmup(rule, prefillAtV2, prior, gate.status);
    expect([held.status.phase, held.status.reason, held.status.message, held.status.revision]).toEqual(['Progressing', 'WarmingImages', gate.status.message, prior.revision]);
    expect(held.status).not.toHaveProperty('deadlineAt');
    expect(held.status).not.toHaveProperty('blockingRole');
    expect(held.status).not.toHaveProperty('capacity');
    expect(held.status).not.toHaveProperty('surgeUnschedulable');
    expect(held.writes.every((x) => x.paused)).toBe(true);
    expect(held.writes.map((x) => x.name)).toEqual(['prefill', 'decode']);
    expect([heldByWarmup(held.status), heldByWarmup(prior)]).toEqual([true, false]);
  });

  test('a failed warmup with onFailure Fail fails the coordination with the warmup\'s reason', () => {
    const gate = gateAt(T0, 'Failed');
    const held = heldForWarmup(rule, prefillAtV2, prior, gate.status);
    expect([held.status.phase, held.status.reason]).toEqual(['Failed', 'WarmupFailed']);
  });

  test('while the gate is closed a waiting rule is held and the pass wakes at the warmup\'s timeout', () => {
    const decision = gateAt(T0);
    const pass = coordinationPass({ rules: [rule], roles: prefillAtV2, controllerCaughtUp: true, previous: [prior], gate: { decision, pending: [rule] }, now: T0 });
    expect([pass.steps[0].status.reason, pass.steps[0].status.revision]).toEqual(['WarmingImages', prior.revision]);
    expect(pass.steps[0].writes.every((x) => x.paused)).toBe(true);
    expect(pass.rounds).toBe(0);
    expect(pass.wakeAt).toBe(T0 + 900_000);
  });

  test('once the gate opens, a status the warmup held starts the rollout afresh: first round written, woken by the progress deadline', () => {
    const heldStatus = heldForWarmup(rule, prefillAtV2, prior, gateAt(T0).status).status;
    const armed = new Map([...prefillAtV2].map(([n, r]) => [n, n === 'router' ? r : { ...r, paused: true, progress: { updatedReplicas: 0, readyReplicas: r.desired, source: 'group' as const } }]));
    const decision = gateAt(T0 + 1000, 'Completed');
    const pass = coordinationPass({ rules: [rule], roles: armed, controllerCaughtUp: true, previous: [heldStatus], gate: { decision, pending: [rule] }, now: T0 + 1000 });
    expect(pass.steps[0].status.startedAt).toBe(new Date(T0 + 1000).toISOString());
    expect(pass.rounds).toBe(1);
    expect(pass.steps[0].writes.map((x) => [x.name, x.paused])).toEqual([
      ['prefill', false],
      ['decode', false],
    ]);
    expect(pass.wakeAt).toBe(T0 + 1000 + rule.progressDeadlineSeconds * 1000);
  });

  test('a rule the gate does not hold steps as usual, and a pass with no deadline pending has no wake time', () => {
    const decision = gateAt(T0);
    const other: ExecutorRule = { ...rule, name: 'other' };
    const pass = coordinationPass({ rules: [rule], roles: atV1, controllerCaughtUp: true, previous: [prior], gate: { decision, pending: [other] }, now: T0 });
    expect(pass.steps[0].status.phase).toBe('Complete');
    expect(pass.wakeAt).toBe(decision.wakeAt);
    expect(coordinationPass({ rules: [rule], roles: atV1, controllerCaughtUp: true, previous: [prior], now: T0 }).wakeAt).toBeUndefined();
  });
});
