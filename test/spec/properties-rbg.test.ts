/**
 * Property tests of validateRoleBasedGroup and validateCoordinatedPolicy: random values and random
 * group and policy structures never make them throw, every finding is located and explained, and
 * partitions, maxUnavailable/maxSurge and percent strings agree with independent oracles written
 * here from the rules in reference/rbg.md §1–2.
 */
import fc from 'fast-check';
import { RBG_V1ALPHA1, RBG_V1ALPHA2, validateCoordinatedPolicy, validateRoleBasedGroup } from '../../lib/spec';
import { podTemplate } from './fixtures';
import { RUNS, expectWellFormed, junk, optional } from './support/validator-properties';

const ROLE_NAMES = ['router', 'prefill', 'decode', 'Bad_Role', ''];

/** IntOrPercent-ish values: counts, percents in and out of range, decimals, junk. */
const intOrPercent: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 25 }),
  fc.integer({ min: -10, max: 200 }).map((n) => `${n}%`),
  fc.constantFrom('2.5%', 'abc', '%', '10', '100%', '0%', '99%'),
  junk,
);

const anyRollingUpdate = fc.record(
  { maxSkew: intOrPercent, maxUnavailable: intOrPercent, maxSurge: intOrPercent, partition: intOrPercent, paused: fc.oneof(fc.boolean(), junk) },
  { requiredKeys: [] },
);

const anyRole = fc.oneof(
  fc.record(
    {
      name: fc.oneof(fc.constantFrom(...ROLE_NAMES), junk),
      replicas: fc.oneof(fc.integer({ min: -2, max: 20 }), junk),
      rolloutStrategy: fc.oneof(fc.record({ rollingUpdate: fc.oneof(anyRollingUpdate, junk) }, { requiredKeys: [] }), junk),
      rollingUpdate: fc.oneof(anyRollingUpdate, junk),
      standalonePattern: fc.constant({ template: podTemplate(0) }),
    },
    { requiredKeys: ['name'] },
  ),
  junk,
);

const anyRoleList = fc.array(fc.oneof(fc.constantFrom(...ROLE_NAMES), junk), { maxLength: 4 });

const anyStrategy = fc.record(
  {
    rollingUpdate: fc.oneof(anyRollingUpdate, junk),
    scaling: fc.oneof(fc.record({ maxSkew: intOrPercent, progression: fc.oneof(fc.constantFrom('OrderScheduled', 'OrderReady', 'Nope'), junk) }, { requiredKeys: [] }), junk),
    affinityScheduling: fc.oneof(
      fc.record(
        {
          ratios: fc.oneof(fc.dictionary(fc.constantFrom(...ROLE_NAMES), fc.oneof(fc.integer({ min: -1, max: 5 }), junk), { maxKeys: 4 }), junk),
          batchMode: fc.oneof(fc.constantFrom('Sequential', 'Parallel', 'Both'), junk),
          topologyKey: fc.oneof(fc.constantFrom('kubernetes.io/hostname', 'zone', 'bad key', '/x'), junk),
        },
        { requiredKeys: [] },
      ),
      junk,
    ),
  },
  { requiredKeys: [] },
);

const anyWireRule = fc.oneof(fc.record({ name: fc.oneof(fc.constantFrom('r1', 'r2', ''), junk), roles: fc.oneof(anyRoleList, junk), strategy: fc.oneof(anyStrategy, junk) }, { requiredKeys: [] }), junk);

const anyGroup: fc.Arbitrary<unknown> = fc
  .record({
    apiVersion: fc.oneof(fc.constantFrom(RBG_V1ALPHA1, RBG_V1ALPHA2), junk),
    name: fc.oneof(fc.constantFrom('pd', 'pd-inference', 'PD'), junk),
    roles: fc.oneof(fc.array(anyRole, { maxLength: 5 }), junk),
    coordination: optional(fc.oneof(fc.array(anyWireRule, { maxLength: 3 }), junk)),
  })
  .map((d) => ({
    apiVersion: d.apiVersion,
    kind: 'RoleBasedGroup',
    metadata: { name: d.name },
    spec: { roles: d.roles, ...(d.coordination !== undefined ? { coordination: d.coordination } : {}) },
  }));

const anyPolicy: fc.Arbitrary<unknown> = fc
  .record({ name: fc.oneof(fc.constantFrom('pd', 'pd-inference'), junk), policies: fc.oneof(fc.array(anyWireRule, { maxLength: 3 }), junk) })
  .map((d) => ({ apiVersion: RBG_V1ALPHA2, kind: 'CoordinatedPolicy', metadata: { name: d.name }, spec: { policies: d.policies } }));

/** RBG's partition rule for a count or a whole percent (assumed in range): replicas kept on the old revision. */
function keptOracle(partition: number | string, replicas: number): number {
  if (typeof partition === 'number') return Math.min(partition, replicas);
  const p = Number(partition.slice(0, -1));
  let kept = Math.floor((p * replicas + 99) / 100); // ceil(p% of replicas) in integers
  if (kept === replicas && p !== 100) kept = replicas - 1;
  return Math.min(kept, replicas);
}

/** A count or a percent string, in and out of range. */
const partitionDraw: fc.Arbitrary<number | string> = fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 150 }).map((p) => `${p}%`));

describe('RoleBasedGroup and CoordinatedPolicy properties', () => {
  test('validateRoleBasedGroup never throws on arbitrary values or random group structures, for any release; findings are located and explained', () => {
    fc.assert(
      fc.property(fc.oneof(anyGroup, fc.anything()), fc.constantFrom(undefined, 'v0.6', 'v0.7', 'v0.8'), (g, rbgVersion) => {
        expectWellFormed(validateRoleBasedGroup(g, { rbgVersion }));
      }),
      { numRuns: RUNS },
    );
  });

  test('validateCoordinatedPolicy never throws with random policies and groups; findings are located and explained', () => {
    fc.assert(
      fc.property(fc.oneof(anyPolicy, fc.anything()), fc.oneof(anyGroup, fc.anything(), fc.constant(undefined)), (p, g) => {
        expectWellFormed(validateCoordinatedPolicy(p, g));
      }),
      { numRuns: RUNS },
    );
  });

  test('role partition: an error exactly when out of range or keeping every replica on the old revision', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), partitionDraw, (replicas, partition) => {
        const g = {
          apiVersion: RBG_V1ALPHA2,
          metadata: { name: 'g' },
          spec: { roles: [{ name: 'r', replicas, rolloutStrategy: { rollingUpdate: { partition, maxUnavailable: 1 } } }] },
        };
        const r = validateRoleBasedGroup(g);
        const inRange = typeof partition === 'number' || Number(partition.slice(0, -1)) <= 100;
        const ok = inRange && keptOracle(partition, replicas) < replicas;
        expect(r.errors.map((e) => e.path)).toEqual(ok ? [] : ['spec.roles[0].rolloutStrategy.rollingUpdate.partition']);
      }),
      { numRuns: RUNS },
    );
  });

  test('role maxUnavailable/maxSurge: an error exactly when both resolve to 0 (defaults 1 and 0) on a role with replicas', () => {
    const zeroish = optional(fc.constantFrom<number | string>(0, '0%', 1, '1%', 2, '50%'));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), zeroish, zeroish, (replicas, maxUnavailable, maxSurge) => {
        const ru: Record<string, unknown> = {};
        if (maxUnavailable !== undefined) ru.maxUnavailable = maxUnavailable;
        if (maxSurge !== undefined) ru.maxSurge = maxSurge;
        const g = { apiVersion: RBG_V1ALPHA2, metadata: { name: 'g' }, spec: { roles: [{ name: 'r', replicas, rolloutStrategy: { rollingUpdate: ru } }] } };
        const isZero = (v: unknown) => v === 0 || v === '0%';
        const bad = replicas > 0 && isZero(maxUnavailable ?? 1) && isZero(maxSurge ?? 0);
        expect(validateRoleBasedGroup(g).errors.map((e) => e.path)).toEqual(bad ? ['spec.roles[0].rolloutStrategy.rollingUpdate.maxUnavailable'] : []);
      }),
      { numRuns: RUNS },
    );
  });

  test('coordination partition in a CoordinatedPolicy: one error per role it would freeze, none otherwise', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), partitionDraw, (prefill, decode, partition) => {
        const group = { metadata: { name: 'g' }, spec: { roles: [{ name: 'prefill', replicas: prefill }, { name: 'decode', replicas: decode }] } };
        const policy = {
          metadata: { name: 'g' },
          spec: { policies: [{ name: 'pd', roles: ['prefill', 'decode'], strategy: { rollingUpdate: { maxSkew: '10%', partition } } }] },
        };
        const r = validateCoordinatedPolicy(policy, group);
        const at = 'spec.policies[0].strategy.rollingUpdate.partition';
        const inRange = typeof partition === 'number' || Number(partition.slice(0, -1)) <= 100;
        const expected = !inRange ? 1 : [prefill, decode].filter((n) => keptOracle(partition, n) >= n).length;
        expect(r.errors.map((e) => e.path)).toEqual(Array(expected).fill(at));
      }),
      { numRuns: RUNS },
    );
  });

  test('percent strings: whole percents 0–100 are accepted as coordination maxSkew, anything else is rejected', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: -50, max: 250 }).map((n) => `${n}%`),
          fc.string({ maxLength: 6 }),
          fc.integer(),
          fc.constantFrom(' 5%', '5% ', '5 %', '+5%', '5.0%', '1e1%', '５%', '05%', '007%'),
        ),
        (skew) => {
        const policy = { metadata: { name: 'g' }, spec: { policies: [{ name: 'pd', roles: ['a', 'b'], strategy: { rollingUpdate: { maxSkew: skew } } }] } };
        const r = validateCoordinatedPolicy(policy);
        const m = typeof skew === "string" ? /^(0|[1-9]\d*)%$/.exec(skew) : null;
        const ok = m !== null && Number(m[1]) <= 100;
        expect(r.errors.map((e) => e.path)).toEqual(ok ? [] : ['spec.policies[0].strategy.rollingUpdate.maxSkew']);
      }),
      { numRuns: RUNS },
    );
  });
});
