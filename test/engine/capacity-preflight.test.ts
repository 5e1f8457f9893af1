/**
 * The capacity preflight on literal clusters: every expected outcome and message is worked out by
 * hand from the nodes, Pods and quotas written in each test.
 */
import { capacityPictureOf, podPlacement, podRequests, upgradeDemand } from '../../lib/engine/capacity-demand';
import { capacityPreflight, describePlacement, nodeAdmits, type CapacityNode, type PodGroupDemand } from '../../lib/engine/capacity-preflight';
import { parseQuantityMilli } from '../../lib/spec/quantity';

const GI = 2 ** 30 * 1000;
const gpuNode = (name: string, gpus: number, labels: Record<string, string> = { gpu: 'a100' }, extra: Partial<CapacityNode> = {}): CapacityNode => ({
  name, labels, taints: [], allocatable: { cpu: 32000, memory: 128 * GI, pods: 110000, 'nvidia.com/gpu': gpus * 1000 }, ...extra,
});
const gpuGroup = (pods: number, gpus: number, nodeSelector: Record<string, string> = { gpu: 'a100' }): PodGroupDemand => ({
  name: 'gpu-workers', pods, requests: { cpu: 4000, memory: 16 * GI, pods: 1000, 'nvidia.com/gpu': gpus * 1000 }, placement: { nodeSelector },
});
const bound = (node: string, gpus: number, releasable = false) => ({ node, requests: { cpu: 1000, pods: 1000, 'nvidia.com/gpu': gpus * 1000 }, ...(releasable ? { releasable: true } : {}) });

describe('quantities', () => {
  test.each([
    ['100m', 100], ['1', 1000], ['2.5', 2500], ['1Gi', 2 ** 30 * 1000], ['512Mi', 2 ** 29 * 1000], ['1k', 1_000_000], ['1e3', 1_000_000], ['0.1', 100], [4, 4000],
  ])('%s is %d milli-units', (q, milli) => expect(parseQuantityMilli(q)).toBe(milli));
  test.each(['', '-1', 'abc', '1Xi', '1'.repeat(65)])('%j is no quantity', (q) => expect(parseQuantityMilli(q)).toBeUndefined());
});

describe('capacityPreflight', () => {
  test('4 GPU Pods of 1 on two 4-GPU nodes with 7 GPUs taken: needs 4, 1 free', () => {
    // node a: 4 − 4 = 0 free; node b: 4 − 3 = 1 free.
    const picture = { nodes: [gpuNode('a', 4), gpuNode('b', 4)], pods: [bound('a', 4), bound('b', 3)], quotas: [] };
    expect(capacityPreflight([gpuGroup(4, 1)], picture)).toEqual({
      outcome: 'doesNotFit',
      message: 'gpu-workers: needs 4 nvidia.com/gpu on nodes matching {gpu=a100}, 1 free',
    });
  });

  test('the same demand fits with 4 free GPUs spread over the nodes', () => {
    const picture = { nodes: [gpuNode('a', 4), gpuNode('b', 4)], pods: [bound('a', 2), bound('b', 2)], quotas: [] };
    expect(capacityPreflight([gpuGroup(4, 1)], picture)).toEqual({ outcome: 'fits' });
  });

  test('placement is per node: 2 free GPUs on each of two nodes do not hold one 4-GPU Pod', () => {
    const picture = { nodes: [gpuNode('a', 4), gpuNode('b', 4)], pods: [bound('a', 2), bound('b', 2)], quotas: [] };
    expect(capacityPreflight([gpuGroup(1, 4)], picture)).toEqual({
      outcome: 'doesNotFit',
      message: 'gpu-workers: needs 1 Pod of 4 nvidia.com/gpu, 4 cpu, 16Gi memory, 1 pods on nodes matching {gpu=a100}; the free capacity is split over nodes none of which holds one more Pod',
    });
  });

  test('a Pod larger than any matching node', () => {
    const picture = { nodes: [gpuNode('a', 4), gpuNode('big', 8, { gpu: 'h100' })], pods: [], quotas: [] };
    expect(capacityPreflight([gpuGroup(1, 8)], picture)).toEqual({
      outcome: 'doesNotFit',
      message: 'gpu-workers: a Pod needs 8 nvidia.com/gpu, more than any of the nodes matching {gpu=a100} has (largest: 4 allocatable)',
    });
  });

  test('no matching node at all', () => {
    const picture = { nodes: [gpuNode('a', 4)], pods: [], quotas: [] };
    expect(capacityPreflight([gpuGroup(1, 1, { gpu: 'h100' })], picture).message).toBe(
      'gpu-workers: no node matches {gpu=h100} (its node selector, required node affinity and tolerations)',
    );
  });

  test('fits only once the old cluster\'s Pods are released', () => {
    // 8 GPUs, old cluster holds 4 on a, another workload 3 on b: 1 free now, 5 after the old shrinks.
    const picture = { nodes: [gpuNode('a', 4), gpuNode('b', 4)], pods: [bound('a', 4, true), bound('b', 3)], quotas: [] };
    expect(capacityPreflight([gpuGroup(4, 1)], picture)).toEqual({
      outcome: 'fitsAfterOldShrinks',
      message: 'gpu-workers: needs 4 nvidia.com/gpu on nodes matching {gpu=a100}, 1 free',
    });
  });

  test('does not fit even after the old cluster\'s Pods are released', () => {
    // 0 free now; released, a has 4 free and b 0: still short of 6. The message says what is free now.
    const picture = { nodes: [gpuNode('a', 4), gpuNode('b', 4)], pods: [bound('a', 4, true), bound('b', 4)], quotas: [] };
    expect(capacityPreflight([gpuGroup(6, 1)], picture)).toEqual({
      outcome: 'doesNotFit',
      message: 'gpu-workers: needs 6 nvidia.com/gpu on nodes matching {gpu=a100}, 0 free',
    });
  });

  test('a ResourceQuota on requests.nvidia.com/gpu is honoured even when the nodes have room', () => {
    const quota = { name: 'gpus', hard: { 'requests.nvidia.com/gpu': 4000 }, used: { 'requests.nvidia.com/gpu': 3000 } };
    const picture = { nodes: [gpuNode('a', 8)], pods: [bound('a', 3)], quotas: [quota] };
    expect(capacityPreflight([gpuGroup(2, 1)], picture)).toEqual({
      outcome: 'doesNotFit',
      message: 'needs 2 requests.nvidia.com/gpu in ResourceQuota gpus, 1 free (hard 4, used 3)',
    });
    expect(capacityPreflight([gpuGroup(1, 1)], picture)).toEqual({ outcome: 'fits' });
  });

  test('a quota that the old cluster\'s Pods fill fits after they are released', () => {
    const quota = { name: 'gpus', hard: { 'requests.nvidia.com/gpu': 4000 }, used: { 'requests.nvidia.com/gpu': 4000 } };
    const picture = { nodes: [gpuNode('a', 8)], pods: [bound('a', 4, true)], quotas: [quota] };
    expect(capacityPreflight([gpuGroup(2, 1)], picture).outcome).toBe('fitsAfterOldShrinks');
  });

  test('tainted nodes take only Pods that tolerate the taint; cordoned nodes none', () => {
    const taint = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
    const tainted = gpuNode('t', 4, { gpu: 'a100' }, { taints: [taint] });
    expect(nodeAdmits(tainted, { nodeSelector: { gpu: 'a100' } })).toBe(false);
    expect(nodeAdmits(tainted, { nodeSelector: { gpu: 'a100' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] })).toBe(true);
    expect(nodeAdmits(tainted, { tolerations: [{ key: 'nvidia.com/gpu', value: 'absent' }] })).toBe(false);
    expect(nodeAdmits(gpuNode('p', 4, {}, { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] }), {})).toBe(true);
    expect(nodeAdmits(gpuNode('c', 4, {}, { unschedulable: true }), {})).toBe(false);
  });

  test('required node affinity: one term of all-holding requirements', () => {
    const node = gpuNode('n1', 4, { gpu: 'a100', zone: 'z1', mem: '80' });
    const term = (operator: string, key: string, values?: string[]) => ({ requiredTerms: [{ matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] }] });
    expect(nodeAdmits(node, term('In', 'gpu', ['a100', 'h100']))).toBe(true);
    expect(nodeAdmits(node, term('NotIn', 'zone', ['z1']))).toBe(false);
    expect(nodeAdmits(node, term('Exists', 'gpu'))).toBe(true);
    expect(nodeAdmits(node, term('DoesNotExist', 'gpu'))).toBe(false);
    expect(nodeAdmits(node, term('Gt', 'mem', ['40']))).toBe(true);
    expect(nodeAdmits(node, term('Lt', 'mem', ['40']))).toBe(false);
    expect(nodeAdmits(node, { requiredTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] }] })).toBe(true);
    expect(nodeAdmits(node, { requiredTerms: [{}] })).toBe(false);
    expect(describePlacement({ nodeSelector: { gpu: 'a100' }, requiredTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1', 'z2'] }] }] })).toBe('{gpu=a100, zone in (z1,z2)}');
  });

  test('a node full on Pods (allocatable pods) takes no more', () => {
    const node: CapacityNode = { name: 'a', labels: {}, taints: [], allocatable: { cpu: 8000, pods: 2000 } };
    const picture = { nodes: [node], pods: [{ node: 'a', requests: { pods: 1000 } }], quotas: [] };
    expect(capacityPreflight([{ name: 'w', pods: 2, requests: { cpu: 100, pods: 1000 }, placement: {} }], picture).message).toBe('w: needs 2 pods on nodes matching {}, 1 free');
  });
});

describe('reading the demand and the cluster', () => {
  const worker = { spec: { nodeSelector: { gpu: 'a100' }, containers: [{ name: 'w', resources: { limits: { 'nvidia.com/gpu': '1' }, requests: { cpu: '2' } } }] } };
  const cluster = {
    enableInTreeAutoscaling: true,
    headGroupSpec: { template: { spec: { containers: [{ name: 'head', resources: { requests: { cpu: '1', memory: '2Gi' } } }] } } },
    workerGroupSpecs: [{ groupName: 'gpu', replicas: 4, minReplicas: 0, maxReplicas: 4, template: worker }],
  };

  test('a limit without a request requests the limit; LimitRange defaults fill what a container leaves unset', () => {
    const limitRange = { spec: { limits: [{ type: 'Container', defaultRequest: { memory: '1Gi' }, default: { memory: '4Gi', cpu: '500m' } }, { type: 'Pod', max: { cpu: '64' } }] } };
    expect(podRequests(worker, [limitRange])).toEqual({ cpu: 2000, 'nvidia.com/gpu': 1000, memory: GI, pods: 1000 });
    expect(podRequests({ spec: { containers: [{ name: 'bare' }] } }, [limitRange])).toEqual({ memory: GI, cpu: 500, pods: 1000 });
  });

  test('init containers: sidecars add up, a plain one counts alone when larger', () => {
    const t = { spec: { containers: [{ resources: { requests: { cpu: '1' } } }], initContainers: [{ restartPolicy: 'Always', resources: { requests: { cpu: '1' } } }, { resources: { requests: { cpu: '3' } } }] } };
    expect(podRequests(t)).toEqual({ cpu: 3000, pods: 1000 });
  });

  test('incremental upgrade: head + the first surge step; blue/green: head + every worker', () => {
    // 4 workers × 50% surge = 2 Pods.
    expect(upgradeDemand(cluster, { strategy: 'NewClusterWithIncrementalUpgrade', maxSurgePercent: 50 }).map((g) => [g.name, g.pods])).toEqual([['head', 1], ['gpu', 2]]);
    // 4 × 30% = 1.2, rounded up to 2.
    expect(upgradeDemand(cluster, { strategy: 'NewClusterWithIncrementalUpgrade', maxSurgePercent: 30 })[1].pods).toBe(2);
    expect(upgradeDemand(cluster, { strategy: 'NewCluster', maxSurgePercent: 100 })[1]).toEqual({
      name: 'gpu', pods: 4, requests: { cpu: 2000, 'nvidia.com/gpu': 1000, pods: 1000 }, placement: podPlacement(worker),
    });
  });

  test('the picture: bound, unfinished Pods only; the old cluster\'s marked releasable; quota from status', () => {
    const pod = (name: string, node: string | undefined, cluster: string, phase = 'Running') => ({
      metadata: { name, labels: { 'ray.io/cluster': cluster } }, spec: { ...(node ? { nodeName: node } : {}), containers: [{ resources: { limits: { 'nvidia.com/gpu': '1' } } }] }, status: { phase },
    });
    const picture = capacityPictureOf(
      [{ metadata: { name: 'kwok-gpu-0', labels: { gpu: 'a100' } }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] }, status: { allocatable: { 'nvidia.com/gpu': '4', pods: '110' } } }],
      [pod('old-w', 'kwok-gpu-0', 'svc-old'), pod('other', 'kwok-gpu-0', 'x'), pod('pending', undefined, 'x'), pod('done', 'kwok-gpu-0', 'x', 'Succeeded')],
      [{ metadata: { name: 'q' }, spec: { hard: { 'requests.nvidia.com/gpu': '8' } }, status: { hard: { 'requests.nvidia.com/gpu': '8' }, used: { 'requests.nvidia.com/gpu': '2' } } }],
      (p) => (p.metadata as { labels: Record<string, string> }).labels['ray.io/cluster'] === 'svc-old',
    );
    expect(picture).toEqual({
      nodes: [{ name: 'kwok-gpu-0', labels: { gpu: 'a100' }, taints: [{ key: 'k', effect: 'NoSchedule' }], allocatable: { 'nvidia.com/gpu': 4000, pods: 110000 } }],
      pods: [
        { node: 'kwok-gpu-0', requests: { 'nvidia.com/gpu': 1000, pods: 1000 }, releasable: true },
        { node: 'kwok-gpu-0', requests: { 'nvidia.com/gpu': 1000, pods: 1000 } },
      ],
      quotas: [{ name: 'q', hard: { 'requests.nvidia.com/gpu': 8000 }, used: { 'requests.nvidia.com/gpu': 2000 } }],
    });
  });
});
