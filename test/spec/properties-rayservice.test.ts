/**
 * Property tests of validateRayService: thousands of random inputs (values of random types, random
 * RayService structures) never make it throw, every finding is located and explained, and for the
 * numeric upgrade options, names, delays and serve configs it agrees with independent oracles
 * written here from the rules in reference/kuberay.md §1.
 */
import fc from 'fast-check';
import { Problem, validateRayService } from '../../lib/spec';
import { SERVE_CONFIG, podTemplate, rayService } from './fixtures';
import { RUNS, expectWellFormed, intIn, junk, optional } from './support/validator-properties';

const INT32_MAX = 2 ** 31 - 1;
const OPTS = 'spec.upgradeStrategy.clusterUpgradeOptions';

function pathsOf(problems: readonly Problem[]): Set<string> {
  return new Set(problems.map((p) => p.path));
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
