/**
 * RoleBasedGroup and CoordinatedPolicy validation of garbage input: exactly the expected located
 * errors, never an exception, and the input left unmutated.
 */
import { RBG_V1ALPHA1, validateCoordinatedPolicy, validateRoleBasedGroup } from '../../lib/spec';
import { clone, errorPaths, expectErrorAt } from './fixtures';
import { groupV1Alpha1 } from './support/rbg-fixtures';

describe('findings are located and never thrown', () => {
  // Each garbage input gets exactly these errors (path and the words that say why), every one
  // located under metadata. or spec., and no warning: a validator that throws, drops a finding or
  // reports one at the wrong path fails its case.
  const NO_NAME: [string, string] = ['metadata.name', 'is required; got unset'];
  const NO_ROLES: [string, string] = ['spec.roles', 'must list at least one role; got unset'];
  test.each<[string, unknown, Array<[string, string]>]>([
    ['null', null, [NO_NAME, NO_ROLES]],
    ['a number', 1, [NO_NAME, NO_ROLES]],
    ['a string', 'x', [NO_NAME, NO_ROLES]],
    [
      'roles and coordination of the wrong type',
      { spec: { roles: 'all', coordination: 'x' } },
      [NO_NAME, ['spec.roles', 'got "all"'], ['spec.coordination', 'inline coordination exists only in workloads.x-k8s.io/v1alpha1']],
    ],
    [
      'a v1alpha1 group with an empty role and garbage rules',
      { apiVersion: RBG_V1ALPHA1, spec: { roles: [{}], coordination: [1, {}] } },
      [
        NO_NAME,
        ['spec.roles[0].name', 'is required; got unset'],
        ['spec.coordination[0]', 'must be a rule with name and roles; got 1'],
        ['spec.coordination[1].name', 'is required; got unset'],
        ['spec.coordination[1].roles', 'must list the coordinated roles; got unset'],
        ['spec.coordination[1]', 'sets no strategy'],
      ],
    ],
  ])('a garbage group (%s) gets exactly its located errors', (_, manifest, expected) => {
    const r = validateRoleBasedGroup(manifest);
    expect(errorPaths(r)).toEqual(expected.map(([path]) => path));
    r.errors.forEach((e, i) => expect(e.message).toContain(expected[i][1]));
    expect(r.warnings).toEqual([]);
  });

  test('a garbage policy against a non-group gets exactly its located errors', () => {
    const r = validateCoordinatedPolicy({ spec: { policies: [null, { roles: 'x', strategy: 1 }] } }, 'not a group');
    expect(errorPaths(r)).toEqual(['metadata.name', 'spec.policies[0]', 'spec.policies[1].name', 'spec.policies[1].roles', 'spec.policies[1]']);
    expectErrorAt(r, 'spec.policies[0]', 'must be a rule with name and roles; got null');
    expectErrorAt(r, 'spec.policies[1].roles', 'must list the coordinated roles; got "x"');
    expectErrorAt(r, 'spec.policies[1]', 'sets no strategy');
    expect(r.warnings).toEqual([]);
  });

  test('validation does not mutate its input', () => {
    const g = groupV1Alpha1();
    const before = clone(g);
    validateRoleBasedGroup(g);
    expect(g).toEqual(before);
  });
});
