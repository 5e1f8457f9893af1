/** Counting a serve Service's ready endpoints from its EndpointSlices (lib/runtime/rayservice/serve-endpoints.ts). */
import { KubeObject } from '../../lib/runtime/kube/types';
import { readyServeEndpoints } from '../../lib/runtime/rayservice/serve-endpoints';

function slice(name: string, endpoints: unknown[]): KubeObject {
  return { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, namespace: 'llm' }, endpoints } as KubeObject;
}

const endpoint = (pod: string, ready: boolean | undefined, address = '10.0.0.1') => ({ addresses: [address], conditions: ready === undefined ? {} : { ready }, targetRef: { kind: 'Pod', name: pod, uid: `uid-${pod}` } });

test('no slice at all is unobserved; a slice with no ready endpoint is 0', () => {
  expect(readyServeEndpoints([])).toBeUndefined();
  expect(readyServeEndpoints([slice('s', [])])).toBe(0);
  expect(readyServeEndpoints([slice('s', [endpoint('head', false), endpoint('worker', undefined)])])).toBe(0); // ready unset is not ready, as KubeRay counts
});

test('distinct ready Pods: one Pod in an IPv4 and an IPv6 slice counts once', () => {
  const v4 = slice('s-v4', [endpoint('head', true), endpoint('worker', true, '10.0.0.2')]);
  const v6 = slice('s-v6', [endpoint('head', true, 'fd00::1'), endpoint('worker', false, 'fd00::2')]);
  expect(readyServeEndpoints([v4, v6])).toBe(2);
});

test('an endpoint without a targetRef counts by its address', () => {
  expect(readyServeEndpoints([slice('s', [{ addresses: ['10.0.0.9'], conditions: { ready: true } }, { addresses: ['10.0.0.9'], conditions: { ready: true } }])])).toBe(1);
});
