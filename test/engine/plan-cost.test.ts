/**
 * What a plan costs: Pods and accelerators of each cluster at every moment, the peak and how long
 * it lasts (RayService), the Pods of each role per round with the surge (RoleBasedGroup), and the
 * smallest skew any rollout of given role sizes can keep. Every expected number is worked out by
 * hand from the inputs in the comments.
 */
import { plan } from '../../lib/engine/plan';
import { clusterUsage, peakOf } from '../../lib/engine/plan-cost';
import type { RayServicePlan } from '../../lib/engine/plan-rayservice';
import { exceedsSkew, smallestAchievableSkewPercent } from '../../lib/engine/rbg-bound';
import { clusterShape, podExtendedResources } from '../../lib/spec/raycluster';
import { roleShape } from '../../lib/spec/rbg-shape';
import type { ResolvedUpgradeOptions } from '../../lib/spec/rayservice';

const gpuPod = (gpus: number) => ({ spec: { containers: [{ name: 'w', resources: { limits: { cpu: '8', 'nvidia.com/gpu': String(gpus) } } }] } });
const head = { template: { spec: { containers: [{ name: 'head', resources: { limits: { cpu: '4', memory: '16Gi' } } }] } } };

const options = (strategy: ResolvedUpgradeOptions['strategy'], o: Partial<ResolvedUpgradeOptions> = {}): ResolvedUpgradeOptions => ({
  strategy,
  maxSurgePercent: 100,
  stepSizePercent: 100,
  intervalSeconds: 1,
  rayClusterDeletionDelaySeconds: 60,
  progressDeadlineSeconds: 600,
  ...o,
});

describe('extended resources of a Pod', () => {
  test('every domain-prefixed resource outside kubernetes.io counts; cpu, memory and hugepages do not', () => {
    const t = { spec: { containers: [{ resources: { limits: { cpu: '2', memory: '1Gi', 'hugepages-2Mi': '1Gi', 'nvidia.com/gpu': '2', 'example.com/fpga': 1 } } }, { resources: { requests: { 'nvidia.com/gpu': '1' } } }] } };
    expect(podExtendedResources(t)).toEqual({ 'nvidia.com/gpu': 3, 'example.com/fpga': 1 });
  });

  test('an init container counts when it needs more than the containers; a sidecar adds to them', () => {
    // containers 1 GPU + sidecar 1 = 2; the plain init container's 4 run alone, before them: 4.
    const t = { spec: { containers: [gpuPod(1).spec.containers[0]], initContainers: [{ restartPolicy: 'Always', resources: { limits: { 'nvidia.com/gpu': 1 } } }, { resources: { limits: { 'nvidia.com/gpu': 4 } } }] } };
    expect(podExtendedResources(t)).toEqual({ 'nvidia.com/gpu': 4 });
  });
});

describe('cluster shape and usage', () => {
  test('without the autoscaler a group counts KubeRay desired replicas (replicas within min..max), × numOfHosts', () => {
    const shape = clusterShape({
      headGroupSpec: head,
      workerGroupSpecs: [
        { groupName: 'a', replicas: 6, minReplicas: 0, maxReplicas: 4, template: gpuPod(1) }, // clamped to 4
        { groupName: 'tpu', replicas: 2, numOfHosts: 4, template: { spec: { containers: [{ resources: { limits: { 'google.com/tpu': 4 } } }] } } },
        { groupName: 'off', replicas: 3, suspend: true, template: gpuPod(1) },
      ],
    });
    expect(shape.workerGroups.map((g) => [g.replicas, g.minReplicas, g.podsPerReplica])).toEqual([[4, 4], [2, 2], [0, 0]].map(([r, m], i) => [r, m, i === 1 ? 4 : 1]));
    // head 1 + 4 + 2×4 + 0 = 13 Pods; 4 GPUs; 8 hosts × 4 TPUs = 32. Without the autoscaler capacity changes no Pod.
    expect(clusterUsage(shape, 100)).toEqual({ pods: 13, accelerators: { 'nvidia.com/gpu': 4, 'google.com/tpu': 32 } });
    expect(clusterUsage(shape, 0)).toEqual(clusterUsage(shape, 100));
  });

  test('with the autoscaler a group counts maxReplicas at 100% and ceil(max × capacity) at least minReplicas below', () => {
    const shape = clusterShape({ enableInTreeAutoscaling: true, headGroupSpec: head, workerGroupSpecs: [{ groupName: 'gpu', minReplicas: 1, maxReplicas: 8, template: gpuPod(2) }] });
    expect(clusterUsage(shape, 100)).toEqual({ pods: 9, accelerators: { 'nvidia.com/gpu': 16 } });
    // ceil(8 × 0.3) = 3 workers + head; at 0% the floor of 1 worker stays.
    expect(clusterUsage(shape, 30)).toEqual({ pods: 4, accelerators: { 'nvidia.com/gpu': 6 } });
    expect(clusterUsage(shape, 0)).toEqual({ pods: 2, accelerators: { 'nvidia.com/gpu': 2 } });
  });

  test("KubeRay's default maxReplicas (unbounded) counts the desired replicas instead", () => {
    const shape = clusterShape({ enableInTreeAutoscaling: true, headGroupSpec: head, workerGroupSpecs: [{ groupName: 'g', replicas: 2, minReplicas: 0, maxReplicas: 2147483647, template: gpuPod(1) }] });
    expect(shape.workerGroups[0].replicas).toBe(2);
  });
});

describe('peakOf', () => {
  test('the largest value, when it is first reached, when it last ends and how long it holds in all', () => {
    // 150 holds 0→30 and 60→90 (60 s), with 100 between and after.
    const samples = [{ at: 0, value: 150 }, { at: 30, value: 100 }, { at: 60, value: 150 }, { at: 90, value: 100 }];
    expect(peakOf(samples, 120)).toEqual({ value: 150, from: 0, until: 90, lasts: 60 });
    expect(peakOf([], 0)).toBeUndefined();
  });
});

describe('RayService plan footprint', () => {
  // 4 non-autoscaled workers × 2 GPUs + a CPU head: 5 Pods, 8 GPUs a cluster.
  const cluster = clusterShape({ headGroupSpec: head, workerGroupSpecs: [{ groupName: 'gpu', replicas: 4, minReplicas: 4, maxReplicas: 4, template: gpuPod(2) }] });
  const full = { pods: 5, accelerators: { 'nvidia.com/gpu': 8 } };

  test('NewCluster: a full second cluster, 200% and twice the GPUs from its creation until the old one is deleted 60 s after the switch', () => {
    const p = plan({ kind: 'RayService', name: 'llm', options: options('NewCluster'), cluster });
    expect(p.footprint.map((f) => [f.atSeconds, f.events, f.old, f.new])).toEqual([
      [0, ['create-new', 'scale-pending'], { capacityPercent: 100, usage: full }, { capacityPercent: 100, usage: full }],
      [0, ['promote'], { capacityPercent: 100, usage: full }, { capacityPercent: 100, usage: full }],
      [60, ['delete-old'], undefined, { capacityPercent: 100, usage: full }],
    ]);
    expect(p.peakCapacityPercent).toBe(200);
    expect(p.peak).toEqual({
      capacityPercent: { value: 200, from: 0, until: 60, lasts: 60 },
      pods: { value: 10, from: 0, until: 60, lasts: 60 },
      accelerators: { 'nvidia.com/gpu': { value: 16, from: 0, until: 60, lasts: 60 } },
    });
  });

  test('incremental, 50% surge in 25% steps every 30 s over an autoscaled 1..8 group: 150% and 12 of 16 GPUs for 120 s', () => {
    const autoscaled = clusterShape({ enableInTreeAutoscaling: true, headGroupSpec: head, workerGroupSpecs: [{ groupName: 'gpu', minReplicas: 1, maxReplicas: 4, template: gpuPod(2) }] });
    const p: RayServicePlan = plan({ kind: 'RayService', name: 'llm', options: options('NewClusterWithIncrementalUpgrade', { maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 30 }), cluster: autoscaled });
    // At 100%: head + 4 workers = 5 Pods, 8 GPUs; at 50%: head + ceil(4 × 0.5) = 3 Pods, 4 GPUs; at 0%: head + minReplicas 1 = 2 Pods, 2 GPUs.
    // 0 s: new at 0% then 50% (old 100%): 8 Pods, 12 GPUs, until 120 s where the old one drops to 0% (traffic moves at 0, 30, 60, 90 s).
    const last = p.footprint[p.footprint.length - 1];
    expect([last.atSeconds, last.events, last.old]).toEqual([180, ['delete-old'], undefined]);
    expect(p.peak.capacityPercent).toEqual({ value: 150, from: 0, until: 120, lasts: 120 });
    expect(p.peak.pods).toEqual({ value: 8, from: 0, until: 120, lasts: 120 });
    expect(p.peak.accelerators).toEqual({ 'nvidia.com/gpu': { value: 12, from: 0, until: 120, lasts: 120 } });
    // After the promotion the old cluster at 0% keeps its head and its one minReplicas worker until it is deleted.
    const promoted = p.footprint.find((f) => f.events.includes('promote'))!;
    expect(promoted.old).toEqual({ capacityPercent: 0, usage: { pods: 2, accelerators: { 'nvidia.com/gpu': 2 } } });
  });

  test('None: no footprint, no peak above the one cluster', () => {
    const p = plan({ kind: 'RayService', name: 'llm', options: options('None'), cluster });
    expect([p.steps, p.footprint, p.peakCapacityPercent, p.peak]).toEqual([[], [], 100, { accelerators: {} }]);
  });
});

describe('smallestAchievableSkewPercent', () => {
  test("RBG's own example, 7 prefill and 3 decode: 5/21 = 23.8% (path 1/0, 1/1, 2/1, 3/1, then 4/1 or 3/2 at |4/7 − 1/3|)", () => {
    expect(smallestAchievableSkewPercent([{ replicas: 7, partition: 0 }, { replicas: 3, partition: 0 }])).toBeCloseTo((100 * 5) / 21, 10);
  });

  test('equal roles keep one replica of a role: 1/4 for 4 and 4', () => {
    expect(smallestAchievableSkewPercent([{ replicas: 4, partition: 0 }, { replicas: 4, partition: 0 }])).toBeCloseTo(25, 10);
  });

  test('a role of one replica: the other must wait half-way, 1/2 for 2 and 1', () => {
    // 2/1: states 1/0 (50%), then 1/1 (50%) or 2/0 (100%): 50%.
    expect(smallestAchievableSkewPercent([{ replicas: 2, partition: 0 }, { replicas: 1, partition: 0 }])).toBeCloseTo(50, 10);
  });

  test('a partition the other role does not have ends apart: 4 with partition 2 beside 4 ends at 2/4 against 4/4, 50%', () => {
    expect(smallestAchievableSkewPercent([{ replicas: 4, partition: 2 }, { replicas: 4, partition: 0 }])).toBeCloseTo(50, 10);
  });

  test('roles without replicas and single roles coordinate nothing: 0', () => {
    expect(smallestAchievableSkewPercent([{ replicas: 5, partition: 0 }, { replicas: 0, partition: 0 }])).toBe(0);
  });

  test('agrees with a search over every order of single-replica updates, for all pairs up to 7 × 7', () => {
    for (let a = 1; a <= 7; a++) {
      for (let b = 1; b <= 7; b++) {
        expect(smallestAchievableSkewPercent([{ replicas: a, partition: 0 }, { replicas: b, partition: 0 }])).toBeCloseTo(bottleneckSearch(a, b), 9);
      }
    }
  });

  test('exceedsSkew ignores the float noise of k/n × 100', () => {
    expect(exceedsSkew((3 / 10) * 100, 30)).toBe(false);
    expect(exceedsSkew(30.01, 30)).toBe(true);
  });
});

/** The least largest skew over monotone single-replica paths from 0/0 to a/b, by dynamic programming over the grid (independent of the closed form). */
function bottleneckSearch(a: number, b: number): number {
  const best: number[][] = [];
  for (let u = 0; u <= a; u++) {
    best.push([]);
    for (let v = 0; v <= b; v++) {
      const here = Math.abs(u / a - v / b) * 100;
      const from = u === 0 && v === 0 ? 0 : Math.min(u > 0 ? best[u - 1][v] : Infinity, v > 0 ? best[u][v - 1] : Infinity);
      best[u].push(Math.max(here, from));
    }
  }
  return best[a][b];
}

describe('RoleBasedGroup plan cost', () => {
  test('each round counts replicas × Pods per replica, plus the surge of a role the round moves', () => {
    const group = { spec: { roles: [] } };
    // prefill: leader/worker instances of 2 Pods × 1 GPU, maxSurge 1; decode: standalone, 1 GPU, no surge.
    const prefill = roleShape({ name: 'prefill', replicas: 2, leaderWorkerPattern: { size: 2, template: gpuPod(1) }, rolloutStrategy: { rollingUpdate: { maxSurge: 1 } } }, group);
    const decode = roleShape({ name: 'decode', replicas: 2, standalonePattern: { template: gpuPod(1) } }, group);
    expect([prefill, decode]).toEqual([
      { podsPerReplica: 2, perReplica: { 'nvidia.com/gpu': 2 }, maxSurge: 1 },
      { podsPerReplica: 1, perReplica: { 'nvidia.com/gpu': 1 }, maxSurge: 0 },
    ]);
    const p = plan({
      kind: 'RoleBasedGroup',
      name: 'pd',
      maxSkewPercent: 100,
      coordination: 'upstream',
      roles: [
        { name: 'prefill', replicas: 2, partition: 0, maxUnavailable: 1, shape: prefill },
        { name: 'decode', replicas: 2, partition: 0, maxUnavailable: 1, shape: decode },
      ],
    });
    // Every round that moves prefill holds (2 + 1) × 2 = 6 Pods and 6 GPUs; decode holds 2 either way.
    for (const [i, round] of p.rounds.entries()) {
      const before = i === 0 ? 0 : p.rounds[i - 1].updated.prefill;
      const moved = round.updated.prefill > before;
      expect(round.usage!.roles.prefill).toEqual({ pods: moved ? 6 : 4, accelerators: { 'nvidia.com/gpu': moved ? 6 : 4 } });
      expect(round.usage!.roles.decode).toEqual({ pods: 2, accelerators: { 'nvidia.com/gpu': 2 } });
    }
    expect(p.peak!.pods!.value).toBe(8);
  });

  test('the plan carries the skew it keeps beside maxSkew and the smallest achievable (7/3 at 1%)', () => {
    const roles = [{ name: 'prefill', replicas: 7, partition: 0, maxUnavailable: 1 }, { name: 'decode', replicas: 3, partition: 0, maxUnavailable: 1 }];
    const p = plan({ kind: 'RoleBasedGroup', name: 'nginx-cluster', maxSkewPercent: 1, coordination: 'controller', roles });
    expect(p.skew.maxSkewPercent).toBe(1);
    expect(p.skew.smallestAchievablePercent).toBeCloseTo((100 * 5) / 21, 10);
    // RBG's controller reaches 2/7 against 0/3 on the way: 28.6%.
    expect(p.skew.largestPercent).toBeCloseTo((100 * 2) / 7, 10);
    expect(p.peak).toBeUndefined();
  });
});

test('smallestAchievableSkewPercent stays quick on int32 roles: past 10 000 steps it is the floor 1/(2·replicas), here 1/(2·(2^31 − 2))', () => {
  const b = 2147483646;
  expect(smallestAchievableSkewPercent([{ replicas: 2147483647, partition: 0 }, { replicas: b, partition: 0 }])).toBe(100 / (2 * b));
});
