/**
 * Spec fuzzing: 10,000 generated RayService manifests (and 3,000 RoleBasedGroups with their
 * CoordinatedPolicies) through the model's validators, the engine's plan and, for RayServices, the
 * cdk8s construct's synthesis. Whatever the input: the validators return their documented result
 * (never throw), every problem has a path and a message, an input without errors plans without
 * throwing, synthesis fails exactly when validation finds errors (listing them), and the same input
 * gives the same output. Seed: FUZZ_SEED (printed); a failure prints the counterexample and its seed.
 */
import { isDeepStrictEqual } from 'node:util';
import { Chart, Testing } from 'cdk8s';
import fc from 'fast-check';
import { RayService, type RayServiceProps } from '../../lib/cdk8s';
import { planRayService, planRoleBasedGroup, type RayServicePlan } from '../../lib/engine';
import { rbgPlanInputs } from '../../lib/engine/from-spec';
import { resolveUpgradeOptions } from '../../lib/spec/rayservice';
import { formatProblem, validateCoordinatedPolicy, validateRayService, validateRoleBasedGroup, type RayServiceSpec, type ValidationResult } from '../../lib/spec';
import { isObject } from '../../lib/spec/read';
import { FuzzFigures, countCrashes, formatFigures, fuzzParams, newFigures, sampleRss, showInput, withInput } from './support/fuzz-run';
import { anyRayService, anyRbg } from './support/spec-arbitraries';

const RAY_SERVICES = 10_000;
const RBGS = 3_000;
/** Synthesis is the slow path (a cdk8s app per input): every input is validated and planned, one in `SYNTH_EVERY` is also synthesized. */
const SYNTH_EVERY = 4;

const figures: FuzzFigures = newFigures();
/** What the inputs exercised, printed with the figures (a generator drifting to all-invalid inputs shows here). */
const reached = { valid: 0, synthesized: 0, synthRefused: 0, rbgValid: 0, rbgPlans: 0 };
const started = performance.now();
let rss: { stop(): void };
let crashes: ReturnType<typeof countCrashes>;

beforeAll(() => {
  rss = sampleRss(figures, 50);
  crashes = countCrashes(figures);
});

afterAll(() => {
  rss.stop();
  crashes.stop();
  console.log(
    `${formatFigures('specs', figures, (performance.now() - started) / 1000)}\n` +
      `RayServices: ${reached.valid} valid (each planned), ${reached.synthesized} synthesized, ${reached.synthRefused} refused at synthesis; ` +
      `RoleBasedGroups: ${reached.rbgValid} valid, ${reached.rbgPlans} plans`,
  );
});

/** Fails with `message` unless `ok` (plain checks: jest's matchers cost more than the checks in these hot loops). */
function check(ok: boolean, message: () => string): void {
  if (!ok) throw new Error(message());
}

const LOCATED = /^(metadata|spec)([.[]\S|$)/;

/** The documented result: errors and warnings, each located (`metadata…`, `spec…`, or `spec` itself), explained, with its severity. */
function expectWellFormed(result: ValidationResult): void {
  check(isObject(result) && Object.keys(result).sort().join() === 'errors,warnings', () => `not a ValidationResult: ${showInput(result)}`);
  for (const [list, severity] of [
    [result.errors, 'error'],
    [result.warnings, 'warning'],
  ] as const) {
    check(Array.isArray(list), () => `${severity}s is not a list: ${showInput(list)}`);
    for (const p of list) {
      const ok = typeof p.path === 'string' && LOCATED.test(p.path) && typeof p.message === 'string' && p.message.trim() !== '' && p.severity === severity;
      check(ok, () => `malformed ${severity}: ${showInput(p)}`);
    }
  }
}

/** `actual` deep-equals `expected` (Object.is on leaves); node's comparison, as jest's toEqual costs more than the checks it guards. */
function expectSame(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected)) throw new Error(`${what} differs: ${showInput(actual)}\nexpected: ${showInput(expected)}`);
}

/** Weights of every plan step add up to 100 and capacities stay within 0..100 per cluster. */
function expectSanePlan(plan: RayServicePlan): void {
  for (const s of plan.steps) {
    const values = [s.activeWeight, s.pendingWeight, s.activeTargetCapacity, s.pendingTargetCapacity];
    check(s.activeWeight + s.pendingWeight === 100 && values.every((v) => v >= 0 && v <= 100), () => `bad plan step: ${showInput(s)}`);
  }
  check(['promoted', 'rolled-back', 'unchanged'].includes(plan.outcome), () => `bad plan outcome: ${plan.outcome}`);
}

/** Whether an object anywhere in `value` has an own key `constructor`. */
function hasConstructorKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (!Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, 'constructor')) return true;
  return Object.values(value).some(hasConstructorKey);
}

/**
 * The construct's props for a manifest, when its top-level fields have the types the props declare
 * (else undefined: JS callers get no promise there). Not for inputs with a `constructor` key: cdk8s
 * itself refuses to render such objects ("can't render non-simple object"), whatever rayshift does.
 */
function constructProps(m: unknown): RayServiceProps | undefined {
  if (!isObject(m) || !isObject(m.spec) || !isObject(m.metadata) || hasConstructorKey(m)) return undefined;
  const name = m.metadata.name;
  const spec = m.spec;
  if ((name !== undefined && typeof name !== 'string') || (spec.serveConfigV2 !== undefined && typeof spec.serveConfigV2 !== 'string')) return undefined;
  if (m.apiVersion !== 'ray.io/v1' && m.apiVersion !== 'rayshift.dev/v1alpha1') return undefined;
  return {
    metadata: name === undefined ? {} : { name },
    executor: m.apiVersion === 'ray.io/v1' ? 'kuberay' : 'operator',
    rayClusterConfig: spec.rayClusterConfig as never,
    ...(spec.serveConfigV2 !== undefined ? { serveConfig: spec.serveConfigV2 as string } : {}),
    ...(spec.upgradeStrategy !== undefined ? { upgradeStrategy: spec.upgradeStrategy as never } : {}),
    ...(spec.rayClusterDeletionDelaySeconds !== undefined ? { rayClusterDeletionDelaySeconds: spec.rayClusterDeletionDelaySeconds as never } : {}),
    ...(spec.excludeHeadPodFromServeSvc !== undefined ? { excludeHeadPodFromServeSvc: spec.excludeHeadPodFromServeSvc as never } : {}),
    ...(spec.rayshift !== undefined ? { rayshift: spec.rayshift as never } : {}),
  };
}

/** Synthesizes one RayService with its validations (`Testing.synth` runs them; warnings go to stderr, silenced here): the manifests, or the error synthesis threw. */
function synthValidated(props: RayServiceProps): { manifests?: any[]; error?: Error; construct: RayService } {
  const chart = new Chart(Testing.app(), 'fuzz', { namespace: 'serving' });
  const construct = new RayService(chart, 'svc', props);
  const write = process.stderr.write;
  process.stderr.write = () => true;
  try {
    return { manifests: Testing.synth(chart), construct };
  } catch (e) {
    return { error: e as Error, construct };
  } finally {
    process.stderr.write = write;
  }
}

test(`${RAY_SERVICES} RayServices: validated, planned when valid, synthesized, deterministically`, () => {
  let run = 0;
  fc.assert(
    fc.property(
      anyRayService,
      withInput((m) => {
      figures.specs++;
      const before = structuredClone(m);
      const result = validateRayService(m);
      expectWellFormed(result);
      // Validation reads only: the input is unchanged, and a copy gives the same answer.
      expectSame(structuredClone(m), before, 'the input after validation'); // both copies: fc.anything() makes null-prototype objects
      expectSame(validateRayService(structuredClone(m)), result, 'validation of a copy');

      const valid = result.errors.length === 0;
      if (valid) {
        const spec = (m as { spec: RayServiceSpec }).spec;
        const name = (m as { metadata: { name: string } }).metadata.name;
        const plan = planRayService({ kind: 'RayService', name, options: resolveUpgradeOptions(spec) });
        expectSanePlan(plan);
        reached.valid++;
        expectSame(planRayService({ kind: 'RayService', name, options: resolveUpgradeOptions(structuredClone(spec)) }), plan, 'the plan of a copy');
      }

      const props = run++ % SYNTH_EVERY === 0 ? constructProps(m) : undefined;
      if (props) {
        const { manifests, error, construct } = synthValidated(props);
        const findings = construct.findings();
        if (findings.errors.length > 0) {
          // The documented failure: synthesis throws, listing every error of the model.
          expect(error).toBeDefined();
          reached.synthRefused++;
          for (const e of findings.errors) expect(error!.message).toContain(formatProblem(e));
        } else {
          if (error) throw new Error(`synthesis of a manifest without errors threw: ${error.stack}`);
          const rs = manifests!.find((x) => x.kind === 'RayService');
          expect(validateRayService(rs).errors).toEqual([]);
          reached.synthesized++;
        }
      }
      }),
    ),
    fuzzParams(1, RAY_SERVICES),
  );
});

test(`${RBGS} RoleBasedGroups and CoordinatedPolicies: validated, planned when valid, deterministically`, () => {
  fc.assert(
    fc.property(
      anyRbg,
      withInput(({ group, policy }) => {
      figures.specs++;
      const result = validateRoleBasedGroup(group);
      expectWellFormed(result);
      expectSame(validateRoleBasedGroup(structuredClone(group)), result, 'validation of a copy');
      const policyResult = policy === undefined ? undefined : validateCoordinatedPolicy(policy, group);
      if (policyResult) {
        expectWellFormed(policyResult);
        // One clone of both: a shared junk name must stay shared, as the validator compares the names.
        const copy = structuredClone({ policy, group });
        expectSame(validateCoordinatedPolicy(copy.policy, copy.group), policyResult, 'validation of a copy');
      }
      if (result.errors.length > 0 || (policyResult?.errors.length ?? 0) > 0) return;
      reached.rbgValid++;
      const inputs = rbgPlanInputs(group as never, policy as never);
      for (const input of inputs) {
        for (const coordination of ['parallel', 'upstream'] as const) {
          const plan = planRoleBasedGroup({ ...input, coordination });
          reached.rbgPlans++;
          expectSame(planRoleBasedGroup({ ...structuredClone(input), coordination }), plan, 'the plan of a copy');
          for (const round of plan.rounds) {
            check(input.roles.every((r) => round.updated[r.name] >= 0 && round.updated[r.name] <= r.replicas), () => `bad plan round: ${showInput(round)}`);
          }
        }
      }
      }),
    ),
    fuzzParams(2, RBGS),
  );
});

test('no uncaught exception or unhandled rejection during the spec runs', () => {
  expect(crashes.errors).toEqual([]);
});
