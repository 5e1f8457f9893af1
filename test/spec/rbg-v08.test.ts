/**
 * RBG v0.8 (v0.8.0-alpha.5) in the model: its validating webhook's rules (ported from upstream's
 * `rolebasedgroup_validation.go` and its tests), restartPolicyConfig, workload kinds and what v0.8
 * deprecates. Every case breaks one field of a group that is valid for v0.8.
 */
import {
  RBG_V1ALPHA1,
  RBG_V1ALPHA2,
  RoleSpec,
  roleWorkloadType,
  validateRoleBasedGroup,
  validateRoleBasedGroupModel,
  validateRoleBasedGroupUpdate,
} from '../../lib/spec';
import { at, errorPaths, expectClean, expectOnlyError, podTemplate } from './fixtures';

/** A wire v1alpha2 group with one role `worker` of `replicas` and the given rolling update. */
function wire(replicas: number, rollingUpdate?: Record<string, unknown>): any {
  return {
    apiVersion: RBG_V1ALPHA2,
    kind: 'RoleBasedGroup',
    metadata: { name: 'pd', namespace: 'pd' },
    spec: {
      roles: [{ name: 'worker', replicas, standalonePattern: { template: podTemplate(0) }, ...(rollingUpdate ? { rolloutStrategy: { type: 'RollingUpdate', rollingUpdate } } : {}) }],
    },
  };
}

const V08 = { rbgVersion: 'v0.8' } as const;
const RU = 'spec.roles[0].rolloutStrategy.rollingUpdate';

describe("v0.8's webhook rules on a role's rolling update", () => {
  test.each([
    ['maxUnavailable 0, maxSurge unset (default 0)', 5, { maxUnavailable: 0 }],
    ['both 0', 5, { maxUnavailable: 0, maxSurge: 0 }],
    ['maxUnavailable "10%" of 5 rounds down to 0', 5, { maxUnavailable: '10%' }],
    ['maxUnavailable "0%" and maxSurge "0%"', 3, { maxUnavailable: '0%', maxSurge: '0%' }],
  ])('%s is rejected', (_label, replicas, ru) => {
    const e = expectOnlyError(validateRoleBasedGroup(wire(replicas, ru), V08), `${RU}.maxUnavailable`, "RBG v0.8's webhook rejects both 0", 'allowed: maxUnavailable ≥ 1');
    expect(e.message).toContain(`≥ "${Math.ceil(100 / replicas)}%"`);
  });

  test('the percent rounding is the webhook\'s own: "10%" of 5 (0) is rejected for v0.8 and passes the rules every release shares', () => {
    expect(errorPaths(validateRoleBasedGroup(wire(5, { maxUnavailable: '10%' }), V08))).toEqual([`${RU}.maxUnavailable`]);
    expectClean(validateRoleBasedGroup(wire(5, { maxUnavailable: '10%' })));
  });

  test.each([
    ['maxUnavailable 1 (maxSurge 0)', { maxUnavailable: 1 }],
    ['maxUnavailable 0 with maxSurge 1', { maxUnavailable: 0, maxSurge: 1 }],
    ['maxSurge "1%" of 5 rounds up to 1', { maxUnavailable: 0, maxSurge: '1%' }],
    ['maxUnavailable "20%" of 5 is 1', { maxUnavailable: '20%' }],
    ['partition 4 of 5', { partition: 4 }],
    ['partition "80%" of 5 is 4', { partition: '80%' }],
  ])('%s is admitted', (_label, ru) => {
    expectClean(validateRoleBasedGroup(wire(5, ru), V08));
  });

  test.each([
    [5, 5, '5'],
    [5, 9, '9'],
    [5, '90%', '"90%" resolves to 5 of 5 replicas (rounded up)'],
    [1, 1, '1'],
  ])('partition of %p replicas = %p is rejected, naming the value and the allowed range', (replicas, partition, said) => {
    const e = expectOnlyError(validateRoleBasedGroup(wire(replicas, { partition }), V08), `${RU}.partition`, said, 'is not below replicas');
    expect(e.message).toContain(replicas === 1 ? 'allowed: 0 or "0%"' : `allowed: 0–${replicas - 1} or "0%"–"80%"`);
  });

  test('"90%" of 5 is admitted by the rules every release shares (RBG\'s workloads keep one replica to update), not by v0.8\'s webhook', () => {
    expectClean(validateRoleBasedGroup(wire(5, { partition: '90%' })));
    expect(errorPaths(validateRoleBasedGroup(wire(5, { partition: '90%' }), V08))).toEqual([`${RU}.partition`]);
  });

  test('a role with 0 replicas, or without a rolling update, is not checked (upstream: AllowsReplicasZero)', () => {
    expectClean(validateRoleBasedGroup(wire(0, { partition: 0, maxUnavailable: 0 }), V08));
    expectClean(validateRoleBasedGroup(wire(3), V08));
  });
});

describe('the ScalingAdapter rule on updates (needs the live adapter)', () => {
  const withAdapter = (replicas: number) => {
    const g = wire(replicas);
    g.spec.roles[0].scalingAdapter = { enable: true };
    return g;
  };

  test('changing replicas of an adapter-owned role to another value than the adapter\'s is rejected, naming both', () => {
    const e = expectOnlyError(validateRoleBasedGroupUpdate(withAdapter(3), withAdapter(5), () => 4), 'spec.roles[0].replicas', '5 differs from 3', 'ScalingAdapter "pd-worker" has spec.replicas 4', 'allowed: 4');
    expect(e.severity).toBe('error');
  });

  test.each([
    ['replicas unchanged', 3, 3, 4],
    ['changed to the adapter\'s value', 3, 4, 4],
    ['no adapter found', 3, 5, undefined],
  ])('%s is admitted', (_label, before, after, adapter) => {
    expectClean(validateRoleBasedGroupUpdate(withAdapter(before), withAdapter(after), () => adapter));
  });

  test('a role without scalingAdapter.enable may change replicas freely', () => {
    expectClean(validateRoleBasedGroupUpdate(wire(3), wire(5), () => 4));
  });
});

describe('releases, workloads and deprecations', () => {
  const roles = (extra: Partial<RoleSpec> = {}): RoleSpec[] => [
    { name: 'prefill', replicas: 4, template: podTemplate(1), leaderWorkerSize: 2, ...extra },
    { name: 'decode', replicas: 2, template: podTemplate(1) },
  ];
  const model = (r: RoleSpec[], v1alpha1 = false, rbgVersion: 'v0.6' | 'v0.7' | 'v0.8' = 'v0.8') => validateRoleBasedGroupModel(r, [], v1alpha1, 'rbg', rbgVersion);

  test('a restartPolicyConfig on a v0.8 leader/worker role in v1alpha2 is valid', () => {
    expectClean(model(roles({ restartPolicyConfig: { type: 'None', baseDelaySeconds: 5, maxDelaySeconds: 5 } })));
  });

  test.each([
    ['before v0.8', { restartPolicyConfig: {} }, false, 'v0.7', 'spec.roles[0].restartPolicyConfig', 'exists from RBG v0.8 on'],
    ['in v1alpha1', { restartPolicyConfig: {} }, true, 'v0.8', 'spec.roles[0].restartPolicyConfig', `exists only in ${RBG_V1ALPHA2}`],
    ['on a standalone role', { leaderWorkerSize: 1, restartPolicyConfig: {} }, false, 'v0.8', 'spec.roles[0].restartPolicyConfig', 'only on leader/worker roles'],
    ['with an unknown type', { restartPolicyConfig: { type: 'Always' } }, false, 'v0.8', 'spec.roles[0].restartPolicyConfig.type', 'allowed: None, RecreateRoleInstanceOnPodRestart'],
    ['with a negative delay', { restartPolicyConfig: { baseDelaySeconds: -1 } }, false, 'v0.8', 'spec.roles[0].restartPolicyConfig.baseDelaySeconds', 'from 0 to 2147483647'],
    ['with max below base', { restartPolicyConfig: { baseDelaySeconds: 60, maxDelaySeconds: 30 } }, false, 'v0.8', 'spec.roles[0].restartPolicyConfig.maxDelaySeconds', 'maxDelaySeconds 30 is below baseDelaySeconds 60; allowed: 60 or more'],
    ['with max below the default base (the API server defaults before its CEL rule)', { restartPolicyConfig: { maxDelaySeconds: 10 } }, false, 'v0.8', 'spec.roles[0].restartPolicyConfig.maxDelaySeconds', 'below baseDelaySeconds 30 (default)'],
  ] as const)('a restartPolicyConfig %s is rejected', (_label, extra, v1alpha1, release, path, words) => {
    expectOnlyError(model(roles(extra as Partial<RoleSpec>), v1alpha1, release), path, words);
  });

  test('targeting v0.8: v1alpha1 and deprecated workload kinds are warnings, RoleInstanceSet is clean', () => {
    const v1 = model(roles(), true);
    expect(v1.errors).toEqual([]);
    expect(at(v1.warnings, 'apiVersion')[0].message).toContain(`${RBG_V1ALPHA1} is deprecated in RBG v0.8`);
    for (const kind of ['StatefulSet', 'Deployment', 'LeaderWorkerSet'] as const) {
      const r = model([{ name: 'router', replicas: 1, template: podTemplate(0), workload: kind }]);
      expect(r.errors).toEqual([]);
      expect(at(r.warnings, 'spec.roles[0].workload')[0].message).toContain(`${kind} is deprecated in RBG v0.8, superseded by RoleInstanceSet`);
      expectClean(model([{ name: 'router', replicas: 1, template: podTemplate(0), workload: kind }], false, 'v0.7'));
    }
    expectClean(model([{ name: 'router', replicas: 1, template: podTemplate(0), workload: 'RoleInstanceSet' }]));
  });

  test('an unknown workload kind, or a StatefulSet of leader/worker instances, is rejected', () => {
    expectOnlyError(model([{ name: 'r', template: podTemplate(0), workload: 'Job' as never }]), 'spec.roles[0].workload', 'allowed: RoleInstanceSet, StatefulSet, Deployment, LeaderWorkerSet');
    expectOnlyError(model(roles({ workload: 'StatefulSet' }), false, 'v0.7'), 'spec.roles[0].workload', 'no leader/worker instances');
  });

  test('v1alpha2 does not exist in v0.6; an unknown release is rejected', () => {
    expectOnlyError(model(roles(), false, 'v0.6'), 'apiVersion', 'does not exist in RBG v0.6');
    expectOnlyError(model(roles(), false, 'v0.9' as never), 'rbgVersion', 'allowed: v0.6, v0.7, v0.8');
  });

  test('rollbackOnDeadline is executed on every release (on v0.8 no rollback write reaches partition = replicas)', () => {
    const rule = { name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '10%' }, rollbackOnDeadline: true };
    for (const release of ['v0.7', 'v0.8'] as const) expectClean(validateRoleBasedGroupModel(roles(), [rule], false, 'operator', release));
  });

  test('a wire group for v0.8 warns about a deprecated workload annotation and checks restartPolicyConfig', () => {
    const g = wire(2);
    g.spec.roles[0].annotations = { 'rbg.workloads.x-k8s.io/role-workload-type': 'apps/v1/StatefulSet' };
    expect(at(validateRoleBasedGroup(g, V08).warnings, 'spec.roles[0].annotations["rbg.workloads.x-k8s.io/role-workload-type"]')).toHaveLength(1);
    const lw = wire(2);
    lw.spec.roles[0] = { name: 'worker', replicas: 2, leaderWorkerPattern: { size: 2, template: podTemplate(0), restartPolicyConfig: { baseDelaySeconds: 700 } } };
    expectOnlyError(validateRoleBasedGroup(lw, V08), 'spec.roles[0].leaderWorkerPattern.restartPolicyConfig.maxDelaySeconds', 'maxDelaySeconds 600 (default) is below baseDelaySeconds 700');
  });

  test("roleWorkloadType reads a role's workload as upstream does (annotation in v1alpha2, workload in v1alpha1)", () => {
    expect(roleWorkloadType(RBG_V1ALPHA2, {})).toEqual({ apiVersion: RBG_V1ALPHA2, kind: 'RoleInstanceSet' });
    expect(roleWorkloadType(RBG_V1ALPHA2, { annotations: { 'rbg.workloads.x-k8s.io/role-workload-type': 'malformed-value' } }).kind).toBe('RoleInstanceSet');
    expect(roleWorkloadType(RBG_V1ALPHA2, { annotations: { 'rbg.workloads.x-k8s.io/role-workload-type': 'leaderworkerset.x-k8s.io/v1/LeaderWorkerSet' } })).toEqual({ apiVersion: 'leaderworkerset.x-k8s.io/v1', kind: 'LeaderWorkerSet' });
    expect(roleWorkloadType(RBG_V1ALPHA1, {})).toEqual({ apiVersion: 'apps/v1', kind: 'StatefulSet' });
  });
});
