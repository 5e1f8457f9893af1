/**
 * validateRoleBasedGroup on valid baselines (v1alpha2 with its CoordinatedPolicy, v1alpha1 with
 * inline coordination) and on roles: names, replicas, role-level rolling-update values and
 * partitions; and the percent helpers (parsePercent, intOrPercentProblem, resolvePartition).
 */
import {
  RoleSpec,
  intOrPercentProblem,
  parsePercent,
  resolvePartition,
  validateCoordinatedPolicy,
  validateRoleBasedGroup,
  validateRoleBasedGroupModel,
} from '../../lib/spec';
import { errorPaths, expectClean, expectErrorAt, expectOnlyError, podTemplate } from './fixtures';
import { group, groupV1Alpha1, policy } from './support/rbg-fixtures';

const ROLE_RU = (i: number) => `spec.roles[${i}].rolloutStrategy.rollingUpdate`;

function withRoleRollingUpdate(ru: Record<string, unknown>, roleIndex = 1): any {
  const g = group();
  g.spec.roles[roleIndex].rolloutStrategy = { type: 'RollingUpdate', rollingUpdate: ru };
  return g;
}

describe('baselines', () => {
  test('a v1alpha2 group without coordination has no findings', () => {
    expectClean(validateRoleBasedGroup(group()));
  });

  test('its CoordinatedPolicy, checked against the group, has no findings', () => {
    expectClean(validateCoordinatedPolicy(policy(), group()));
    expectClean(validateCoordinatedPolicy(policy()));
  });

  test('a v1alpha1 group with inline percent coordination has no findings', () => {
    expectClean(validateRoleBasedGroup(groupV1Alpha1()));
  });

  test('role-level rolling-update settings within range are valid', () => {
    expectClean(validateRoleBasedGroup(withRoleRollingUpdate({ maxUnavailable: '25%', maxSurge: 1, partition: 3, paused: false })));
  });
});

describe('roles', () => {
  test('a group name that is not a DNS label is rejected', () => {
    const g = group();
    g.metadata.name = 'PD_Inference';
    expectOnlyError(validateRoleBasedGroup(g), 'metadata.name', '"PD_Inference"', 'DNS-1123 label');
  });

  test('no roles, duplicate names, bad names and negative replicas are rejected', () => {
    const g = group();
    g.spec.roles = [];
    expectOnlyError(validateRoleBasedGroup(g), 'spec.roles', 'at least one role');
    g.spec.roles = [{ name: 'a', replicas: 1 }, { name: 'a', replicas: 1 }, { name: 'B!', replicas: -1 }, 'c'];
    const r = validateRoleBasedGroup(g);
    expect(errorPaths(r).sort()).toEqual(['spec.roles[1].name', 'spec.roles[2].name', 'spec.roles[2].replicas', 'spec.roles[3]'].sort());
    expectErrorAt(r, 'spec.roles[1].name', '"a" is already used');
    expectErrorAt(r, 'spec.roles[2].replicas', 'integer ≥ 0', 'got -1');
  });

  test('replicas beyond int32 are rejected (Kubernetes replicas are int32; found by test/fuzz: 2^40 passed and its plan never finished)', () => {
    const g = group();
    g.spec.roles = [{ name: 'a', replicas: 2 ** 31 }, { name: 'b', replicas: 2 ** 31 - 1 }];
    const r = validateRoleBasedGroup(g);
    expect(errorPaths(r)).toEqual(['spec.roles[0].replicas']);
    expectErrorAt(r, 'spec.roles[0].replicas', '≤ 2147483647 (int32)', 'got 2147483648');
  });

  test.each([
    ['150%', '"150%" is outside "0%"–"100%"'],
    ['abc', 'whole percent from "0%" to "100%"; got "abc"'],
    ['2.5%', 'whole percent from "0%" to "100%"; got "2.5%"'],
    [-1, 'integer ≥ 0 or a percent'],
    [1.5, 'got 1.5'],
  ])('role maxUnavailable %p is rejected', (value, words) => {
    expectOnlyError(validateRoleBasedGroup(withRoleRollingUpdate({ maxUnavailable: value })), `${ROLE_RU(1)}.maxUnavailable`, words);
  });

  test.each(['150%', 'abc', '2.5%'])('role maxSurge and partition %p are rejected', (value) => {
    const r = validateRoleBasedGroup(withRoleRollingUpdate({ maxSurge: value, partition: value }));
    expect(errorPaths(r).sort()).toEqual([`${ROLE_RU(1)}.maxSurge`, `${ROLE_RU(1)}.partition`]);
    for (const e of r.errors) expect(e.message).toContain(JSON.stringify(value));
  });

  test('a model role (rollingUpdate at the top) is reported at spec.roles[i].rollingUpdate', () => {
    const roles: RoleSpec[] = [{ name: 'a', replicas: 2, template: podTemplate(0), rollingUpdate: { maxSurge: '200%' } }];
    expectOnlyError(validateRoleBasedGroupModel(roles, [], false), 'spec.roles[0].rollingUpdate.maxSurge', '"200%" is outside');
  });

  test('partition equal to replicas is rejected; replicas − 1 is valid', () => {
    expectOnlyError(
      validateRoleBasedGroup(withRoleRollingUpdate({ partition: 10 })),
      `${ROLE_RU(1)}.partition`,
      '10 keeps 10 of 10 replicas on the old revision',
      'below replicas (10)',
    );
    expectClean(validateRoleBasedGroup(withRoleRollingUpdate({ partition: 9 })));
  });

  test('a partition above replicas is rejected', () => {
    expectOnlyError(validateRoleBasedGroup(withRoleRollingUpdate({ partition: 12 })), `${ROLE_RU(1)}.partition`, '12 exceeds the 10 replicas', 'below replicas (10)');
  });

  test('percent partitions round up: "99%" of 10 keeps 9 (valid), "100%" of 10 keeps 10 (rejected)', () => {
    expectClean(validateRoleBasedGroup(withRoleRollingUpdate({ partition: '99%' })));
    expectOnlyError(validateRoleBasedGroup(withRoleRollingUpdate({ partition: '100%' })), `${ROLE_RU(1)}.partition`, '"100%" keeps 10 of 10 replicas');
  });

  test('maxUnavailable and maxSurge both 0 are rejected, in any form', () => {
    for (const ru of [{ maxUnavailable: 0, maxSurge: 0 }, { maxUnavailable: '0%', maxSurge: 0 }, { maxUnavailable: 0, maxSurge: '0%' }, { maxUnavailable: 0 }]) {
      expectOnlyError(validateRoleBasedGroup(withRoleRollingUpdate(ru)), `${ROLE_RU(1)}.maxUnavailable`, 'and maxSurge are both 0', 'above 0');
    }
  });

  test('maxUnavailable 0 is valid with a surge; both 0 are fine on a role with 0 replicas', () => {
    expectClean(validateRoleBasedGroup(withRoleRollingUpdate({ maxUnavailable: 0, maxSurge: 1 })));
    const g = withRoleRollingUpdate({ maxUnavailable: 0, maxSurge: 0, partition: 5 });
    g.spec.roles[1].replicas = 0;
    expectClean(validateRoleBasedGroup(g));
  });
});

describe('percent helpers', () => {
  test('parsePercent reads percent strings only', () => {
    expect(parsePercent('10%')).toBe(10);
    expect(parsePercent('2.5%')).toBe(2.5);
    expect(parsePercent('10')).toBeUndefined();
    expect(parsePercent(10)).toBeUndefined();
    expect(parsePercent('%')).toBeUndefined();
    expect(parsePercent('-5%')).toBeUndefined();
  });

  test('intOrPercentProblem names the value and the range', () => {
    expect(intOrPercentProblem('100%', false)).toBeUndefined();
    expect(intOrPercentProblem('0%', false)).toBeUndefined();
    expect(intOrPercentProblem(3, true)).toBeUndefined();
    expect(intOrPercentProblem(3, false)).toContain('got the integer 3');
    expect(intOrPercentProblem('150%', true)).toContain('"150%" is outside "0%"–"100%"');
    expect(intOrPercentProblem(undefined, true)).toContain('got unset');
    expect(intOrPercentProblem({}, false)).toContain('percent string');
  });

  test('resolvePartition rounds percents up, keeps one replica to update unless 100%, and clamps', () => {
    expect(resolvePartition('20%', 40)).toBe(8);
    expect(resolvePartition('25%', 10)).toBe(3);
    expect(resolvePartition('99%', 10)).toBe(9);
    expect(resolvePartition('100%', 10)).toBe(10);
    expect(resolvePartition('1%', 1)).toBe(0);
    expect(resolvePartition('0%', 10)).toBe(0);
    expect(resolvePartition(3, 10)).toBe(3);
    expect(resolvePartition(20, 10)).toBe(10);
  });
});
