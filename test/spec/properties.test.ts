/**
 * Property tests of the validators: thousands of random inputs (values of random types, random
 * structures) never make them throw, every finding is located and explained, and for the numeric
 * upgrade options, names, delays and partitions the validators agree with independent oracles
 * written here from the rules in reference/kuberay.md §1 and reference/rbg.md §1–2.
 */
import fc from 'fast-check';
import {
  Problem,
  RBG_V1ALPHA1,
  RBG_V1ALPHA2,
  ValidationResult,
  validateCoordinatedPolicy,
  validateGateway,
  validateRayService,
  validateRoleBasedGroup,
  validateRoute,
} from '../../lib/spec';
import { SERVE_CONFIG, podTemplate, rayService } from './fixtures';

const RUNS = 2000;
const INT32_MAX = 2 ** 31 - 1;
const OPTS = 'spec.upgradeStrategy.clusterUpgradeOptions';

// ---------------------------------------------------------------------------------------------
// Shared checks and arbitraries

/** A finding is located at `metadata.…` or `spec.…` (or `spec` itself when the spec is missing) and explained. */
function expectWellFormed(result: ValidationResult): void {
  expect(Array.isArray(result.errors)).toBe(true);
  expect(Array.isArray(result.warnings)).toBe(true);
  const check = (p: Problem, severity: string) => {
    expect(typeof p.path).toBe('string');
    // `apiVersion`: an RBG release that does not serve it, or deprecates it.
    expect(p.path === 'spec' || p.path === 'apiVersion' || /^(metadata|spec)\.\S/.test(p.path)).toBe(true);
    expect(typeof p.message).toBe('string');
    expect(p.message.trim().length).toBeGreaterThan(0);
    expect(p.severity).toBe(severity);
  };
  result.errors.forEach((p) => check(p, 'error'));
  result.warnings.forEach((p) => check(p, 'warning'));
}

function pathsOf(problems: readonly Problem[]): Set<string> {
  return new Set(problems.map((p) => p.path));
}

/** Values of every JSON type and then some (NaN, ±Infinity, -0, undefined, nested objects). */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -300, max: 300 }),
  fc.double(),
  fc.string({ maxLength: 12 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 3 }),
  fc.constantFrom('10%', '100', '', 'istio', '1e2', ' 5 ', 'NaN'),
);

/** An optional field: absent (undefined) or one of `values`. */
function optional<T>(values: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(values, { nil: undefined, freq: 5 });
}

// ---------------------------------------------------------------------------------------------
// Independent oracles (written from the rules, not from lib/spec)

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALNUM = `${LOWER}0123456789`;

/** KubeRay's RayService name rule: a DNS-1035 label of at most 47 characters. */
function nameOk(name: unknown): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > 47) return false;
  const chars = Array.from(name);
  return LOWER.includes(chars[0]) && ALNUM.includes(chars[chars.length - 1]) && chars.every((c) => c.length === 1 && (ALNUM + '-').includes(c));
}

/** A DNS-1123 subdomain: ≤ 253 characters, dot-separated parts of [a-z0-9-] starting and ending alphanumeric. */
function subdomainOk(value: unknown): boolean {
  if (typeof value !== 'string' || value.length === 0 || value.length > 253) return false;
  return value.split('.').every((part) => {
    const chars = Array.from(part);
    return (
      chars.length > 0 &&
      ALNUM.includes(chars[0]) &&
      ALNUM.includes(chars[chars.length - 1]) &&
      chars.every((c) => c.length === 1 && (ALNUM + '-').includes(c))
    );
  });
}

function intIn(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/**
 * The clusterUpgradeOptions numeric rules: surge 1..100 (unset or null means the CRD default 100),
 * step 1..100 and ≤ surge, interval 1..2^31−1 (an int32). Zero surge and step are invalid (they stall).
 */
function numericOracle(surge: unknown, step: unknown, interval: unknown) {
  const s = surge === undefined || surge === null ? 100 : surge;
  const surgeOk = intIn(s, 1, 100);
  const stepInRange = intIn(step, 1, 100);
  const stepOk = stepInRange && (!surgeOk || (step as number) <= (s as number));
  const intervalOk = intIn(interval, 1, INT32_MAX); // *int32 in KubeRay
  const dividesWarning = surgeOk && stepInRange && (step as number) <= (s as number) && (s as number) % (step as number) !== 0;
  return { surgeOk, stepOk, intervalOk, dividesWarning };
}

/** Serve configs whose validity is known; the flag says whether they are valid under an incremental upgrade. */
const SERVE_CONFIGS: [string, boolean][] = [
  [SERVE_CONFIG, true],
  ['applications:\n  - import_path: app.main:app\n', true],
  ['applications:\n  - {name: a, import_path: "m:a", route_prefix: /a}\n  - {name: b, import_path: "m:b", route_prefix: /b}\n', true],
  ['applications: []\n', false],
  ['applications: [\n', false],
  ['applications:\n  - {name: a, import_path: "m:a", route_prefix: /a}\n  - {name: a, import_path: "m:b", route_prefix: /b}\n', false],
  ['applications:\n  - {name: a, import_path: "no path"}\n', false],
  [`${SERVE_CONFIG}target_capacity: 50\n`, false],
  ['just text', false],
];

// ---------------------------------------------------------------------------------------------
// RayService

/** A random RayService manifest: every field may be missing, of the wrong type, or valid. */
const anyRayService: fc.Arbitrary<unknown> = fc
  .record({
    apiVersion: fc.oneof(fc.constantFrom('ray.io/v1', 'rayshift.dev/v1alpha1'), junk),
    name: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,50}$/), fc.string({ maxLength: 60 }), junk),
    autoscaler: fc.oneof(fc.boolean(), junk),
    type: fc.oneof(fc.constantFrom('NewCluster', 'NewClusterWithIncrementalUpgrade', 'None'), junk),
    options: fc.oneof(
      fc.record(
        {
          maxSurgePercent: fc.oneof(fc.integer({ min: -20, max: 120 }), junk),
          stepSizePercent: fc.oneof(fc.integer({ min: -20, max: 120 }), junk),
          intervalSeconds: fc.oneof(fc.integer({ min: -5, max: 100 }), junk),
          gatewayClassName: fc.oneof(fc.constantFrom('istio', 'a.b', 'Bad_Class', ''), fc.string({ maxLength: 20 }), junk),
        },
        { requiredKeys: [] },
      ),
      junk,
    ),
    delay: fc.oneof(fc.integer({ min: -10, max: 100 }), junk),
    serve: fc.oneof(fc.constantFrom(...SERVE_CONFIGS.map(([s]) => s)), fc.string({ maxLength: 40 }), junk),
    rayshift: optional(
      fc.oneof(
        fc.record(
          {
            gatewayRef: fc.oneof(fc.record({ name: fc.oneof(fc.string({ maxLength: 10 }), junk), namespace: junk }, { requiredKeys: [] }), junk),
            progressDeadlineSeconds: fc.oneof(fc.integer({ min: -5, max: 1000 }), junk),
            paused: fc.oneof(fc.boolean(), junk),
            routeKind: fc.oneof(fc.constantFrom('HTTP', 'GRPC', 'TCP'), junk),
          },
          { requiredKeys: [] },
        ),
        junk,
      ),
    ),
    workers: fc.oneof(
      fc.array(
        fc.record(
          {
            groupName: fc.oneof(fc.constantFrom('gpu', 'cpu', 'Bad'), junk),
            replicas: junk,
            minReplicas: junk,
            maxReplicas: fc.oneof(fc.integer({ min: -1, max: 16 }), junk),
            template: fc.oneof(fc.integer({ min: 0, max: 8 }).map(podTemplate), junk),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 3 },
      ),
      junk,
    ),
  })
  .map((d) => ({
    apiVersion: d.apiVersion,
    kind: 'RayService',
    metadata: { name: d.name },
    spec: {
      rayClusterConfig: { enableInTreeAutoscaling: d.autoscaler, headGroupSpec: { template: podTemplate(0) }, workerGroupSpecs: d.workers },
      serveConfigV2: d.serve,
      upgradeStrategy: { type: d.type, clusterUpgradeOptions: d.options },
      rayClusterDeletionDelaySeconds: d.delay,
      ...(d.rayshift !== undefined ? { rayshift: d.rayshift } : {}),
    },
  }));

describe('validateRayService properties', () => {
  test('never throws on arbitrary values, and every finding is located and explained', () => {
    fc.assert(
      fc.property(fc.anything(), (m) => {
        expectWellFormed(validateRayService(m));
      }),
      { numRuns: RUNS },
    );
  });

  test('never throws on random RayService-shaped manifests, and every finding is located and explained', () => {
    fc.assert(
      fc.property(anyRayService, (m) => {
        const r = validateRayService(m);
        expectWellFormed(r);
        // Errors block, warnings inform: no path/message pair is both.
        const errs = new Set(r.errors.map((e) => `${e.path}|${e.message}`));
        for (const w of r.warnings) expect(errs.has(`${w.path}|${w.message}`)).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  test('integer surge/step/interval: errors on each path exist exactly when the oracle says it is invalid', () => {
    fc.assert(
      fc.property(
        optional(fc.integer({ min: -30, max: 130 })),
        optional(fc.integer({ min: -30, max: 130 })),
        optional(fc.integer({ min: -5, max: 5 })),
        (surge, step, interval) => {
          const m = rayService();
          m.spec.upgradeStrategy.clusterUpgradeOptions = { maxSurgePercent: surge, stepSizePercent: step, intervalSeconds: interval, gatewayClassName: 'istio' };
          const r = validateRayService(m);
          const o = numericOracle(surge, step, interval);
          const errs = pathsOf(r.errors);
          expect(errs.has(`${OPTS}.maxSurgePercent`)).toBe(!o.surgeOk);
          expect(errs.has(`${OPTS}.stepSizePercent`)).toBe(!o.stepOk);
          expect(errs.has(`${OPTS}.intervalSeconds`)).toBe(!o.intervalOk);
          expect(r.errors.length === 0).toBe(o.surgeOk && o.stepOk && o.intervalOk);
          expect(pathsOf(r.warnings).has(`${OPTS}.stepSizePercent`)).toBe(o.dividesWarning);
          // the stall explanation accompanies exactly the zero values
          const surgeMsg = r.errors.find((e) => e.path === `${OPTS}.maxSurgePercent`)?.message ?? '';
          expect(surgeMsg.includes('stall')).toBe(surge === 0);
          const stepMsgs = r.errors.filter((e) => e.path === `${OPTS}.stepSizePercent`).map((e) => e.message);
          expect(stepMsgs.some((msg) => msg.includes('stall'))).toBe(step === 0);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('surge/step/interval/class/name/delay/serve config of any type: accepted iff every oracle accepts', () => {
    const numberish = fc.oneof(fc.integer({ min: -10, max: 110 }), fc.integer({ min: -10, max: 110 }), junk);
    fc.assert(
      fc.property(
        fc.record({
          surge: numberish,
          step: numberish,
          interval: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(INT32_MAX, INT32_MAX + 1, 1e300), junk),
          className: fc.oneof(
            fc.constantFrom('istio', 'gateway.example.com', 'a', 'Istio', 'a..b', '-a', 'a-', 'x'.repeat(254)),
            fc.string({ unit: fc.constantFrom('a', 'z', '0', '-', '.', 'A', '_'), maxLength: 10 }),
            junk,
          ),
          name: fc.oneof(
            fc.string({ unit: fc.constantFrom('a', 'q', '7', '-', 'B', '.', '_'), maxLength: 50 }),
            fc.constantFrom('llm', 'a'.repeat(47), 'a'.repeat(48), 'l'),
            junk,
          ),
          delay: optional(fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(INT32_MAX, INT32_MAX + 1), junk)),
          serve: fc.integer({ min: 0, max: SERVE_CONFIGS.length - 1 }),
        }),
        (d) => {
          const m = rayService();
          m.metadata.name = d.name;
          m.spec.upgradeStrategy.clusterUpgradeOptions = {
            maxSurgePercent: d.surge,
            stepSizePercent: d.step,
            intervalSeconds: d.interval,
            gatewayClassName: d.className,
          };
          if (d.delay === undefined) delete m.spec.rayClusterDeletionDelaySeconds;
          else m.spec.rayClusterDeletionDelaySeconds = d.delay;
          const [serve, serveOk] = SERVE_CONFIGS[d.serve];
          m.spec.serveConfigV2 = serve;

          const r = validateRayService(m);
          expectWellFormed(r);
          const o = numericOracle(d.surge, d.step, d.interval);
          const classOk = subdomainOk(d.className);
          const delayOk = d.delay === undefined || intIn(d.delay, 0, INT32_MAX);
          const errs = pathsOf(r.errors);
          expect(errs.has(`${OPTS}.maxSurgePercent`)).toBe(!o.surgeOk);
          expect(errs.has(`${OPTS}.stepSizePercent`)).toBe(!o.stepOk);
          expect(errs.has(`${OPTS}.intervalSeconds`)).toBe(!o.intervalOk);
          expect(errs.has(`${OPTS}.gatewayClassName`)).toBe(!classOk);
          expect(errs.has('metadata.name')).toBe(!nameOk(d.name));
          expect(errs.has('spec.rayClusterDeletionDelaySeconds')).toBe(!delayOk);
          expect([...errs].some((p) => p.startsWith('spec.serveConfigV2'))).toBe(!serveOk);
          const accepted = r.errors.length === 0;
          expect(accepted).toBe(o.surgeOk && o.stepOk && o.intervalOk && classOk && nameOk(d.name) && delayOk && serveOk);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('the value a message complains about is named in it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 101, max: 100000 }), fc.integer({ min: -100000, max: -1 }), (big, negative) => {
        const m = rayService();
        Object.assign(m.spec.upgradeStrategy.clusterUpgradeOptions, { maxSurgePercent: big, stepSizePercent: negative, intervalSeconds: negative });
        const r = validateRayService(m);
        expect(r.errors.find((e) => e.path === `${OPTS}.maxSurgePercent`)?.message).toContain(String(big));
        expect(r.errors.find((e) => e.path === `${OPTS}.stepSizePercent`)?.message).toContain(String(negative));
        expect(r.errors.find((e) => e.path === `${OPTS}.intervalSeconds`)?.message).toContain(String(negative));
      }),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// RoleBasedGroup and CoordinatedPolicy

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

// ---------------------------------------------------------------------------------------------
// Routes and Gateways

const anyBackend = fc.oneof(
  fc.record(
    {
      name: fc.oneof(fc.constantFrom('svc-a', 'svc-b', ''), junk),
      port: fc.oneof(fc.integer({ min: -1, max: 70000 }), junk),
      weight: fc.oneof(fc.integer({ min: -2, max: 1_000_002 }), fc.constantFrom(0, 1_000_000, 1_000_001), junk),
      kind: fc.constantFrom('Service', 'ServiceImport'),
    },
    { requiredKeys: [] },
  ),
  junk,
);

describe('validateRoute and validateGateway properties', () => {
  test('never throw on arbitrary values or random routes; findings are located and explained', () => {
    const anyRoute = fc.record({
      metadata: fc.oneof(fc.record({ name: fc.oneof(fc.constantFrom('r', 'R!'), junk) }), junk),
      spec: fc.oneof(
        fc.record(
          {
            parentRefs: fc.oneof(fc.array(fc.oneof(fc.record({ name: junk }), junk), { maxLength: 2 }), junk),
            rules: fc.oneof(fc.array(fc.oneof(fc.record({ backendRefs: fc.oneof(fc.array(anyBackend, { maxLength: 3 }), junk) }), junk), { maxLength: 3 }), junk),
          },
          { requiredKeys: [] },
        ),
        junk,
      ),
    });
    fc.assert(
      fc.property(fc.oneof(anyRoute, fc.anything()), (r) => {
        expectWellFormed(validateRoute(r));
        expectWellFormed(validateGateway(r));
      }),
      { numRuns: RUNS },
    );
  });

  test('weights and ports: errors exactly where the oracle says, and the all-zero warning exactly when every weight is a valid 0', () => {
    const backend = fc.record({
      weight: optional(fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(1_000_000, 1_000_001, 0.5, '1', null))),
      port: optional(fc.oneof(fc.integer({ min: -1, max: 3 }), fc.constantFrom(8000, 65535, 65536, '80'))),
    });
    fc.assert(
      fc.property(fc.array(backend, { minLength: 1, maxLength: 4 }), (backends) => {
        const route = {
          metadata: { name: 'r' },
          spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: backends.map((b, i) => ({ name: `svc-${i}`, ...b })) }] },
        };
        const r = validateRoute(route);
        const weightOf = (w: unknown) => (w === undefined || w === null ? 1 : w);
        const expected: string[] = [];
        backends.forEach((b, i) => {
          if (!intIn(b.port, 1, 65535)) expected.push(`spec.rules[0].backendRefs[${i}].port`);
          if (!intIn(weightOf(b.weight), 0, 1_000_000)) expected.push(`spec.rules[0].backendRefs[${i}].weight`);
        });
        expect(r.errors.map((e) => e.path).sort()).toEqual(expected.sort());
        const allZero = backends.every((b) => weightOf(b.weight) === 0);
        expect(r.warnings.map((w) => w.path)).toEqual(allZero ? ['spec.rules[0].backendRefs'] : []);
      }),
      { numRuns: RUNS },
    );
  });
});
