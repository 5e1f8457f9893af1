/**
 * Executor `rbg` against RBG's real controller (v0.7.0, `rbgs` in test/support/cluster.ts): a
 * prefill/decode group with a coordinated rolling-update rule is synthesized by rayshift's
 * `RoleBasedGroup` construct (the group and its CoordinatedPolicy), applied, run to Ready by
 * kube-scheduler and kwok, and given a new image. RBG's controller then performs the coordinated
 * rolling update itself, writing each role's partition into its RoleInstanceSet, while kwok's
 * `pod-image-update` stage updates the Pods in place. A watch records every state of the
 * RoleInstanceSets; the test checks the skew of every observed state, that the rollout completes,
 * and compares RBG's rounds (its partitions as they change) round by round with rayshift's plan of
 * the same synthesized objects (`rayshift plan`'s engine call). Needs `npm run controlplane:build`
 * and `bash scripts/build-cluster.sh kwok rbg`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import { RoleBasedGroup } from '../../lib/cdk8s/rolebasedgroup';
import { plan, upstreamPartition, upstreamRollingTargets, type RbgRoleState, type RoleBasedGroupPlan } from '../../lib/engine';
import { rbgPlanInputs } from '../../lib/engine/from-spec';
import { KubeClient } from '../../lib/runtime/kube/client';
import { KubeObject } from '../../lib/runtime/kube/types';
import { CoordinationRule } from '../../lib/spec/rbg';
import { startTestCluster, TestCluster } from '../support/cluster';
import { GroupState, stateSkewPercent, WorkloadRecorder } from '../support/rbg-workload-recorder';
import { rbgSkewCheck } from '../support/rbg-skew-check';

const NS = 'default';
const GROUPS = `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/rolebasedgroups`;
const POLICIES = `/apis/workloads.x-k8s.io/v1alpha2/namespaces/${NS}/coordinatedpolicies`;
let cluster: TestCluster;
let client: KubeClient;

beforeAll(async () => {
  cluster = await startTestCluster({ rbg: true, nodes: 2 });
  client = KubeClient.fromKubeconfig(cluster.cp.kubeconfigPath);
}, 300_000);

afterAll(async () => {
  client?.close();
  await cluster?.stop();
});

/** The group and its CoordinatedPolicy as the construct synthesizes them, every role at `image`. */
function synthesize(name: string, replicas: Record<string, number>, rollingUpdate: CoordinationRule['rollingUpdate'], image: string): { group: KubeObject; policy: KubeObject } {
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name, namespace: NS },
    roles: Object.entries(replicas).map(([role, n]) => ({ name: role, replicas: n, template: { spec: { containers: [{ name: role, image }] } } })),
    coordination: [{ name: 'pd', roles: Object.keys(replicas), rollingUpdate }],
  });
  const objects = Testing.synth(chart) as KubeObject[];
  expect(objects.map((o) => o.kind).sort()).toEqual(['CoordinatedPolicy', 'RoleBasedGroup']);
  return { group: objects.find((o) => o.kind === 'RoleBasedGroup')!, policy: objects.find((o) => o.kind === 'CoordinatedPolicy')! };
}

/** Each change of a role's partition: the role, its new value and the index of the state showing it. */
interface PartitionWrite {
  readonly role: string;
  readonly partition: number;
  readonly at: number;
}

/** The partitions RBG wrote, one entry per change of one role's (RBG writes the roles' workloads one after the other). */
function partitionWrites(states: readonly GroupState[], roles: readonly string[]): PartitionWrite[] {
  const writes: PartitionWrite[] = [];
  states.forEach((s, at) => {
    for (const role of roles) {
      if (at === 0 || s[role].partition !== states[at - 1][role].partition) writes.push({ role, partition: s[role].partition, at });
    }
  });
  return writes;
}

/** Each role's partitions in order, repeats dropped. */
function sequences(rounds: readonly Readonly<Record<string, number>>[], roles: readonly string[]): Record<string, number[]> {
  return Object.fromEntries(roles.map((r) => [r, rounds.map((p) => p[r]).filter((v, i, all) => i === 0 || v !== all[i - 1])]));
}

/**
 * The partitions the engine's port of RBG's step (`upstreamRollingTargets`, `upstreamPartition`)
 * writes from one observed state. `rbg`: as RBG reads it — a workload's counts as it reports them
 * (before it observes the new template, its old replicas count as updated), or, while it has not
 * observed its latest spec, the role's entry in the group's status (RBG's
 * `ConstructWorkloadRoleStatus`). `true`: the replicas really on the new revision (`v1Revision`
 * names the old one).
 */
function stepFrom(state: GroupState, c: Case, reading: 'rbg' | 'true', v1Revision: Record<string, string> = {}): Record<string, number> {
  const roles: RbgRoleState[] = Object.keys(c.replicas).map((name) => {
    const w = state[name];
    const read = reading === 'rbg' ? (!w.observed && w.reported ? w.reported : w) : { updated: w.updateRevision === v1Revision[name] ? 0 : w.updated, ready: w.ready };
    return { name, desired: c.replicas[name], updatedReplicas: read.updated, readyReplicas: read.ready, maxUnavailable: c.maxUnavailable, partition: Math.min(c.partition ?? 0, c.replicas[name]) };
  });
  const targets = upstreamRollingTargets(c.maxSkewPercent, roles);
  return Object.fromEntries(roles.map((r) => [r.name, upstreamPartition(r, targets?.get(r.name) ?? r.desired)]));
}

/**
 * The states RBG may have read for `write`: those since its previous write of the same role (one
 * before it, as RBG's cache may lag its own write), which its reconciles follow one at a time.
 */
function readWindow(states: readonly GroupState[], writes: readonly PartitionWrite[], write: PartitionWrite): GroupState[] {
  const previous = writes.slice(0, writes.indexOf(write)).filter((w) => w.role === write.role).pop();
  return states.slice(Math.max(0, (previous?.at ?? 0) - 1), write.at);
}

/** PUT of a new version of an object, retried on 409 (RBG writes the group's status and annotations meanwhile). */
async function replace(urlPath: string, next: KubeObject): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const current = (await cluster.cp.request('GET', urlPath)).body;
    const put = await cluster.cp.request('PUT', urlPath, { ...next, metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion } });
    if (put.status === 200) return;
    if (put.status !== 409 || attempt >= 10) throw new Error(`PUT ${urlPath}: HTTP ${put.status} ${JSON.stringify(put.body).slice(0, 300)}`);
  }
}

interface Case {
  readonly name: string;
  readonly replicas: Record<string, number>;
  readonly maxSkewPercent: number;
  readonly maxUnavailable: number;
  readonly partition?: number;
}

const CASES: Case[] = [
  { name: 'pd-4-2', replicas: { prefill: 4, decode: 2 }, maxSkewPercent: 50, maxUnavailable: 1 },
  { name: 'pd-5-3', replicas: { prefill: 5, decode: 3 }, maxSkewPercent: 20, maxUnavailable: 1 },
  // A user partition on the role that ends slowest: RBG v0.7.0 stalls (only the slowest role may advance).
  { name: 'pd-6-2-p1', replicas: { prefill: 6, decode: 2 }, maxSkewPercent: 25, maxUnavailable: 2, partition: 1 },
];

describe.each(CASES)('$name: $replicas, maxSkew $maxSkewPercent%, maxUnavailable $maxUnavailable, partition $partition', (c) => {
  const { name, replicas, maxSkewPercent, maxUnavailable, partition } = c;
  const roles = Object.keys(replicas);
  const rollingUpdate = { maxSkew: `${maxSkewPercent}%`, maxUnavailable, ...(partition !== undefined ? { partition } : {}) };
  const userPartition = Object.fromEntries(roles.map((r) => [r, Math.min(partition ?? 0, replicas[r])]));
  let states: GroupState[] = [];
  let writes: PartitionWrite[] = [];
  let predicted: RoleBasedGroupPlan;
  let v1Revision: Record<string, string> = {};

  beforeAll(() =>
    cluster.printLogsOnFailure(async () => {
      const v1 = synthesize(name, replicas, rollingUpdate, 'sglang:v1');
      const v2 = synthesize(name, replicas, rollingUpdate, 'sglang:v2');
      // `rayshift plan` of the synthesized group and policy: RBG's controller runs the rule.
      const plans = rbgPlanInputs(v2.group, v2.policy, 'controller').map((i) => plan(i));
      expect(plans).toHaveLength(1);
      predicted = plans[0];
      const last = predicted.rounds[predicted.rounds.length - 1];
      // The policy first: RBG reads it on each reconcile of the group of the same name.
      expect((await cluster.cp.request('POST', POLICIES, v1.policy)).status).toBe(201);
      expect((await cluster.cp.request('POST', GROUPS, v1.group)).status).toBe(201);
      const recorder = new WorkloadRecorder(client, NS, name, roles);
      try {
        const before = await recorder.until('every role ready at v1, in the group\'s status too', (s) =>
          roles.every((r) => s[r]?.observed && s[r].updated === replicas[r] && s[r].ready === replicas[r] && s[r].partition === userPartition[r] && s[r].reported?.ready === replicas[r]),
        );
        v1Revision = Object.fromEntries(roles.map((r) => [r, before[r].updateRevision]));
        const from = recorder.history.length - 1;
        await replace(`${GROUPS}/${name}`, v2.group);
        // Where the rollout ends: complete, or stalled: every workload at its partition and ready, and
        // RBG's step from these counts writes the partitions already written (the plan's last round,
        // unless RBG read stale counts on the way).
        await recorder.until(
          `the rollout complete or stalled (the plan ends at ${JSON.stringify(last)}), every replica ready`,
          (s) =>
            roles.every((r) => s[r].observed && s[r].updateRevision !== v1Revision[r] && s[r].ready === replicas[r] && s[r].updated === replicas[r] - s[r].partition) &&
            (roles.every((r) => s[r].updated === replicas[r] - userPartition[r]) || roles.every((r) => stepFrom(s, c, 'rbg')[r] === s[r].partition)),
          180_000,
          from,
        );
        states = recorder.since(from);
        writes = partitionWrites(states, roles);
        // The record of every run, for the docs and for a failure.
        fs.writeFileSync(path.join(os.tmpdir(), `rbg-coordinated-${name}.json`), JSON.stringify({ predicted, writes, states }, null, 1));
      } finally {
        recorder.stop();
      }
    }), 300_000);

  test('every observed state passes RBG\'s own skew check (maxSkew + one replica of the smallest role), counting replicas on the new revision', () => {
    expect(states.length).toBeGreaterThan(2);
    const onNew = (s: GroupState) => roles.map((r) => ({ name: r, desired: replicas[r], updatedReplicas: s[r].updateRevision === v1Revision[r] ? 0 : s[r].updated }));
    for (const s of states) {
      const verdict = rbgSkewCheck(maxSkewPercent, onNew(s));
      if (!verdict.ok) expect({ verdict, state: s }).toEqual({ verdict: { ...verdict, ok: true }, state: s });
    }
    // The roles did move at different times: the bound was exercised.
    expect(Math.max(...states.map((s) => stateSkewPercent(Object.fromEntries(onNew(s).map((r) => [r.name, { ...s[r.name], updated: r.updatedReplicas }])))))).toBeGreaterThan(0);
  });

  test('the rollout ends as planned: complete, or stalled where RBG\'s step can no longer move any partition', () => {
    const final = states[states.length - 1];
    if (predicted.complete) {
      expect(Object.fromEntries(roles.map((r) => [r, final[r].updated]))).toEqual(Object.fromEntries(roles.map((r) => [r, replicas[r] - userPartition[r]])));
    } else {
      // Nothing changes any more, so RBG reconciles nothing new; its step from here writes what is written.
      expect(roles.some((r) => final[r].updated < replicas[r] - userPartition[r])).toBe(true);
      expect(stepFrom(final, c, 'rbg')).toEqual(Object.fromEntries(roles.map((r) => [r, final[r].partition])));
    }
  });

  test('RBG\'s first write with the new template keeps only the user\'s partitions (computed from the old revision\'s statuses), as the plan\'s first round', () => {
    // Each workload's partition when it first shows the new revision (RBG wrote both in one update).
    const written = Object.fromEntries(roles.map((r) => [r, states.find((s) => s[r].updateRevision !== v1Revision[r])![r].partition]));
    expect(written).toEqual(userPartition);
    expect(predicted.rounds[0].partition).toEqual(written);
    // Upstream's step from nothing updated (the engine's `upstream` plan) would hold some replicas: the difference is RBG's.
    const fromNothing = rbgPlanInputs(synthesize(name, replicas, rollingUpdate, 'x').group, synthesize(name, replicas, rollingUpdate, 'x').policy, 'upstream').map((i) => plan(i))[0];
    expect(fromNothing.rounds[0].partition).not.toEqual(written);
  });

  test('every partition RBG writes is the engine\'s port of its step from what RBG read (its workloads, or the group\'s role status for a workload that had not observed its spec)', () => {
    const later = writes.filter((w) => w.at > 0);
    expect(later.length).toBeGreaterThan(0); // RBG stepped in after its first write
    for (const w of later) {
      const candidates = readWindow(states, writes, w).map((s) => stepFrom(s, c, 'rbg')[w.role]);
      if (!candidates.includes(w.partition)) expect({ write: w, predictedFromStates: candidates }).toEqual({ write: w, predictedFromStates: [w.partition] });
    }
  });

  test('round by round: each role\'s partitions follow the plan, except where RBG read stale counts', () => {
    const observed = sequences(states.map((s) => Object.fromEntries(roles.map((r) => [r, s[r].partition]))), roles);
    const planned = sequences(predicted.rounds.map((r) => r.partition), roles);
    process.stderr.write(`${name}: observed ${JSON.stringify(observed)}, planned ${JSON.stringify(planned)}\n`);
    if (JSON.stringify(observed) === JSON.stringify(planned)) return;
    // A difference (in the rounds, or in where the rollout stalls): some write follows only from counts
    // RBG read that were not the replicas on the new revision.
    const staleOnly = writes.filter((w) => {
      if (w.at === 0) return false;
      const window = readWindow(states, writes, w);
      return !window.some((s) => stepFrom(s, c, 'true', v1Revision)[w.role] === w.partition) && window.some((s) => stepFrom(s, c, 'rbg')[w.role] === w.partition);
    });
    expect(staleOnly.length).toBeGreaterThan(0);
  });
});
