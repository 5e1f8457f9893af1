/** The rayshift executor's options on a RoleBasedGroup (lib/spec/rbg-executor.ts): the annotation's checks and the roles it rolls. */
import { rollingUpdateRoles, validateCoordinationAnnotation } from '../../lib/spec/rbg-executor';

const metadata = { name: 'pd' };
const rule = (extra: object = {}) => ({ name: 'pd-rollout', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '10%' } }, ...extra });

test('a well-formed annotation has no problem', () => {
  const result = validateCoordinationAnnotation(metadata, { policies: [rule({ progressDeadlineSeconds: 300, rollbackOnDeadline: true, waves: [['prefill'], ['decode']] })] });
  expect(result.errors).toEqual([]);
});

test('every problem at once, each at its path: the deadline, the rollback flag, the waves and the warmup', () => {
  const result = validateCoordinationAnnotation(metadata, {
    policies: [rule({ progressDeadlineSeconds: 0, rollbackOnDeadline: 'yes', waves: [['prefill', 'router'], ['prefill']] })],
    warmup: { roles: ['router'] },
  });
  const paths = result.errors.map((p) => p.path);
  expect(paths).toEqual(expect.arrayContaining(['spec.policies[0].progressDeadlineSeconds', 'spec.policies[0].rollbackOnDeadline', 'spec.policies[0].waves']));
  expect(result.errors.filter((p) => p.path === 'spec.policies[0].waves').map((p) => p.message)).toEqual(['"router" is not a role of the rule', '"prefill" is in more than one wave']);
  expect(paths.some((p) => p.startsWith('warmup'))).toBe(true);
});

test('waves that are not lists of role names are one problem', () => {
  const result = validateCoordinationAnnotation(metadata, { policies: [rule({ waves: ['prefill'] })] });
  expect(result.errors.map((p) => [p.path, p.message])).toEqual([['spec.policies[0].waves', 'must be a list of lists of role names']]);
});

test('rollingUpdateRoles: the roles of the rolling-update rules, once each, in order; other rules do not count', () => {
  const spec = { policies: [rule(), { name: 'scale', roles: ['router'], strategy: { scaling: {} } }, { name: 'more', roles: ['decode', 'kv'], strategy: { rollingUpdate: {} } }] };
  expect(rollingUpdateRoles(spec)).toEqual(['prefill', 'decode', 'kv']);
});
