/** What the executor reads of a RoleBasedGroup's roles and their workloads (pure). */
import { controllerCaughtUp, observeRoles, roleProgress, roleRevision } from '../../../lib/runtime/rbg/observe';
import { workloadOf, workloadStatus } from '../../../lib/runtime/rbg/workloads';

const template = { spec: { containers: [{ name: 'main', image: 'sglang:v1' }] } };

describe('roleProgress', () => {
  const entry = { name: 'decode', replicas: 20, readyReplicas: 20, updatedReplicas: 3 };

  test('the workload\'s counts win when it has observed its latest spec (the group\'s entry may be stale)', () => {
    expect(roleProgress(entry, { generation: 4, observedGeneration: 4, updatedReplicas: 9, readyReplicas: 18 })).toEqual({ updatedReplicas: 9, readyReplicas: 18, source: 'workload' });
  });

  test('the workload\'s template revision comes with its counts', () => {
    expect(roleProgress(entry, { generation: 4, observedGeneration: 4, updatedReplicas: 9, readyReplicas: 18, updateRevision: 'pd-decode-7c6f' })).toEqual({ updatedReplicas: 9, readyReplicas: 18, source: 'workload', workloadRevision: 'pd-decode-7c6f' });
  });

  test('the workload\'s current revision comes with them, as read from its status', () => {
    const status = workloadStatus({ metadata: { generation: 4 }, status: { observedGeneration: 4, updatedReplicas: 9, readyReplicas: 9, updateRevision: 'pd-decode-7c6f', currentRevision: 'pd-decode-55dc' } });
    expect(roleProgress(entry, status)).toEqual({ updatedReplicas: 9, readyReplicas: 9, source: 'workload', workloadRevision: 'pd-decode-7c6f', workloadCurrentRevision: 'pd-decode-55dc' });
  });

  test('a workload that has not observed its latest spec: unknown, not the group\'s entry (which still counts the previous template\'s replicas as updated)', () => {
    expect(roleProgress(entry, { generation: 5, observedGeneration: 4, updatedReplicas: 9, readyReplicas: 18 })).toBeUndefined();
  });

  test('no workload read (its kind not served): the group\'s entry', () => {
    expect(roleProgress(entry, undefined)).toEqual({ updatedReplicas: 3, readyReplicas: 20, source: 'group' });
  });

  test('no entry and no workload: unknown', () => {
    expect(roleProgress(undefined, undefined)).toBeUndefined();
  });
});

describe('observeRoles', () => {
  const group = {
    spec: {
      roles: [
        { name: 'prefill', replicas: 40, rolloutStrategy: { rollingUpdate: { partition: '25%', maxUnavailable: '10%', paused: true } }, standalonePattern: { template } },
        { name: 'decode', standalonePattern: { template } },
      ],
    },
    status: { observedGeneration: 3, roleStatuses: [{ name: 'prefill', replicas: 40, readyReplicas: 38, updatedReplicas: 12 }] },
  };

  test('resolves written percents to counts, reads paused, indexes roles and defaults replicas to 1', () => {
    const roles = observeRoles(group);
    expect(roles.get('prefill')).toMatchObject({ index: 0, desired: 40, partition: 10, maxUnavailable: 4, paused: true, progress: { updatedReplicas: 12, readyReplicas: 38, source: 'group' } });
    const decode = roles.get('decode')!;
    expect(decode).toMatchObject({ index: 1, desired: 1, paused: false });
    expect(decode.partition).toBeUndefined();
    expect(decode.progress).toBeUndefined();
  });

  test('a workload status overrides the group\'s entry for its role', () => {
    const roles = observeRoles(group, new Map([['prefill', { generation: 2, observedGeneration: 2, updatedReplicas: 20, readyReplicas: 40 }]]));
    expect(roles.get('prefill')!.progress).toEqual({ updatedReplicas: 20, readyReplicas: 40, source: 'workload' });
  });
});

describe('roleRevision', () => {
  const role = { name: 'prefill', replicas: 4, standalonePattern: { template } };

  test('ignores replicas, the rollout strategy and key order', () => {
    const moved = { standalonePattern: { template }, rolloutStrategy: { rollingUpdate: { partition: 3, paused: true } }, replicas: 8, name: 'prefill' };
    expect(roleRevision(moved)).toBe(roleRevision(role));
  });

  test('changes with the pod template', () => {
    const v2 = { ...role, standalonePattern: { template: { spec: { containers: [{ name: 'main', image: 'sglang:v2' }] } } } };
    expect(roleRevision(v2)).not.toBe(roleRevision(role));
  });
});

describe('workloadOf', () => {
  test('v1alpha2: RoleInstanceSet by default, the workload-type annotation otherwise', () => {
    const group = { apiVersion: 'workloads.x-k8s.io/v1alpha2', metadata: { name: 'pd' } };
    expect(workloadOf(group, { name: 'decode' })).toEqual({ name: 'pd-decode', type: { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleInstanceSet' } });
    expect(workloadOf(group, { name: 'decode', annotations: { 'rbg.workloads.x-k8s.io/role-workload-type': 'leaderworkerset.x-k8s.io/v1/LeaderWorkerSet' } }).type).toEqual({
      apiVersion: 'leaderworkerset.x-k8s.io/v1',
      kind: 'LeaderWorkerSet',
    });
  });

  test('v1alpha1: StatefulSet by default, role.workload otherwise', () => {
    const group = { apiVersion: 'workloads.x-k8s.io/v1alpha1', metadata: { name: 'pd' } };
    expect(workloadOf(group, { name: 'prefill' }).type).toEqual({ apiVersion: 'apps/v1', kind: 'StatefulSet' });
    expect(workloadOf(group, { name: 'prefill', workload: { apiVersion: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet' } }).type.kind).toBe('LeaderWorkerSet');
  });

  test('workloadStatus reads generation and counts: absent ones are 0 once the workload has a status (a StatefulSet omits a 0), unknown before', () => {
    expect(workloadStatus({ metadata: { generation: 3 }, status: { observedGeneration: 3, updatedReplicas: 2 } })).toEqual({ generation: 3, observedGeneration: 3, updatedReplicas: 2, readyReplicas: 0 });
    expect(workloadStatus({ metadata: { generation: 1 } })).toEqual({ generation: 1, observedGeneration: undefined, updatedReplicas: undefined, readyReplicas: undefined });
    expect(workloadStatus({ metadata: { generation: 3 }, status: { observedGeneration: 3, updatedReplicas: 2, updateRevision: 'pd-decode-7c6f' } }).updateRevision).toBe('pd-decode-7c6f');
  });
});

describe('controllerCaughtUp', () => {
  const v1alpha1 = (observedGeneration: number) => ({
    apiVersion: 'workloads.x-k8s.io/v1alpha1',
    metadata: { name: 'pd', generation: 5 },
    spec: { roles: ['prefill', 'decode'].map((name) => ({ name, replicas: 4, rolloutStrategy: { rollingUpdate: { partition: 2, paused: true } }, template })) },
    status: { observedGeneration },
  });
  const statefulSet = (partition: number) => ({ generation: 7, observedGeneration: 7, updatedReplicas: 2, readyReplicas: 4, partition });

  test('the group\'s observedGeneration at its generation says so, whatever the workloads', () => {
    const group = { ...v1alpha1(5), apiVersion: 'workloads.x-k8s.io/v1alpha2' };
    expect(controllerCaughtUp(group, observeRoles(group), ['prefill', 'decode'])).toBe(true);
  });

  test('a v1alpha1 group whose status lags (RBG v0.6.0 writes it only when counts change): caught up once every workload carries at least its role\'s partition', () => {
    const group = v1alpha1(3);
    const at = (prefill: number, decode: number) => observeRoles(group, new Map([['prefill', statefulSet(prefill)], ['decode', statefulSet(decode)]]));
    expect(controllerCaughtUp(group, at(2, 4), ['prefill', 'decode'])).toBe(true);
    expect(controllerCaughtUp(group, at(2, 1), ['prefill', 'decode'])).toBe(false);
    expect(controllerCaughtUp(group, observeRoles(group, new Map([['prefill', statefulSet(2)]])), ['prefill', 'decode'])).toBe(false);
  });

  test('a v1alpha2 group whose status lags is not caught up, whatever its workloads say', () => {
    const group = { ...v1alpha1(3), apiVersion: 'workloads.x-k8s.io/v1alpha2' };
    expect(controllerCaughtUp(group, observeRoles(group, new Map([['prefill', statefulSet(2)], ['decode', statefulSet(2)]])), ['prefill', 'decode'])).toBe(false);
  });

  test('a v1alpha1 role (StatefulSet) is held by its partition; a v1alpha2 role (RoleInstanceSet) is not', () => {
    expect(observeRoles(v1alpha1(5)).get('prefill')!.holdsByPartition).toBe(true);
    expect(observeRoles({ ...v1alpha1(5), apiVersion: 'workloads.x-k8s.io/v1alpha2' }).get('prefill')!.holdsByPartition).toBeUndefined();
  });
});
