/**
 * planWeightPatch on many route shapes: a shared HTTPRoute with unmanaged rules, backends and
 * filters, a GRPCRoute, and random routes. Every patch is applied with an independent RFC 6902
 * implementation as well as the tests' own `applyTestJsonPatch` (test/support/json-patch.ts), and everything but the managed
 * backends must come out JSON-equal.
 */
import * as fc from 'fast-check';
import { RoutePlanError, managedRuleIndices, planWeightPatch } from '../../lib/runtime/route/weight-patch';
import { backendWeights } from '../support/route-weights';
import { applyTestJsonPatch, JsonPatchFailure } from '../support/json-patch';
import { JsonPatchOp } from '../../lib/runtime/route/types';
import { ACTIVE, PENDING, apply, applyRfc6902, backend, clone, sharedHttpRoute } from './support/route-fixtures';

/** Removes the given backends from every rule, for comparing "everything else" before and after. */
function withoutBackends(route: any, names: readonly string[]): any {
  const r = clone(route);
  for (const rule of r.spec?.rules ?? []) {
    if (Array.isArray(rule.backendRefs)) rule.backendRefs = rule.backendRefs.filter((b: any) => !names.includes(b.name));
  }
  return r;
}

function managedBackends(route: any, names: readonly string[]): any[] {
  return route.spec.rules.flatMap((r: any) => (r.backendRefs ?? []).filter((b: any) => names.includes(b.name)));
}

describe('planWeightPatch on a shared HTTPRoute', () => {
  test('a weight change replaces only that weight, guarded by the backend name at its index', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs.push(backend(PENDING, 0));
    const ops = planWeightPatch(route, [
      { name: ACTIVE, weight: 75 },
      { name: PENDING, weight: 25 },
    ]);
    expect(ops).toEqual([
      { op: 'test', path: '/spec/rules/1/backendRefs/1/name', value: ACTIVE },
      { op: 'test', path: '/spec/rules/1/backendRefs/2/name', value: PENDING },
      { op: 'replace', path: '/spec/rules/1/backendRefs/1/weight', value: 75 },
      { op: 'replace', path: '/spec/rules/1/backendRefs/2/weight', value: 25 },
    ]);
    const after = apply(route, ops);
    expect(withoutBackends(after, [ACTIVE, PENDING])).toEqual(withoutBackends(route, [ACTIVE, PENDING]));
    expect(managedBackends(after, [ACTIVE, PENDING])).toEqual([backend(ACTIVE, 75), backend(PENDING, 25)]);
    // The unmanaged backend of the same rule keeps its weight and its own filter.
    expect(after.spec.rules[1].backendRefs[0]).toEqual(route.spec.rules[1].backendRefs[0]);
  });

  test('a missing pending backend is appended to the managed rule, with the whole list guarded', () => {
    const route = sharedHttpRoute();
    const ops = planWeightPatch(route, [
      { name: ACTIVE, weight: 100 },
      { name: PENDING, namespace: 'serving', port: 8000, weight: 0 },
    ]);
    expect(ops).toEqual([
      { op: 'test', path: '/spec/rules/1/backendRefs', value: route.spec.rules[1].backendRefs },
      { op: 'add', path: '/spec/rules/1/backendRefs/-', value: { name: PENDING, namespace: 'serving', port: 8000, weight: 0 } },
    ]);
    const after = apply(route, ops);
    expect(after.spec.rules[1].backendRefs.map((b: any) => b.name)).toEqual(['static-svc', ACTIVE, PENDING]);
    expect(withoutBackends(after, [PENDING])).toEqual(route);
  });

  test('promotion removes the old active backend (listed in remove) and gives the new one 100', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs.push(backend(PENDING, 100));
    route.spec.rules[1].backendRefs[1].weight = 0;
    const ops = planWeightPatch(route, [{ name: PENDING, weight: 100 }], { remove: [{ name: ACTIVE }] });
    expect(ops).toEqual([
      { op: 'test', path: '/spec/rules/1/backendRefs', value: route.spec.rules[1].backendRefs },
      { op: 'test', path: '/spec/rules/1/backendRefs/1/name', value: ACTIVE },
      { op: 'remove', path: '/spec/rules/1/backendRefs/1' },
    ]);
    const after = apply(route, ops);
    expect(after.spec.rules[1].backendRefs).toEqual([route.spec.rules[1].backendRefs[0], backend(PENDING, 100)]);
    expect(withoutBackends(after, [ACTIVE])).toEqual(withoutBackends(route, [ACTIVE]));
  });

  test('owns removes stale rayshift backends (e.g. a cluster from an earlier upgrade) and keeps every other backend', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs.splice(0, 0, backend('llm-00000-serve-svc', 0));
    route.spec.rules[1].backendRefs.push(backend(PENDING, 10));
    const owns = (b: { name: string }) => /^llm-[0-9a-v]{5}-serve-svc$/.test(b.name);
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 90 }, { name: PENDING, weight: 10 }], { owns });
    const after = apply(route, ops);
    expect(after.spec.rules[1].backendRefs.map((b: any) => [b.name, b.weight])).toEqual([
      ['static-svc', 0],
      [ACTIVE, 90],
      [PENDING, 10],
    ]);
    expect(ops.filter((o) => o.op === 'remove')).toEqual([{ op: 'remove', path: '/spec/rules/1/backendRefs/0' }]);
  });

  test('several removals go highest index first, after the weight replacements, so every index stays right', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs = [backend('old-1', 5), backend('keep', 1), backend('old-2', 5), backend(ACTIVE, 10), backend('old-3', 5)];
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 100 }], { remove: [{ name: 'old-1' }, { name: 'old-2' }, { name: 'old-3' }] });
    const writes = ops.filter((o) => o.op !== 'test').map((o) => `${o.op} ${o.path}`);
    expect(writes).toEqual(['replace /spec/rules/1/backendRefs/3/weight', 'remove /spec/rules/1/backendRefs/4', 'remove /spec/rules/1/backendRefs/2', 'remove /spec/rules/1/backendRefs/0']);
    expect(apply(route, ops).spec.rules[1].backendRefs).toEqual([backend('keep', 1), backend(ACTIVE, 100)]);
  });

  test('nothing to change gives an empty patch; a missing weight reads as the default 1', () => {
    const route = sharedHttpRoute();
    expect(planWeightPatch(route, [{ name: ACTIVE, weight: 100 }])).toEqual([]);
    delete route.spec.rules[1].backendRefs[1].weight;
    expect(planWeightPatch(route, [{ name: ACTIVE, weight: 1 }])).toEqual([]);
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 40 }]);
    expect(ops).toContainEqual({ op: 'add', path: '/spec/rules/1/backendRefs/1/weight', value: 40 });
    expect(apply(route, ops).spec.rules[1].backendRefs[1]).toEqual(backend(ACTIVE, 40));
  });

  test('backends are matched by name and namespace (defaulting to the route\'s), core Services only', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs = [
      backend(ACTIVE, 100, { namespace: 'serving' }),
      backend(ACTIVE, 7, { namespace: 'other' }),
      { group: 'example.com', kind: 'ServiceImport', name: ACTIVE, port: 8000, weight: 7 },
    ];
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 60 }, { name: PENDING, weight: 40 }]);
    const after = apply(route, ops);
    expect(after.spec.rules[1].backendRefs).toEqual([
      backend(ACTIVE, 60, { namespace: 'serving' }),
      backend(ACTIVE, 7, { namespace: 'other' }),
      { group: 'example.com', kind: 'ServiceImport', name: ACTIVE, port: 8000, weight: 7 },
      { name: PENDING, port: 8000, weight: 40 },
    ]);
  });

  test('every rule holding a rayshift backend is managed; other rules are never touched', () => {
    const route = sharedHttpRoute();
    route.spec.rules.push({ matches: [{ path: { type: 'PathPrefix', value: '/v2' } }], backendRefs: [backend(ACTIVE, 100)] });
    expect(managedRuleIndices(route, [{ name: ACTIVE }])).toEqual([1, 3]);
    const after = apply(route, planWeightPatch(route, [{ name: ACTIVE, weight: 80 }, { name: PENDING, weight: 20 }]));
    expect(after.spec.rules[1].backendRefs.map((b: any) => b.name)).toEqual(['static-svc', ACTIVE, PENDING]);
    expect(after.spec.rules[3].backendRefs.map((b: any) => [b.name, b.weight])).toEqual([[ACTIVE, 80], [PENDING, 20]]);
    expect(after.spec.rules[0]).toEqual(route.spec.rules[0]);
    expect(after.spec.rules[2]).toEqual(route.spec.rules[2]);
  });

  test('ruleName adopts a named rule, even one without backends, and guards its name', () => {
    const route = sharedHttpRoute();
    route.spec.rules[2] = { name: 'serve', matches: [{ path: { type: 'PathPrefix', value: '/serve' } }] };
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 100 }], { ruleName: 'serve' });
    expect(ops).toEqual([
      { op: 'test', path: '/spec/rules/2/name', value: 'serve' },
      { op: 'test', path: '/spec/rules/2', value: route.spec.rules[2] },
      { op: 'add', path: '/spec/rules/2/backendRefs', value: [{ name: ACTIVE, port: 8000, weight: 100 }] },
    ]);
    const after = apply(route, ops);
    expect(after.spec.rules[2].backendRefs).toEqual([{ name: ACTIVE, port: 8000, weight: 100 }]);
    // The rule that already had the backend is not managed when a rule is named.
    expect(after.spec.rules[1]).toEqual(route.spec.rules[1]);
    expect(() => planWeightPatch(route, [{ name: ACTIVE, weight: 1 }], { ruleName: 'nope' })).toThrow('HTTPRoute serving/llm: spec.rules has no rule named "nope"');
  });

  test('a route without a rule rayshift owns is refused rather than guessed', () => {
    const route = sharedHttpRoute();
    expect(() => planWeightPatch(route, [{ name: 'unknown-svc', weight: 100 }])).toThrow(RoutePlanError);
    expect(() => planWeightPatch(route, [{ name: 'unknown-svc', weight: 100 }])).toThrow('HTTPRoute serving/llm: spec.rules has no rule with a backend rayshift owns (unknown-svc); rayshift only writes to rules it owns');
    expect(() => planWeightPatch({ kind: 'HTTPRoute', metadata: { name: 'x' }, spec: {} }, [{ name: ACTIVE, weight: 1 }])).toThrow(RoutePlanError);
  });

  test('weights out of 0–1,000,000, non-integers and a backend both managed and removed are refused', () => {
    const route = sharedHttpRoute();
    for (const w of [-1, 1_000_001, 1.5, NaN]) {
      expect(() => planWeightPatch(route, [{ name: ACTIVE, weight: w }])).toThrow(/weight of backend llm-aaaaa-serve-svc must be an integer from 0 to 1000000/);
    }
    expect(() => planWeightPatch(route, [{ name: ACTIVE, weight: 1 }], { remove: [{ name: ACTIVE, namespace: 'serving' }] })).toThrow(/both managed and listed for removal/);
  });

  test('guard adds a whole-object test of generation or resourceVersion', () => {
    const route = sharedHttpRoute();
    const g = planWeightPatch(route, [{ name: ACTIVE, weight: 50 }], { guard: 'generation' });
    expect(g[0]).toEqual({ op: 'test', path: '/metadata/generation', value: 4 });
    const rv = planWeightPatch(route, [{ name: ACTIVE, weight: 50 }], { guard: 'resourceVersion' });
    expect(rv[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '812' });
    const moved = clone(route);
    moved.metadata.generation = 5;
    expect(() => applyRfc6902(moved, g)).toThrow();
    expect(applyRfc6902(moved, rv).spec.rules[1].backendRefs[1].weight).toBe(50);
  });

  test('the test ops make a patch planned on a stale read fail instead of writing the wrong index', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].backendRefs.push(backend(PENDING, 0));
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 50 }, { name: PENDING, weight: 50 }]);
    // Someone inserted a rule in front: rule 1 is now the admin rule.
    const inserted = clone(route);
    inserted.spec.rules.splice(0, 0, { backendRefs: [backend('new-svc', 1)] });
    expect(() => applyRfc6902(inserted, ops)).toThrow();
    expect(() => applyTestJsonPatch(inserted, ops)).toThrow(JsonPatchFailure);
    // Someone reordered the backends of the managed rule.
    const reordered = clone(route);
    reordered.spec.rules[1].backendRefs.reverse();
    expect(() => applyRfc6902(reordered, ops)).toThrow();
    // Someone edited an unmanaged filter: the patch still applies and keeps their edit.
    const edited = clone(route);
    edited.spec.rules[0].filters[0].requestHeaderModifier.set[0].value = 'edge';
    const after = applyRfc6902(edited, ops);
    expect(after.spec.rules[0].filters[0].requestHeaderModifier.set[0].value).toBe('edge');
    expect(backendWeights(after, [ACTIVE, PENDING])).toEqual([50, 50]);
  });

  test('an append is refused when the managed rule\'s list changed since the read (no duplicate backend)', () => {
    const route = sharedHttpRoute();
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 100 }, { name: PENDING, weight: 0 }]);
    const raced = clone(route);
    raced.spec.rules[1].backendRefs.push(backend(PENDING, 0));
    expect(() => applyRfc6902(raced, ops)).toThrow();
  });

  test('JSON pointer escaping of rule names with / and ~', () => {
    const route = sharedHttpRoute();
    route.spec.rules[1].name = 'a/b~c';
    const ops = planWeightPatch(route, [{ name: ACTIVE, weight: 10 }], { ruleName: 'a/b~c' });
    expect(ops[0]).toEqual({ op: 'test', path: '/spec/rules/1/name', value: 'a/b~c' });
    expect(apply(route, ops).spec.rules[1].backendRefs[1].weight).toBe(10);
  });
});

describe('planWeightPatch on a GRPCRoute', () => {
  const grpc = (): any => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GRPCRoute',
    metadata: { name: 'llm-grpcroute', namespace: 'serving', generation: 1 },
    spec: {
      parentRefs: [{ name: 'llm-gateway' }],
      rules: [
        { matches: [{ method: { type: 'Exact', service: 'health.v1.Health' } }], backendRefs: [backend('health-svc', 1)] },
        {
          matches: [{ method: { service: 'llm.v1.Generate' }, headers: [{ name: 'tenant', value: 'a' }] }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'x-grpc', value: '1' }] } }],
          backendRefs: [backend(ACTIVE, 100)],
        },
      ],
    },
  });

  test('adds the pending backend, moves weights, and leaves the method matches, headers and filters alone', () => {
    const route = grpc();
    let cur = apply(route, planWeightPatch(route, [{ name: ACTIVE, weight: 100 }, { name: PENDING, weight: 0, port: 9000 }]));
    expect(cur.spec.rules[1].backendRefs[1]).toEqual({ name: PENDING, port: 9000, weight: 0 });
    cur = apply(cur, planWeightPatch(cur, [{ name: ACTIVE, weight: 30 }, { name: PENDING, weight: 70 }]));
    expect(withoutBackends(cur, [ACTIVE, PENDING])).toEqual(withoutBackends(route, [ACTIVE, PENDING]));
    expect(backendWeights(cur, [ACTIVE, PENDING])).toEqual([30, 70]);
    cur = apply(cur, planWeightPatch(cur, [{ name: PENDING, weight: 100 }], { remove: [{ name: ACTIVE }] }));
    expect(cur.spec.rules[1].backendRefs).toEqual([{ name: PENDING, port: 9000, weight: 100 }]);
    expect(cur.spec.rules[0]).toEqual(route.spec.rules[0]);
  });
});

describe('property: only managed weights change, whatever the route', () => {
  const name = fc.constantFrom('a-svc', 'b-svc', 'c-svc', ACTIVE, PENDING, 'llm-ccccc-serve-svc');
  const ref = fc.record(
    { name, weight: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }), namespace: fc.option(fc.constantFrom('serving', 'other'), { nil: undefined }) },
    { requiredKeys: ['name'] },
  ).map((r) => ({ group: '', kind: 'Service', port: 8000, ...Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) }));
  const rule = fc.record({
    matches: fc.constant([{ path: { type: 'PathPrefix', value: '/' } }]),
    filters: fc.option(fc.constant([{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x', value: 'y' }] } }]), { nil: undefined }),
    backendRefs: fc.array(ref, { maxLength: 5 }),
  });
  const route = fc.array(rule, { minLength: 1, maxLength: 4 }).map((rules) => ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'r', namespace: 'serving' },
    spec: { parentRefs: [{ name: 'gw' }], rules: rules.map((r) => (r.filters === undefined ? { matches: r.matches, backendRefs: r.backendRefs } : r)) },
  }));

  test('planned patches apply cleanly, set the managed weights and keep everything else JSON-equal', () => {
    fc.assert(
      fc.property(route, fc.integer({ min: 0, max: 100 }), fc.boolean(), (r, pendingWeight, promote) => {
        const managed = promote ? [{ name: PENDING, weight: 100 }] : [{ name: ACTIVE, weight: 100 - pendingWeight }, { name: PENDING, weight: pendingWeight }];
        const remove = promote ? [{ name: ACTIVE }] : [];
        let ops: JsonPatchOp[];
        try {
          ops = planWeightPatch(r, managed, { remove });
        } catch (e) {
          expect(e).toBeInstanceOf(RoutePlanError);
          expect(managedRuleIndices(r, managed, { remove })).toEqual([]);
          return;
        }
        const after = apply(r, ops);
        const names = [ACTIVE, PENDING];
        const managedRules = managedRuleIndices(r, managed, { remove });
        // Outside the managed backends (only same-namespace refs are ours), every backend, in order, is unchanged ...
        const kept = (x: any) =>
          x.spec.rules.map((rl: any) => (rl.backendRefs ?? []).filter((b: any) => !(names.includes(b.name) && (b.namespace ?? 'serving') === 'serving')));
        expect(kept(after)).toEqual(kept(r));
        // ... and so is everything that is not a backend.
        const noBackends = (x: any) => ({ ...x, spec: { ...x.spec, rules: x.spec.rules.map(({ backendRefs: _b, ...rest }: any) => rest) } });
        expect(noBackends(after)).toEqual(noBackends(r));
        for (const i of managedRules) {
          const refs = after.spec.rules[i].backendRefs.filter((b: any) => (b.namespace ?? 'serving') === 'serving');
          for (const m of managed) expect(refs.filter((b: any) => b.name === m.name).map((b: any) => b.weight ?? 1)).toEqual(expect.arrayContaining([m.weight]));
          if (promote) expect(refs.some((b: any) => b.name === ACTIVE)).toBe(false);
        }
        r.spec.rules.forEach((rl: any, i: number) => {
          if (!managedRules.includes(i)) expect(after.spec.rules[i]).toEqual(rl);
        });
        // Planning again on the result is a no-op.
        expect(planWeightPatch(after, managed, { remove })).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
