/**
 * The structural check on a small hand-written schema: what the API server prunes, refuses and
 * defaults, one rule at a time. The pinned CRDs themselves are covered by
 * test/upstream-crd/structural-schema-properties.test.ts.
 */
import { SchemaTable, checkStructure } from '../../lib/spec/structural-schema';
import { closestFields } from '../../lib/spec/field-suggestions';
import { checkPinnedSchema, pinnedSchemaKey } from '../../lib/spec/pinned-schemas';

// Node indexes: children first, as the generator writes them.
const table: SchemaTable = {
  nodes: [
    /* 0 */ { t: 'integer', min: 1, max: 100 },
    /* 1 */ { t: 'integer', d: 100, min: 1, max: 100 },
    /* 2 */ { t: 'string', e: ['NewCluster', 'None'] },
    /* 3 */ { t: 'object', p: { maxSurgePercent: 1, stepSizePercent: 0 }, r: ['stepSizePercent'] },
    /* 4 */ { t: 'object', p: { type: 2, options: 3 } },
    /* 5 */ { u: 1 },
    /* 6 */ { t: 'object', p: { name: 7, extra: 5 }, u: 1 },
    /* 7 */ { t: 'string', pat: '^[a-z]+$', maxL: 8 },
    /* 8 */ { t: 'array', i: 6, u: 1 },
    /* 9 */ { t: 'object', a: 10 },
    /* 10 */ { t: 'string' },
    /* 11 */ { s: 1 },
    /* 12 */ { t: 'string', n: 1 },
    /* 13 */ { t: 'object', p: { strategy: 4, roles: 8, params: 9, port: 11, note: 12, template: 5 } },
    /* 14 */ { t: 'object', p: { spec: 13, apiVersion: 10, kind: 10, metadata: 15 }, r: ['spec'] },
    /* 15 */ { t: 'object' },
  ],
  roots: { 'test@v1 example.dev/v1/Thing': 14 },
};

const check = (spec: unknown) => checkStructure({ apiVersion: 'example.dev/v1', kind: 'Thing', metadata: { name: 'a' }, spec } as never, table, 14, "Test v1's Thing CRD");
const at = (spec: unknown) => Object.fromEntries(check(spec).problems.map((p) => [p.path, `${p.severity}: ${p.message}`]));

describe('unknown fields', () => {
  test('a misspelt field is an error naming its path, the owner, the schema and the closest field; it is pruned', () => {
    const result = check({ strategy: { type: 'None', options: { maxSurgePercnt: 20, stepSizePercent: 5 } } });
    expect(result.problems).toEqual([
      {
        path: 'spec.strategy.options.maxSurgePercnt',
        message: `"maxSurgePercnt" is not a field of options in Test v1's Thing CRD, so the API server would drop it; did you mean "maxSurgePercent"?`,
        severity: 'error',
      },
    ]);
    // Pruned, so the default applies: the cost the typo hides.
    expect(result.stored.spec).toEqual({ strategy: { type: 'None', options: { stepSizePercent: 5, maxSurgePercent: 100 } } });
    // The rules' view keeps it, defaults applied all the same.
    expect(result.defaulted.spec).toEqual({ strategy: { type: 'None', options: { maxSurgePercnt: 20, stepSizePercent: 5, maxSurgePercent: 100 } } });
  });

  test('a name far from every field lists the known ones', () => {
    expect(at({ strategy: { zzz: 1 } })['spec.strategy.zzz']).toBe(`error: "zzz" is not a field of strategy in Test v1's Thing CRD, so the API server would drop it; known: options, type`);
  });

  test('under x-kubernetes-preserve-unknown-fields with declared fields, an unknown field is kept and warned about', () => {
    const result = check({ roles: [{ name: 'abc', nmae: 'x' }] });
    expect(at({ roles: [{ name: 'abc', nmae: 'x' }] })['spec.roles[0].nmae']).toMatch(/^warning: "nmae" is not a field of an item of roles .*keeps it here, but the controller does not read it; did you mean "name"\?$/);
    expect(result.stored.spec).toEqual({ roles: [{ name: 'abc', nmae: 'x' }] });
  });

  test('a free-form subtree is not checked, and is reported as unchecked', () => {
    const result = check({ template: { anything: { goes: [1] } } });
    expect(result.problems).toEqual([]);
    expect(result.unchecked).toEqual(['spec.template']);
  });

  test('metadata is checked against ObjectMeta; label values must be strings', () => {
    const result = checkStructure({ apiVersion: 'example.dev/v1', kind: 'Thing', metadata: { name: 'a', lables: {}, labels: { tier: 1 } }, spec: {} }, table, 14, 'T');
    expect(result.problems.map((p) => p.path)).toEqual(['metadata.lables', 'metadata.labels.tier']);
    expect(result.problems[0].message).toContain('did you mean "labels"?');
  });

  test('map values follow additionalProperties', () => {
    expect(at({ params: { a: 'x', b: 2 } })).toEqual({ 'spec.params.b': 'error: must be a string (quote it in YAML); got 2' });
  });
});

describe('values', () => {
  test('types, enums, bounds, lengths and patterns', () => {
    expect(at({ strategy: { type: 'Blue', options: { stepSizePercent: 0, maxSurgePercent: '20' } }, roles: [{ name: 'ABC' }, { name: 'abcdefghij' }] })).toEqual({
      'spec.strategy.type': 'error: "Blue" is not one of "NewCluster", "None"',
      'spec.strategy.options.stepSizePercent': 'error: 0 is below the minimum ≥ 1',
      'spec.strategy.options.maxSurgePercent': 'error: must be an integer; got "20"',
      'spec.roles[0].name': 'error: "ABC" does not match the pattern ^[a-z]+$',
      'spec.roles[1].name': 'error: "abcdefghij" is longer than 8 characters (10)',
    });
  });

  test('lengths count code points, as Kubernetes does: a character outside the BMP is one, a lone surrogate one', () => {
    const lengthProblems = (name: string) => check({ roles: [{ name }] }).problems.filter((p) => p.message.includes('longer than')).map((p) => p.message.replace(/^.* is longer/, 'longer'));
    expect(lengthProblems('😀'.repeat(8))).toEqual([]);
    expect(lengthProblems('😀'.repeat(9))).toEqual(['longer than 8 characters (9)']);
    expect(lengthProblems('\ud83d'.repeat(9))).toEqual(['longer than 8 characters (9)']);
    expect(lengthProblems(`${'a'.repeat(7)}\ud83d`)).toEqual([]);
  });

  test('int-or-string takes both, and nothing else', () => {
    expect(at({ port: 80 })).toEqual({});
    expect(at({ port: 'http' })).toEqual({});
    expect(at({ port: 1.5 })).toEqual({ 'spec.port': 'error: must be an integer or a string; got 1.5' });
  });

  test('a required field missing after defaulting is an error', () => {
    expect(at({ strategy: { options: {} } })).toEqual({ 'spec.strategy.options.stepSizePercent': "error: is required by Test v1's Thing CRD" });
  });

  test('null in a non-nullable field is dropped (then defaulted); a nullable one keeps it', () => {
    const result = check({ strategy: { options: { stepSizePercent: 5, maxSurgePercent: null } }, note: null });
    expect(result.problems).toEqual([]);
    expect(result.stored.spec).toEqual({ strategy: { options: { stepSizePercent: 5, maxSurgePercent: 100 } }, note: null });
  });

  test('a null list item is a wrong type, not dropped', () => {
    expect(at({ roles: [null] })).toEqual({ 'spec.roles[0]': 'error: must be an object; got null' });
  });

  test('the input is not changed', () => {
    const spec = { strategy: { options: { stepSizePercent: 5 } } };
    check(spec);
    expect(spec).toEqual({ strategy: { options: { stepSizePercent: 5 } } });
  });
});

describe('closestFields', () => {
  test.each([
    ['maxSurgePercnt', ['maxSurgePercent', 'stepSizePercent'], ['maxSurgePercent']],
    ['upgradeStrategey', ['upgradeStrategy', 'serveConfigV2'], ['upgradeStrategy']],
    ['Replicas', ['replicas', 'minReplicas'], ['replicas']],
    ['stepSizePrecent', ['stepSizePercent'], ['stepSizePercent']],
    ['nmae', ['name', 'image'], ['name']],
    ['port', ['ports', 'sort'], ['ports', 'sort']],
    ['colour', ['name'], []],
  ])('%s among %j → %j', (key, known, expected) => {
    expect(closestFields(key, known)).toEqual(expected);
  });
});

describe('the pinned schemas', () => {
  test('each kind rayshift validates has one, by apiVersion', () => {
    expect(pinnedSchemaKey('ray.io/v1', 'RayService')).toBe('kuberay@v1.7.0 ray.io/v1/RayService');
    expect(pinnedSchemaKey('rayshift.dev/v1alpha1', 'RayService')).toBe('rayshift@v1.7.0 rayshift.dev/v1alpha1/RayService');
    expect(pinnedSchemaKey('gateway.networking.k8s.io/v1', 'HTTPRoute')).toBe('gateway-api@v1.6.1 gateway.networking.k8s.io/v1/HTTPRoute');
    expect(pinnedSchemaKey('workloads.x-k8s.io/v1alpha2', 'RoleBasedGroup')).toBe('rbg@v0.8.0-alpha.5 workloads.x-k8s.io/v1alpha2/RoleBasedGroup');
    expect(pinnedSchemaKey('workloads.x-k8s.io/v1alpha2', 'RoleBasedGroup', { rbgVersion: 'v0.7' })).toBe('rbg@v0.7.0 workloads.x-k8s.io/v1alpha2/RoleBasedGroup');
    expect(pinnedSchemaKey('workloads.x-k8s.io/v1alpha1', 'RoleBasedGroup', { rbgVersion: 'v0.6' })).toBe('rbg@v0.6.0 workloads.x-k8s.io/v1alpha1/RoleBasedGroup');
    // RBG v0.6.0 serves no v1alpha2.
    expect(pinnedSchemaKey('workloads.x-k8s.io/v1alpha2', 'RoleBasedGroup', { rbgVersion: 'v0.6' })).toBeUndefined();
    expect(pinnedSchemaKey('apps/v1', 'Deployment')).toBeUndefined();
  });

  test("the issue's typos in a RayService: both are errors naming the intended field, and the surge falls back to KubeRay's default", () => {
    const result = checkPinnedSchema({
      apiVersion: 'ray.io/v1',
      kind: 'RayService',
      metadata: { name: 'llm' },
      spec: {
        upgradeStrategey: { type: 'NewCluster' },
        upgradeStrategy: { type: 'NewClusterWithIncrementalUpgrade', clusterUpgradeOptions: { maxSurgePercnt: 20, stepSizePercent: 5, intervalSeconds: 60, gatewayClassName: 'istio' } },
        rayClusterConfig: { headGroupSpec: { rayStartParams: {}, template: { spec: { containers: [{ name: 'head', image: 'rayproject/ray:2.52.0' }] } } } },
      },
    })!;
    expect(result.problems.map((p) => [p.path, p.severity, /did you mean "(\w+)"/.exec(p.message)?.[1]])).toEqual([
      ['spec.upgradeStrategey', 'error', 'upgradeStrategy'],
      ['spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercnt', 'error', 'maxSurgePercent'],
    ]);
    // KubeRay v1.7.0's CRD: `+kubebuilder:default:=100` on MaxSurgePercent.
    expect((result.stored.spec as any).upgradeStrategy.clusterUpgradeOptions.maxSurgePercent).toBe(100);
  });

  test('a field another version or release of the kind declares is named as such, not as a typo', () => {
    const group = { apiVersion: 'workloads.x-k8s.io/v1alpha2', kind: 'RoleBasedGroup', metadata: { name: 'g' }, spec: { roles: [{ name: 'x', replicas: 1, leaderWorkerPattern: { size: 2, restartPolicyConfig: {} } }] } };
    expect(checkPinnedSchema(group, { rbgVersion: 'v0.7' })!.problems).toEqual([
      {
        path: 'spec.roles[0].leaderWorkerPattern.restartPolicyConfig',
        message: `"restartPolicyConfig" is not a field of leaderWorkerPattern in RBG v0.7.0's RoleBasedGroup CRD, so the API server would drop it; RBG v0.8.0-alpha.5's RoleBasedGroup CRD (workloads.x-k8s.io/v1alpha2) has it`,
        severity: 'error',
      },
    ]);
    expect(checkPinnedSchema(group, { rbgVersion: 'v0.8' })!.problems).toEqual([]);
  });

  test("KubeRay's worker-group defaults are applied: minReplicas 0, maxReplicas 2147483647, replicas 0", () => {
    const result = checkPinnedSchema({
      apiVersion: 'ray.io/v1',
      kind: 'RayService',
      metadata: { name: 'a' },
      spec: { rayClusterConfig: { headGroupSpec: { rayStartParams: {}, template: { spec: { containers: [{ name: 'h', image: 'i' }] } } }, workerGroupSpecs: [{ groupName: 'w', rayStartParams: {}, template: { spec: { containers: [{ name: 'w', image: 'i' }] } } }] } },
    })!;
    expect(result.problems).toEqual([]);
    expect((result.stored.spec as any).rayClusterConfig.workerGroupSpecs[0]).toMatchObject({ minReplicas: 0, maxReplicas: 2147483647, replicas: 0 });
  });
});

describe('hostile and JavaScript input', () => {
  test('__proto__ and constructor are unknown fields like any other, kept as own fields, and no prototype changes', () => {
    const spec = JSON.parse('{"strategy":{"__proto__":{"polluted":1},"constructor":"x","options":{"stepSizePercent":5}}}');
    const result = check(spec);
    expect(result.problems.map((p) => p.path)).toEqual(['spec.strategy.__proto__', 'spec.strategy.constructor']);
    expect(Object.getPrototypeOf(result.defaulted.spec)).toBe(Object.prototype);
    expect(Object.getPrototypeOf((result.defaulted.spec as any).strategy)).toBe(Object.prototype);
    expect(Object.keys((result.defaulted.spec as any).strategy)).toEqual(['__proto__', 'constructor', 'options']);
    expect(({} as any).polluted).toBeUndefined();
  });

  test('a field set to undefined (JavaScript) is unset: no type error, and the default applies', () => {
    const result = check({ strategy: { options: { stepSizePercent: 5, maxSurgePercent: undefined } } });
    expect(result.problems).toEqual([]);
    expect(result.stored.spec).toEqual({ strategy: { options: { stepSizePercent: 5, maxSurgePercent: 100 } } });
  });
});
