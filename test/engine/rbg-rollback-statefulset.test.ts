/**
 * The way back on RBG v0.6.0, whose roles are StatefulSets that report no updated-and-ready replicas:
 * every count comes from one list of the StatefulSet's Pods (lib/runtime/rbg/statefulset-replicas.ts
 * reads it, lib/engine/rbg-rollback.ts `rollbackCounts` counts it), here from literal Pods. The
 * multi-pass cases run against a TEST-ONLY simulation of a StatefulSet and its kubelets (no kubelet
 * runs here): a deleted Pod is terminating for one pass, then comes back on the current revision, not
 * ready for three more; the StatefulSet's status is the one its controller wrote a pass earlier (read
 * before the Pods), which is the race that took the per-ordinal count back in aedb945.
 */
import { coordinationStep, startRollback } from '../../lib/engine/rbg-coordination';
import type { CoordinationStep, ExecutorRule, ObservedRole, RoleProgress } from '../../lib/engine/rbg-coordination-types';
import type { CoordinationStatus } from '../../lib/engine/rbg-coordination-status';
import { rollbackCounts } from '../../lib/engine/rbg-rollback';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { statefulSetReplicas } from '../../lib/runtime/rbg/statefulset-replicas';

const T0 = Date.parse('2026-11-29T02:00:00Z');
const CURRENT = 'pd-prefill-5d8f';
const UPDATE = 'pd-prefill-7c2a';

interface PodSpec {
  readonly ordinal: number;
  readonly revision: string;
  readonly ready: boolean;
  readonly terminating?: boolean;
}

function statefulSet(name: string, replicas: number, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 3 },
    spec: { replicas, selector: { matchLabels: { app: name } } },
    status: { observedGeneration: 3, currentRevision: CURRENT, updateRevision: UPDATE, ...status },
  };
}

function pod(set: string, p: PodSpec, owner = `uid-${set}`): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${set}-${p.ordinal}`,
      namespace: 'ns',
      labels: { app: set, 'controller-revision-hash': p.revision },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: set, uid: owner, controller: true }],
      ...(p.terminating ? { deletionTimestamp: '2026-11-29T02:00:01Z' } : {}),
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: p.ready ? 'True' : 'False' }] },
  };
}

/** The progress the runtime reports for a StatefulSet role: its status's counts, and its Pods per ordinal. */
function progressOf(sts: KubeObject, pods: readonly KubeObject[], status: { updated: number; ready: number }, partition: number): RoleProgress {
  return { updatedReplicas: status.updated, readyReplicas: status.ready, source: 'workload', workloadRevision: UPDATE, workloadPartition: partition, replicas: statefulSetReplicas(sts, pods)!.replicas };
}

function role(name: string, index: number, desired: number, partition: number, progress: RoleProgress): ObservedRole {
  return { name, index, desired, partition, maxUnavailable: 1, paused: true, holdsByPartition: true, revision: 'v2', progress };
}

function rule(sizes: Record<string, number>): ExecutorRule {
  return { name: 'pd', maxSkewPercent: 50, roles: Object.entries(sizes).map(([name, replicas]) => ({ name, replicas, partition: 0, maxUnavailable: 1 })), progressDeadlineSeconds: 60, rollbackOnDeadline: true, capacityPolicy: 'wait', surgeUnschedulableSeconds: 120 };
}

function failed(r: ExecutorRule, roles: Map<string, ObservedRole>): CoordinationStatus {
  const at = coordinationStep({ rule: r, roles, controllerCaughtUp: true, now: T0 }).status;
  return { ...at, phase: 'Failed', reason: 'AnalysisFailed', message: 'the analysis of run step@50:1 failed' };
}

describe('rollbackCounts from one list of a StatefulSet\'s Pods', () => {
  const set = 'pd-prefill';
  const count = (pods: KubeObject[], desired = 4) => rollbackCounts(progressOf(statefulSet(set, desired), pods, { updated: 99, ready: 99 }, desired), desired);

  test('ignores the status\'s counts, Pods of another owner or name, and ordinals at or above the replicas', () => {
    const pods = [
      pod(set, { ordinal: 0, revision: CURRENT, ready: true }),
      pod(set, { ordinal: 1, revision: CURRENT, ready: true }),
      pod(set, { ordinal: 2, revision: UPDATE, ready: true }),
      pod(set, { ordinal: 3, revision: UPDATE, ready: false }),
      pod(set, { ordinal: 4, revision: UPDATE, ready: false }),
      pod(set, { ordinal: 1, revision: UPDATE, ready: false }, 'uid-an-older-set'),
      pod('pd-prefill-x', { ordinal: 0, revision: UPDATE, ready: false }),
    ];
    expect(count(pods)).toEqual({ abandoned: 2, ready: 3, abandonedDown: 1 });
  });

  test('a terminating Pod is unavailable even while Ready, and on the abandoned revision no abandoned replica down (it is being returned)', () => {
    const pods = [
      pod(set, { ordinal: 0, revision: CURRENT, ready: true }),
      pod(set, { ordinal: 1, revision: CURRENT, ready: true }),
      pod(set, { ordinal: 2, revision: UPDATE, ready: true, terminating: true }),
      pod(set, { ordinal: 3, revision: UPDATE, ready: true }),
    ];
    expect(count(pods)).toEqual({ abandoned: 2, ready: 3, abandonedDown: 0 });
  });

  test('a missing ordinal is unavailable; a Pod of a third revision is neither abandoned nor credited as down', () => {
    const pods = [pod(set, { ordinal: 0, revision: CURRENT, ready: true }), pod(set, { ordinal: 1, revision: 'pd-prefill-0000', ready: false }), pod(set, { ordinal: 3, revision: UPDATE, ready: true })];
    expect(statefulSetReplicas(statefulSet(set, 4), pods)!.strayRevision).toBe(true);
    expect(count(pods)).toEqual({ abandoned: 1, ready: 2, abandonedDown: 0 });
  });

  test('a StatefulSet whose revisions are the same has nothing abandoned; one without revisions yet has no count', () => {
    const same = statefulSet(set, 2, { currentRevision: UPDATE });
    expect(rollbackCounts(progressOf(same, [pod(set, { ordinal: 0, revision: UPDATE, ready: true })], { updated: 1, ready: 1 }, 2), 2)).toEqual({ abandoned: 0, ready: 1, abandonedDown: 0 });
    expect(statefulSetReplicas({ ...same, status: {} }, [])).toBeUndefined();
  });
});

describe('the replaced-Pod race of cluster-rbg-rollback-faults (v0.6.0): prefill-2 returned and starting, prefill-3 still on the abandoned revision', () => {
  // The StatefulSet's status, read just before the Pods, still counts the old prefill-2 as updated and ready.
  const prefill = statefulSet('pd-prefill', 4, { updatedReplicas: 2, readyReplicas: 4 });
  const decode = statefulSet('pd-decode', 2, { updatedReplicas: 0, readyReplicas: 2 });
  const prefillPods = [
    pod('pd-prefill', { ordinal: 0, revision: CURRENT, ready: true }),
    pod('pd-prefill', { ordinal: 1, revision: CURRENT, ready: true }),
    pod('pd-prefill', { ordinal: 2, revision: CURRENT, ready: false }),
    pod('pd-prefill', { ordinal: 3, revision: UPDATE, ready: true }),
  ];
  const decodePods = [pod('pd-decode', { ordinal: 0, revision: CURRENT, ready: true }), pod('pd-decode', { ordinal: 1, revision: CURRENT, ready: true })];
  const r = rule({ prefill: 4, decode: 2 });

  function next(progress: (sts: KubeObject, pods: KubeObject[], status: { updated: number; ready: number }) => RoleProgress): CoordinationStep {
    const roles = new Map([
      ['prefill', role('prefill', 0, 4, 3, progress(prefill, prefillPods, { updated: 2, ready: 4 }))],
      ['decode', role('decode', 1, 2, 2, progress(decode, decodePods, { updated: 0, ready: 2 }))],
    ]);
    return startRollback({ rule: r, roles, controllerCaughtUp: true, now: T0 }, failed(r, roles));
  }
  const prefillPartition = (s: CoordinationStep) => s.writes.find((w) => w.name === 'prefill')?.partition ?? 3;

  test('counted from the Pods alone, the way back holds prefill at 3 until prefill-2 is ready', () => {
    const s = next((sts, pods, status) => progressOf(sts, pods, status, 3));
    expect(prefillPartition(s)).toBe(3);
    expect(s.status.roles.find((x) => x.name === 'prefill')).toMatchObject({ updated: 1, ready: 3 });
  });

  test('the Pods\' updated-and-ready count mixed with the status\'s counts (taken back in aedb945) returns prefill-3 too', () => {
    const s = next((sts, pods, status) => ({ updatedReplicas: status.updated, readyReplicas: status.ready, source: 'workload', workloadPartition: 3, updatedReadyReplicas: statefulSetReplicas(sts, pods)!.replicas.filter((x) => x.revision === 'update' && x.ready).length }));
    expect(prefillPartition(s)).toBe(4);
  });

  test('the status-only estimate, once the status has caught up with the Pods, takes prefill-2 starting for an abandoned replica down and returns prefill-3 too', () => {
    const s = next(() => ({ updatedReplicas: 1, readyReplicas: 3, source: 'workload', workloadPartition: 3 }));
    expect(prefillPartition(s)).toBe(4);
  });
});

/** TEST-ONLY simulation of one StatefulSet and its Pods' kubelets (none run here), producing literal objects. */
class SimulatedStatefulSet {
  readonly pods: { ordinal: number; revision: string; ready: boolean; terminating: boolean; startingFor: number }[];
  /** The counts its controller last wrote into its status (a pass behind the Pods). */
  status = { updated: 0, ready: 0 };
  partition: number;
  carried: number;

  constructor(readonly name: string, readonly replicas: number, bad: number) {
    this.pods = Array.from({ length: replicas }, (_, ordinal) => ({ ordinal, revision: ordinal >= replicas - bad ? UPDATE : CURRENT, ready: true, terminating: false, startingFor: 0 }));
    this.partition = this.carried = replicas - bad;
    this.writeStatus();
  }

  object(): KubeObject {
    return statefulSet(this.name, this.replicas, { updatedReplicas: this.status.updated, readyReplicas: this.status.ready });
  }

  list(): KubeObject[] {
    return this.pods.map((p) => pod(this.name, p));
  }

  /** Replicas without a Ready Pod that is not being deleted. */
  unavailable(): number {
    return this.pods.filter((p) => !p.ready || p.terminating).length;
  }

  /** Deletes the Pods on the update revision below `below` (uid-guarded in the runtime: only those not already going). */
  returnBelow(below: number): void {
    for (const p of this.pods) if (p.ordinal < below && p.revision === UPDATE && !p.terminating) p.terminating = true;
  }

  /** Its controller writes the status it sees now (terminating Pods count as ready while Ready, as the StatefulSet controller does). */
  writeStatus(): void {
    this.status = { updated: this.pods.filter((p) => p.revision === UPDATE && !p.terminating).length, ready: this.pods.filter((p) => p.ready).length };
  }

  /** Time passes: a terminating Pod is gone and recreated below the partition on the current revision; a starting one gets a pass closer to Ready. */
  advance(): void {
    for (const p of this.pods) {
      if (p.terminating) Object.assign(p, { terminating: false, ready: false, startingFor: 3, revision: p.ordinal < this.carried ? CURRENT : UPDATE });
      else if (!p.ready && --p.startingFor <= 0) p.ready = true;
    }
    this.carried = this.partition;
  }
}

describe('a failed gate at 4 prefill / 2 decode, half of each on the bad revision, on simulated StatefulSets', () => {
  type Counting = 'pods' | 'status' | 'mixed';
  function rollBack(counting: Counting): { over: number; left: number[]; phase: string; rounds: number } {
    const sets = new Map([['prefill', new SimulatedStatefulSet('pd-prefill', 4, 2)], ['decode', new SimulatedStatefulSet('pd-decode', 2, 1)]]);
    const r = rule({ prefill: 4, decode: 2 });
    const see = () => new Map([...sets].map(([name, s], index) => {
      const sts = s.object();
      const pods = s.list();
      const fromPods = progressOf(sts, pods, s.status, s.carried);
      const { replicas: perOrdinal, ...status } = fromPods;
      const updatedReadyReplicas = perOrdinal!.filter((x) => x.revision === 'update' && x.ready && !x.terminating).length;
      const progress = counting === 'pods' ? fromPods : counting === 'mixed' ? { ...status, updatedReadyReplicas } : status;
      return [name, role(name, index, s.replicas, s.partition, progress)];
    }));
    let previous = failed(r, see());
    let over = 0;
    for (let i = 1; i <= 60 && previous.phase !== 'RolledBack'; i++) {
      const input = { rule: r, roles: see(), controllerCaughtUp: true, now: T0 + i };
      const step = i === 1 ? startRollback(input, previous) : coordinationStep({ ...input, previous });
      for (const w of step.writes) sets.get(w.name)!.partition = w.partition;
      for (const ret of step.returns ?? []) sets.get(ret.name)!.returnBelow(ret.below);
      over = Math.max(over, ...[...sets.values()].map((s) => s.unavailable() - 1));
      // The status is written before the Pods move on, so the next pass reads it behind them.
      for (const s of sets.values()) [s.writeStatus(), s.advance()];
      over = Math.max(over, ...[...sets.values()].map((s) => s.unavailable() - 1));
      previous = step.status;
    }
    return { over, left: [...sets.values()].map((s) => s.pods.filter((p) => p.revision === UPDATE).length), phase: previous.phase, rounds: previous.rollback?.rounds ?? 0 };
  }

  test('counted from one Pod list, no role ever has more than maxUnavailable down, and every replica comes back', () => {
    expect(rollBack('pods')).toEqual({ over: 0, left: [0, 0], phase: 'RolledBack', rounds: 2 });
  });

  test('from the StatefulSet\'s status alone, a returned Pod still starting is taken for an abandoned one down, and a round takes two prefill replicas down', () => {
    expect(rollBack('status').over).toBe(1);
  });

  test('the Pods\' updated-and-ready count mixed with the status read before them also takes two prefill replicas down', () => {
    expect(rollBack('mixed').over).toBe(1);
  });
});
