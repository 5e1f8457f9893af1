/**
 * Whether a route (and its Gateway) is ready to carry a traffic step, the way Flagger checks it
 * and KubeRay does not: every parentRef must have a `status.parents[]` entry whose `Accepted` and
 * `ResolvedRefs` are True for the route's current `metadata.generation`. A condition stamped with
 * an older `observedGeneration` (or none) describes an older spec, so it counts as not ready.
 */
import { asArray, asObject, isInteger } from '../../spec/read';
import { GATEWAY_API_GROUP } from './types';

/** Readiness of one parentRef of a route. */
export interface ParentReadiness {
  /** `Gateway ns/name[/section][:port]`. */
  readonly parent: string;
  /** Accepted and ResolvedRefs are True for the current generation. */
  readonly ready: boolean;
  /** Why not (empty when ready). */
  readonly reasons: readonly string[];
}

/** Result of `routeReadiness`. */
export interface RouteReadiness {
  /** Every parent and every Gateway given is ready. */
  readonly ready: boolean;
  /** Every reason, each naming the parent (or Gateway) and the condition. */
  readonly reasons: readonly string[];
  /** Per parentRef, in `spec.parentRefs` order. */
  readonly parents: readonly ParentReadiness[];
}

const ROUTE_CONDITIONS = ['Accepted', 'ResolvedRefs'] as const;
const GATEWAY_CONDITIONS = ['Accepted', 'Programmed'] as const;

function describeParent(ref: Record<string, unknown>, routeNs: string | undefined): string {
  const kind = typeof ref.kind === 'string' ? ref.kind : 'Gateway';
  const ns = typeof ref.namespace === 'string' ? ref.namespace : routeNs ?? '';
  const section = typeof ref.sectionName === 'string' ? `/${ref.sectionName}` : '';
  const port = isInteger(ref.port) ? `:${ref.port}` : '';
  return `${kind} ${ns}/${String(ref.name)}${section}${port}`;
}

/** True when a `status.parents[].parentRef` is the same parent as a `spec.parentRefs[]` entry (defaults applied). */
export function sameParent(a: unknown, b: unknown, routeNs: string | undefined): boolean {
  const x = asObject(a);
  const y = asObject(b);
  const group = (r: Record<string, unknown>) => (typeof r.group === 'string' ? r.group : GATEWAY_API_GROUP);
  const kind = (r: Record<string, unknown>) => (typeof r.kind === 'string' ? r.kind : 'Gateway');
  const ns = (r: Record<string, unknown>) => (typeof r.namespace === 'string' ? r.namespace : routeNs);
  return (
    x.name === y.name &&
    group(x) === group(y) &&
    kind(x) === kind(y) &&
    ns(x) === ns(y) &&
    (x.sectionName ?? undefined) === (y.sectionName ?? undefined) &&
    (x.port ?? undefined) === (y.port ?? undefined)
  );
}

/** Problems of a condition list for `types` at `generation`; empty when all are True and current. */
function conditionProblems(conditions: unknown, types: readonly string[], generation: unknown): string[] {
  const list = asArray(conditions).map(asObject);
  const out: string[] = [];
  for (const type of types) {
    const c = list.find((x) => x.type === type);
    if (c === undefined) {
      out.push(`condition ${type} is missing`);
      continue;
    }
    if (c.status !== 'True') {
      const why = [c.reason, c.message].filter((s) => typeof s === 'string' && s !== '').join(': ');
      out.push(`condition ${type} is ${String(c.status)}${why ? ` (${why})` : ''}`);
      continue;
    }
    if (isInteger(generation)) {
      if (!isInteger(c.observedGeneration)) {
        out.push(`condition ${type} has no observedGeneration, so it may describe an older spec than generation ${generation} (stale)`);
      } else if (c.observedGeneration < generation) {
        out.push(`condition ${type} is for generation ${c.observedGeneration}, older than metadata.generation ${generation} (stale)`);
      }
    }
  }
  return out;
}

/**
 * Readiness of a route for a traffic step: for each `spec.parentRefs[]` entry, some
 * `status.parents[]` entry for that parent (any controller) has `Accepted=True` and
 * `ResolvedRefs=True` with `observedGeneration ≥ metadata.generation`. With `gateways`, each must
 * also have `Accepted=True` and `Programmed=True` for its own generation. A route without
 * parentRefs is never ready. Reasons read like
 * `parent Gateway ns/gw: condition ResolvedRefs is False (BackendNotFound: service "x" not found)`.
 */
export function routeReadiness(route: unknown, gateways?: unknown | readonly unknown[]): RouteReadiness {
  const r = asObject(route);
  const meta = asObject(r.metadata);
  const routeNs = typeof meta.namespace === 'string' ? meta.namespace : undefined;
  const refs = asArray(asObject(r.spec).parentRefs).map(asObject);
  const statuses = asArray(asObject(r.status).parents).map(asObject);
  const reasons: string[] = [];
  const parents: ParentReadiness[] = refs.map((ref) => {
    const parent = describeParent(ref, routeNs);
    const entries = statuses.filter((s) => sameParent(s.parentRef, ref, routeNs));
    let problems: string[];
    if (entries.length === 0) {
      problems = ['no status.parents entry yet (no controller has processed the route for this parent)'];
    } else {
      const perEntry = entries.map((e) => {
        const ctrl = typeof e.controllerName === 'string' ? `controller ${e.controllerName}: ` : '';
        return conditionProblems(e.conditions, ROUTE_CONDITIONS, meta.generation).map((p) => `${ctrl}${p}`);
      });
      problems = perEntry.some((p) => p.length === 0) ? [] : perEntry.flat();
    }
    const prefixed = problems.map((p) => `parent ${parent}: ${p}`);
    reasons.push(...prefixed);
    return { parent, ready: problems.length === 0, reasons: prefixed };
  });
  if (refs.length === 0) reasons.push(`${String(r.kind ?? 'route')} ${routeNs ?? ''}/${String(meta.name ?? '')}: spec.parentRefs is empty, so no Gateway serves it`);

  const gatewayList = gateways === undefined ? [] : Array.isArray(gateways) ? gateways : [gateways];
  for (const g of gatewayList) {
    const gw = asObject(g);
    const gm = asObject(gw.metadata);
    const label = `Gateway ${String(gm.namespace ?? '')}/${String(gm.name ?? '')}`;
    for (const p of conditionProblems(asObject(gw.status).conditions, GATEWAY_CONDITIONS, gm.generation)) reasons.push(`${label}: ${p}`);
  }
  return { ready: reasons.length === 0, reasons, parents };
}
