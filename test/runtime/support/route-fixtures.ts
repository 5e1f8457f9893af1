/**
 * Shared fixtures of the route-weight-patch, route-read-build and route-write tests: a shared
 * HTTPRoute as a platform team owns it, backends as the API server stores them, and an independent
 * RFC 6902 applier (fast-json-patch, through cdk8s's JsonPatch) that every patch is checked against
 * next to rayshift's own.
 */
import { JsonPatch } from 'cdk8s';
import { applyTestJsonPatch } from '../../support/json-patch';
import { JsonPatchOp } from '../../../lib/runtime/route/types';

/** Applies ops with fast-json-patch (cdk8s's JsonPatch), not rayshift's own applier; throws when a `test` fails. */
export function applyRfc6902<T>(doc: T, ops: readonly JsonPatchOp[]): T {
  const patches = ops.map((o) => {
    switch (o.op) {
      case 'test':
        return JsonPatch.test(o.path, o.value);
      case 'replace':
        return JsonPatch.replace(o.path, o.value);
      case 'add':
        return JsonPatch.add(o.path, o.value);
      case 'remove':
        return JsonPatch.remove(o.path);
    }
  });
  return JsonPatch.apply(structuredClone(doc), ...patches) as T;
}

/** A deep copy. */
export function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Backend as the API server stores it (group/kind defaulted). */
export function backend(name: string, weight?: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { group: '', kind: 'Service', name, port: 8000, ...(weight !== undefined ? { weight } : {}), ...extra };
}

/**
 * A shared HTTPRoute as a platform team would own it: hostnames, an unmanaged admin rule with a
 * header match and a filter before the service's rule, the service's rule with its own filter,
 * an unmanaged backend and the active cluster, and an unmanaged redirect rule after it.
 */
export function sharedHttpRoute(): any {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'llm', namespace: 'serving', generation: 4, resourceVersion: '812', labels: { team: 'platform' }, annotations: { note: 'shared' } },
    spec: {
      parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'shared', namespace: 'gateways', sectionName: 'https' }],
      hostnames: ['llm.example.com'],
      rules: [
        {
          name: 'admin',
          matches: [{ path: { type: 'PathPrefix', value: '/admin' }, headers: [{ type: 'Exact', name: 'x-admin', value: '1' }] }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-from', value: 'gw' }] } }],
          backendRefs: [backend('admin-svc', 3)],
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'x-served-by', value: 'ray' }] } }],
          timeouts: { request: '30s' },
          backendRefs: [backend('static-svc', 0, { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['cookie'] } }] }), backend('llm-aaaaa-serve-svc', 100)],
        },
        {
          matches: [{ path: { type: 'Exact', value: '/old' } }],
          filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/' }, statusCode: 301 } }],
        },
      ],
    },
  };
}

export const ACTIVE = 'llm-aaaaa-serve-svc';
export const PENDING = 'llm-bbbbb-serve-svc';

/** Applies with both implementations, asserts they agree, returns the result. */
export function apply(route: any, ops: readonly JsonPatchOp[]): any {
  const a = applyRfc6902(route, ops);
  expect(applyTestJsonPatch(route, ops)).toEqual(a);
  return a;
}
