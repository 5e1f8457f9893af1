/**
 * Property tests of validateRoute and validateGateway: random values and random routes never make
 * them throw, every finding is located and explained, and backend weight and port errors (and the
 * all-zero-weights warning) appear exactly where an independent oracle says.
 */
import fc from 'fast-check';
import { validateGateway, validateRoute } from '../../lib/spec';
import { RUNS, expectWellFormed, intIn, junk, optional } from './support/validator-properties';

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
