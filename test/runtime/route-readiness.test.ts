/** routeReadiness: parents Accepted/ResolvedRefs for the current generation, Gateways Accepted/Programmed, and reasons that name them. */
import { routeReadiness, sameParent } from '../../lib/runtime/route/readiness';

const cond = (type: string, status: string, observedGeneration?: number, reason = type, message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  ...(observedGeneration !== undefined ? { observedGeneration } : {}),
});

function route(generation: number, parents: any[], parentRefs: any[] = [{ name: 'gw' }]): any {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'llm-httproute', namespace: 'serving', generation },
    spec: { parentRefs, rules: [] },
    status: { parents },
  };
}

const parentStatus = (ref: any, conditions: any[], controllerName = 'traefik.io/gateway-controller') => ({ parentRef: ref, controllerName, conditions });

function gateway(generation: number, conditions: any[]): any {
  return { kind: 'Gateway', metadata: { name: 'gw', namespace: 'serving', generation }, status: { conditions } };
}

describe('routeReadiness', () => {
  test('ready when the parent has Accepted and ResolvedRefs True for the current generation (defaults of the status parentRef filled in)', () => {
    const r = route(3, [parentStatus({ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'serving' }, [cond('Accepted', 'True', 3), cond('ResolvedRefs', 'True', 4)])]);
    expect(routeReadiness(r)).toEqual({ ready: true, reasons: [], parents: [{ parent: 'Gateway serving/gw', ready: true, reasons: [] }] });
  });

  test('no status yet', () => {
    const res = routeReadiness(route(1, []));
    expect(res.ready).toBe(false);
    expect(res.reasons).toEqual(['parent Gateway serving/gw: no status.parents entry yet (no controller has processed the route for this parent)']);
  });

  test('a False condition is reported with its reason and message', () => {
    const r = route(2, [parentStatus({ name: 'gw' }, [cond('Accepted', 'True', 2), cond('ResolvedRefs', 'False', 2, 'BackendNotFound', 'service "llm-bbbbb-serve-svc" not found')])]);
    expect(routeReadiness(r).reasons).toEqual([
      'parent Gateway serving/gw: controller traefik.io/gateway-controller: condition ResolvedRefs is False (BackendNotFound: service "llm-bbbbb-serve-svc" not found)',
    ]);
  });

  test('stale status (observedGeneration behind metadata.generation, or missing) is not ready', () => {
    const stale = routeReadiness(route(5, [parentStatus({ name: 'gw' }, [cond('Accepted', 'True', 4), cond('ResolvedRefs', 'True', 5)])]));
    expect(stale.ready).toBe(false);
    expect(stale.reasons).toEqual(['parent Gateway serving/gw: controller traefik.io/gateway-controller: condition Accepted is for generation 4, older than metadata.generation 5 (stale)']);
    const unstamped = routeReadiness(route(5, [parentStatus({ name: 'gw' }, [cond('Accepted', 'True'), cond('ResolvedRefs', 'True', 5)])]));
    expect(unstamped.reasons[0]).toMatch(/condition Accepted has no observedGeneration.*\(stale\)/);
  });

  test('a missing condition is named', () => {
    expect(routeReadiness(route(1, [parentStatus({ name: 'gw' }, [cond('Accepted', 'True', 1)])])).reasons).toEqual([
      'parent Gateway serving/gw: controller traefik.io/gateway-controller: condition ResolvedRefs is missing',
    ]);
  });

  test('every parentRef must be ready; entries match on namespace, sectionName and port', () => {
    const refs = [{ name: 'gw', sectionName: 'http' }, { name: 'shared', namespace: 'gateways', port: 443 }];
    const ok = [cond('Accepted', 'True', 1), cond('ResolvedRefs', 'True', 1)];
    const r = route(1, [parentStatus({ name: 'gw', sectionName: 'http' }, ok), parentStatus({ name: 'shared', namespace: 'gateways', port: 80 }, ok)], refs);
    const res = routeReadiness(r);
    expect(res.parents.map((p) => [p.parent, p.ready])).toEqual([
      ['Gateway serving/gw/http', true],
      ['Gateway gateways/shared:443', false],
    ]);
    expect(res.reasons).toEqual(['parent Gateway gateways/shared:443: no status.parents entry yet (no controller has processed the route for this parent)']);
    expect(sameParent({ name: 'gw', namespace: 'serving' }, { name: 'gw' }, 'serving')).toBe(true);
    expect(sameParent({ name: 'gw', sectionName: 'a' }, { name: 'gw' }, 'serving')).toBe(false);
    expect(sameParent({ name: 'gw', kind: 'ListenerSet' }, { name: 'gw' }, 'serving')).toBe(false);
  });

  test('with two controllers on one parent, one complete entry is enough', () => {
    const r = route(1, [
      parentStatus({ name: 'gw' }, [cond('Accepted', 'False', 1, 'NotAllowedByListeners')], 'other.io/controller'),
      parentStatus({ name: 'gw' }, [cond('Accepted', 'True', 1), cond('ResolvedRefs', 'True', 1)]),
    ]);
    expect(routeReadiness(r).ready).toBe(true);
  });

  test('Gateways must be Accepted and Programmed for their own generation', () => {
    const r = route(1, [parentStatus({ name: 'gw' }, [cond('Accepted', 'True', 1), cond('ResolvedRefs', 'True', 1)])]);
    expect(routeReadiness(r, gateway(2, [cond('Accepted', 'True', 2), cond('Programmed', 'True', 2)])).ready).toBe(true);
    const pending = routeReadiness(r, [gateway(2, [cond('Accepted', 'True', 2), cond('Programmed', 'False', 2, 'Pending', 'waiting for an address')])]);
    expect(pending.reasons).toEqual(['Gateway serving/gw: condition Programmed is False (Pending: waiting for an address)']);
    expect(routeReadiness(r, gateway(3, [cond('Accepted', 'True', 2), cond('Programmed', 'True', 3)])).reasons).toEqual([
      'Gateway serving/gw: condition Accepted is for generation 2, older than metadata.generation 3 (stale)',
    ]);
  });

  test('a route without parentRefs is never ready', () => {
    const res = routeReadiness(route(1, [], []));
    expect(res).toEqual({ ready: false, reasons: ['HTTPRoute serving/llm-httproute: spec.parentRefs is empty, so no Gateway serves it'], parents: [] });
  });

  test('GRPCRoute status has the same shape', () => {
    const r = { ...route(1, [parentStatus({ name: 'gw' }, [cond('Accepted', 'True', 1), cond('ResolvedRefs', 'True', 1)])]), kind: 'GRPCRoute' };
    expect(routeReadiness(r).ready).toBe(true);
  });
});
