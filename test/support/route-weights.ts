/**
 * Route weights as the tests read them: straight from an HTTPRoute or GRPCRoute object, written
 * apart from lib/runtime/route (an oracle must not be the code under test). Weight 1 where a
 * backendRef has none, as the Gateway API defaults it. Test support, not the package's API.
 */

/** One backendRef of a rule: its Service name and weight. */
export interface RouteBackend {
  readonly name: string;
  readonly weight: number;
}

interface RawRule {
  readonly backendRefs?: readonly { readonly name: string; readonly weight?: number }[];
}

function rulesOf(route: unknown): readonly RawRule[] {
  return ((route as { spec?: { rules?: RawRule[] } } | undefined)?.spec?.rules ?? []);
}

/** The backends of rule `rule` in order (rule 0 is the one rayshift's own routes have). */
export function routeBackends(route: unknown, rule = 0): RouteBackend[] {
  return (rulesOf(route)[rule]?.backendRefs ?? []).map((b) => ({ name: b.name, weight: b.weight ?? 1 }));
}

/**
 * The weight of each named backend, looked up in every rule of the route: undefined when no rule
 * lists it. Throws when two rules give one backend different weights (rayshift writes the same
 * weight into every rule it manages), so a test cannot read one rule and miss the other.
 */
export function backendWeights(route: unknown, names: readonly string[]): (number | undefined)[] {
  return names.map((name) => {
    const seen = new Set(rulesOf(route).flatMap((r) => (r.backendRefs ?? []).filter((b) => b.name === name).map((b) => b.weight ?? 1)));
    if (seen.size > 1) throw new Error(`backend ${name} has different weights in the route's rules: ${[...seen].join(', ')}`);
    return seen.values().next().value;
  });
}
