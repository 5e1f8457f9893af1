import {
  CoordinationRule,
  RBG_V1ALPHA1,
  RBG_V1ALPHA2,
  RoleSpec,
  intOrPercentProblem,
  parsePercent,
  resolvePartition,
  validateCoordinatedPolicy,
  validateRoleBasedGroup,
  validateRoleBasedGroupModel,
} from '../../lib/spec';
import { INT32_MAX } from '../../lib/spec/read';
import { RBG_PLAN_MAX_ROUNDS } from '../../lib/spec/rbg-rules';
import { clone, errorPaths, expectClean, expectErrorAt, expectOnlyError, podTemplate } from './fixtures';

/** A valid v1alpha2 group: router 2, prefill 10, decode 5, no role-level rollout settings. */
function group(): any {
  return {
    apiVersion: RBG_V1ALPHA2,
    kind: 'RoleBasedGroup',
    metadata: { name: 'pd-inference', namespace: 'pd' },
    spec: {
      roles: [
        { name: 'router', replicas: 2, standalonePattern: { template: podTemplate(0) } },
        { name: 'prefill', replicas: 10, standalonePattern: { template: podTemplate(1) } },
        { name: 'decode', replicas: 5, standalonePattern: { template: podTemplate(1) } },
      ],
    },
  };
}

/** A valid CoordinatedPolicy for `group()`: same name and namespace, one rule over prefill and decode. */
function policy(): any {
  return {
    apiVersion: RBG_V1ALPHA2,
    kind: 'CoordinatedPolicy',
    metadata: { name: 'pd-inference', namespace: 'pd' },
    spec: {
      policies: [
        {
          name: 'pd-rollout',
          roles: ['prefill', 'decode'],
          strategy: {
            rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: '20%' },
            scaling: { maxSkew: '10%', progression: 'OrderReady' },
          },
        },
      ],
    },
  };
}

/** The same group in v1alpha1, with the rule inline under `spec.coordination` (wire shape: `strategy`). */
function groupV1Alpha1(): any {
  const g = group();
  g.apiVersion = RBG_V1ALPHA1;
  g.spec.roles = g.spec.roles.map((r: any) => ({ name: r.name, replicas: r.replicas, template: r.standalonePattern.template }));
  g.spec.coordination = [
    { name: 'pd-rollout', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '10%', maxUnavailable: '10%', partition: '20%' } } },
  ];
  return g;
}

const ROLE_RU = (i: number) => `spec.roles[${i}].rolloutStrategy.rollingUpdate`;
const RULE = 'spec.coordination[0]';
const WIRE_RU = `${RULE}.strategy.rollingUpdate`;
const POLICY_RU = 'spec.policies[0].strategy.rollingUpdate';

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

describe('coordination rules', () => {
  test('an unknown role name is rejected, listing the group roles', () => {
    const g = groupV1Alpha1();
    g.spec.coordination[0].roles = ['prefill', 'decoder'];
    expectOnlyError(validateRoleBasedGroup(g), `${RULE}.roles[1]`, '"decoder" is not a role of this group', 'router, prefill, decode');
  });

  test('an unknown role in a CoordinatedPolicy is rejected when the group is known', () => {
    const p = policy();
    p.spec.policies[0].roles = ['prefill', 'decoders'];
    expectOnlyError(validateCoordinatedPolicy(p, group()), 'spec.policies[0].roles[1]', '"decoders" is not a role');
    // without the group there is nothing to check against
    expectClean(validateCoordinatedPolicy(p));
  });

  test('a role in two rules is rejected at its second appearance', () => {
    const g = groupV1Alpha1();
    g.spec.coordination.push({ name: 'router-scale', roles: ['router', 'prefill'], strategy: { scaling: { maxSkew: '50%' } } });
    expectOnlyError(validateRoleBasedGroup(g), 'spec.coordination[1].roles[1]', '"prefill" is already coordinated by rule "pd-rollout"', 'one rule only');
  });

  test('a coordinated role that also sets its own rolling-update fields is rejected', () => {
    const g = groupV1Alpha1();
    g.spec.roles[1].rolloutStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 2, maxUnavailable: 1 } };
    expectOnlyError(validateRoleBasedGroup(g), WIRE_RU, 'role "prefill" also sets its own rolling-update partition, maxUnavailable', 'KEP-30');
    const v2 = group();
    v2.spec.roles[2].rolloutStrategy = { rollingUpdate: { maxSurge: '10%' } };
    expectOnlyError(validateCoordinatedPolicy(policy(), v2), POLICY_RU, 'role "decode" also sets its own rolling-update maxSurge');
  });

  test('a role outside every rule may keep its own settings', () => {
    const g = groupV1Alpha1();
    g.spec.roles[0].rolloutStrategy = { rollingUpdate: { partition: 1 } };
    expectClean(validateRoleBasedGroup(g));
  });

  test.each([
    ['150%', '"150%" is outside "0%"–"100%"'],
    ['abc', 'got "abc"'],
    ['2.5%', 'whole percent'],
  ])('coordination maxSkew, maxUnavailable and partition %p are rejected', (value, words) => {
    const g = groupV1Alpha1();
    g.spec.coordination[0].strategy.rollingUpdate = { maxSkew: value, maxUnavailable: value, partition: value };
    const r = validateRoleBasedGroup(g);
    expect(errorPaths(r).sort()).toEqual([`${WIRE_RU}.maxSkew`, `${WIRE_RU}.maxUnavailable`, `${WIRE_RU}.partition`]);
    for (const e of r.errors) expect(e.message).toContain(words);
  });

  test('the same percent rules apply in a CoordinatedPolicy, and to scaling.maxSkew', () => {
    const p = policy();
    p.spec.policies[0].strategy.rollingUpdate.maxSkew = '101%';
    p.spec.policies[0].strategy.scaling.maxSkew = '-5%';
    const r = validateCoordinatedPolicy(p, group());
    expect(errorPaths(r).sort()).toEqual([`${POLICY_RU}.maxSkew`, 'spec.policies[0].strategy.scaling.maxSkew']);
    expectErrorAt(r, `${POLICY_RU}.maxSkew`, '"101%" is outside');
    expectErrorAt(r, 'spec.policies[0].strategy.scaling.maxSkew', 'got "-5%"');
  });

  test('an integer rolling-update maxSkew is rejected, explaining what upstream does with it', () => {
    const p = policy();
    p.spec.policies[0].strategy.rollingUpdate.maxSkew = 5;
    expectOnlyError(validateCoordinatedPolicy(p, group()), `${POLICY_RU}.maxSkew`, 'percent string', 'got the integer 5', 'silently treats it as 0%');
  });

  test('an integer scaling maxSkew is rejected, explaining that upstream errors on every reconcile', () => {
    const p = policy();
    p.spec.policies[0].strategy.scaling.maxSkew = 5;
    expectOnlyError(validateCoordinatedPolicy(p, group()), 'spec.policies[0].strategy.scaling.maxSkew', 'got the integer 5', 'errors on every reconcile');
  });

  test('v1alpha1 coordination accepts percents only: integer partition and maxUnavailable are rejected', () => {
    const g = groupV1Alpha1();
    g.spec.coordination[0].strategy.rollingUpdate = { maxSkew: '10%', partition: 2, maxUnavailable: 1 };
    const r = validateRoleBasedGroup(g);
    expect(errorPaths(r).sort()).toEqual([`${WIRE_RU}.maxUnavailable`, `${WIRE_RU}.partition`]);
    expectErrorAt(r, `${WIRE_RU}.partition`, 'got the integer 2', `${RBG_V1ALPHA1} accepts percents only`);
  });

  test('maxSkew "0%" moves one replica a round: refused over more rolled replicas than the plan limit, with the value and the range', () => {
    const p = policy();
    p.spec.policies[0].strategy.rollingUpdate = { maxSkew: '0%', maxUnavailable: 1 };
    const big = group();
    big.spec.roles[1].replicas = RBG_PLAN_MAX_ROUNDS;
    big.spec.roles[2].replicas = 2;
    expectOnlyError(validateCoordinatedPolicy(p, big), `${POLICY_RU}.maxSkew`, `roll ${RBG_PLAN_MAX_ROUNDS + 2} replicas`, `at most ${RBG_PLAN_MAX_ROUNDS} rolled replicas`, '"1%" to "100%"');
    // A partition keeps replicas out of the rollout (100,000 rolled: at the limit); any other skew takes a few rounds at any size.
    p.spec.policies[0].strategy.rollingUpdate.partition = 1;
    expectClean(validateCoordinatedPolicy(p, big));
    p.spec.policies[0].strategy.rollingUpdate = { maxSkew: '1%', maxUnavailable: 1 };
    big.spec.roles[2].replicas = INT32_MAX;
    expectClean(validateCoordinatedPolicy(p, big));
  });

  test('v1alpha2 (CoordinatedPolicy) accepts integer partition and maxUnavailable', () => {
    const p = policy();
    p.spec.policies[0].strategy.rollingUpdate = { maxSkew: '10%', partition: 2, maxUnavailable: 1 };
    expectClean(validateCoordinatedPolicy(p, group()));
  });

  test('a coordination partition keeping every replica of a role is rejected, per role', () => {
    const g = groupV1Alpha1();
    g.spec.coordination[0].strategy.rollingUpdate.partition = '100%';
    const r = validateRoleBasedGroup(g);
    expect(errorPaths(r)).toEqual([`${WIRE_RU}.partition`, `${WIRE_RU}.partition`]);
    expect(r.errors[0].message).toContain('"100%" keeps 10 of 10 replicas on the old revision of role "prefill"');
    expect(r.errors[1].message).toContain('"100%" keeps 5 of 5 replicas on the old revision of role "decode"');
  });

  test('a coordination partition of "99%" keeps one replica of each role to update (10 → 9, 5 → 4) and is valid', () => {
    expect(resolvePartition('99%', 10)).toBe(9);
    expect(resolvePartition('99%', 5)).toBe(4);
    const g = groupV1Alpha1();
    g.spec.coordination[0].strategy.rollingUpdate.partition = '99%';
    expectClean(validateRoleBasedGroup(g));
  });

  test('an integer coordination partition equal to the smaller role is rejected for that role only', () => {
    const p = policy();
    p.spec.policies[0].strategy.rollingUpdate.partition = 5;
    expectOnlyError(validateCoordinatedPolicy(p, group()), `${POLICY_RU}.partition`, '5 keeps 5 of 5 replicas on the old revision of role "decode"', 'below replicas (5)');
  });

  test('a bad scaling progression is rejected', () => {
    const p = policy();
    p.spec.policies[0].strategy.scaling.progression = 'OrderCreated';
    expectOnlyError(validateCoordinatedPolicy(p, group()), 'spec.policies[0].strategy.scaling.progression', '"OrderCreated"', 'OrderScheduled, OrderReady');
  });

  test('a rule without a strategy, without roles, or with a duplicate name is rejected', () => {
    const g = groupV1Alpha1();
    g.spec.coordination = [
      { name: 'a', roles: ['prefill', 'decode'] },
      { name: 'a', roles: [], strategy: { scaling: { maxSkew: '10%' } } },
    ];
    const r = validateRoleBasedGroup(g);
    expect(errorPaths(r).sort()).toEqual(['spec.coordination[0]', 'spec.coordination[1].name', 'spec.coordination[1].roles'].sort());
    expectErrorAt(r, 'spec.coordination[0]', 'sets no strategy');
    expectErrorAt(r, 'spec.coordination[1].name', '"a" is already used by spec.coordination[0]');
  });

  test('a rule over one role is a warning (upstream ignores it)', () => {
    const g = groupV1Alpha1();
    g.spec.coordination[0].roles = ['prefill'];
    const r = validateRoleBasedGroup(g);
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => w.path)).toEqual([`${RULE}.roles`]);
    expect(r.warnings[0].message).toContain('coordinates nothing');
  });

  test('inline coordination in v1alpha2 is rejected, pointing to CoordinatedPolicy', () => {
    const g = group();
    g.spec.coordination = groupV1Alpha1().spec.coordination;
    expectOnlyError(validateRoleBasedGroup(g), 'spec.coordination', `exists only in ${RBG_V1ALPHA1}`, 'CoordinatedPolicy');
  });

  test('a CoordinatedPolicy named differently from its group is rejected', () => {
    const p = policy();
    p.metadata.name = 'pd-policy';
    expectOnlyError(validateCoordinatedPolicy(p, group()), 'metadata.name', '"pd-policy" must equal the RoleBasedGroup\'s name "pd-inference"');
  });

  test('a CoordinatedPolicy without rules is rejected', () => {
    const p = policy();
    p.spec.policies = [];
    expectOnlyError(validateCoordinatedPolicy(p, group()), 'spec.policies', 'at least one rule');
  });
});

describe('AffinityScheduling (model form)', () => {
  const roles: RoleSpec[] = [
    { name: 'router', replicas: 1, template: podTemplate(0) },
    { name: 'prefill', replicas: 4, template: podTemplate(1) },
    { name: 'decode', replicas: 2, template: podTemplate(1) },
  ];
  const AFF = 'spec.coordination[0].affinityScheduling';
  function rule(affinity: Record<string, unknown>): CoordinationRule[] {
    return [
      {
        name: 'colocate',
        roles: ['prefill', 'decode'],
        affinityScheduling: { topologyKey: 'kubernetes.io/hostname', ratios: { prefill: 2, decode: 1 }, batchMode: 'Sequential', ...affinity } as any,
      },
    ];
  }

  test('2:1 prefill:decode over 4/2 replicas is valid', () => {
    expectClean(validateRoleBasedGroupModel(roles, rule({}), false));
    expectClean(validateRoleBasedGroupModel(roles, rule({ batchMode: 'Parallel', topologyKey: undefined }), true));
  });

  test.each([0, -1, 1.5, '2', null])('ratio %p is not a positive integer', (ratio) => {
    const r = validateRoleBasedGroupModel(roles, rule({ ratios: { prefill: ratio, decode: 1 } }), false);
    expectOnlyError(r, `${AFF}.ratios.prefill`, 'positive integer (pods of "prefill" per batch)', `got ${JSON.stringify(ratio)}`);
  });

  test('a missing ratio for a rule role is rejected', () => {
    expectOnlyError(validateRoleBasedGroupModel(roles, rule({ ratios: { prefill: 2 } }), false), `${AFF}.ratios.decode`, 'positive integer', 'got unset');
  });

  test('a ratio that does not divide the replicas is rejected', () => {
    expectOnlyError(validateRoleBasedGroupModel(roles, rule({ ratios: { prefill: 3, decode: 1 } }), false), `${AFF}.ratios.prefill`, '3 does not divide role "prefill"\'s 4 replicas');
  });

  test('a ratio key that is not a role of the rule is rejected', () => {
    const r = validateRoleBasedGroupModel(roles, rule({ ratios: { prefill: 2, decode: 1, router: 1 } }), false);
    expectOnlyError(r, `${AFF}.ratios.router`, '"router" is not one of the rule\'s roles (prefill, decode)');
  });

  test('unequal batch counts are a warning naming each count', () => {
    const r = validateRoleBasedGroupModel(roles, rule({ ratios: { prefill: 2, decode: 2 } }), false);
    // prefill makes 2 batches, decode 1
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => w.path)).toEqual([`${AFF}.ratios`]);
    expect(r.warnings[0].message).toContain('prefill: 2, decode: 1');
  });

  test('a bad batchMode is rejected with the allowed modes', () => {
    expectOnlyError(validateRoleBasedGroupModel(roles, rule({ batchMode: 'Random' }), false), `${AFF}.batchMode`, '"Random" is not a batch mode', 'Sequential, Parallel');
  });

  test.each(['not a key!', 'kubernetes.io/', 'Kubernetes_IO/hostname', `${'a'.repeat(64)}`, '/zone', 42])('topologyKey %p is rejected', (key) => {
    expectOnlyError(validateRoleBasedGroupModel(roles, rule({ topologyKey: key }), false), `${AFF}.topologyKey`, 'label key', `got ${JSON.stringify(key)}`);
  });

  test.each(['topology.kubernetes.io/zone', 'hostname', 'example.com/rack_1.a'])('topologyKey %p is a valid label key', (key) => {
    expectClean(validateRoleBasedGroupModel(roles, rule({ topologyKey: key }), false));
  });

  test('affinityScheduling or ratios that are not mappings are rejected', () => {
    const bad: CoordinationRule[] = [{ name: 'c', roles: ['prefill', 'decode'], affinityScheduling: 'yes' as any }];
    expectOnlyError(validateRoleBasedGroupModel(roles, bad, false), AFF, 'must be a mapping');
    expectOnlyError(validateRoleBasedGroupModel(roles, rule({ ratios: [2, 1] }), false), `${AFF}.ratios`, 'must map every role');
  });

  test('a rule may combine AffinityScheduling with a coordinated rolling update', () => {
    const rules: CoordinationRule[] = [{ ...rule({})[0], rollingUpdate: { maxSkew: '50%', partition: '50%' } }];
    expectClean(validateRoleBasedGroupModel(roles, rules, false));
  });

  test('model rules use unprefixed paths (spec.coordination[i].rollingUpdate)', () => {
    const rules: CoordinationRule[] = [{ name: 'r', roles: ['prefill', 'decode'], rollingUpdate: { partition: 1 as any } }];
    expectOnlyError(validateRoleBasedGroupModel(roles, rules, true), 'spec.coordination[0].rollingUpdate.partition', 'accepts percents only');
    expectClean(validateRoleBasedGroupModel(roles, rules, false));
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
