/**
 * Coordination of RoleBasedGroup roles: v1alpha1 inline rules and v1alpha2 CoordinatedPolicy
 * (roles, percents, maxSkew, partitions per role, scaling, names) and AffinityScheduling in the
 * model form (ratios, batch mode, topology key).
 */
import {
  CoordinationRule,
  RBG_V1ALPHA1,
  RoleSpec,
  resolvePartition,
  validateCoordinatedPolicy,
  validateRoleBasedGroup,
  validateRoleBasedGroupModel,
} from '../../lib/spec';
import { INT32_MAX } from '../../lib/spec/read';
import { RBG_PLAN_MAX_ROUNDS } from '../../lib/spec/rbg-rules';
import { errorPaths, expectClean, expectErrorAt, expectOnlyError, podTemplate } from './fixtures';
import { group, groupV1Alpha1, policy } from './support/rbg-fixtures';

const RULE = 'spec.coordination[0]';
const WIRE_RU = `${RULE}.strategy.rollingUpdate`;
const POLICY_RU = 'spec.policies[0].strategy.rollingUpdate';

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

  test('a ratio that makes more batches than MAX_AFFINITY_BATCHES is rejected; exactly that many is not', () => {
    const many = (replicas: number) => roles.map((r) => (r.name === 'prefill' || r.name === 'decode' ? { ...r, replicas } : r));
    expectClean(validateRoleBasedGroupModel(many(500), rule({ ratios: { prefill: 1, decode: 1 } }), false));
    const r = validateRoleBasedGroupModel(many(501), rule({ ratios: { prefill: 1, decode: 1 } }), false);
    expect(r.errors.map((e) => e.path)).toEqual([`${AFF}.ratios.prefill`, `${AFF}.ratios.decode`]);
    expect(r.errors[0].message).toContain('1 makes 501 batches of role "prefill"\'s 501 replicas; at most 500');
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
