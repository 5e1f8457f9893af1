/** The label and namespace index of an informer's cache (lib/runtime/kube/cache-index.ts). */
import { CacheIndex, hasLabels } from '../../lib/runtime/kube/cache-index';
import type { KubeObject } from '../../lib/runtime/kube/types';

function obj(namespace: string | undefined, name: string, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}) } };
}

test('candidates are the keys carrying the rarest label of the selector, within the namespace', () => {
  const index = new CacheIndex();
  index.add('ns/h1', obj('ns', 'h1', { 'ray.io/cluster': 'c1', 'ray.io/node-type': 'head' }));
  index.add('ns/w1', obj('ns', 'w1', { 'ray.io/cluster': 'c1', 'ray.io/node-type': 'worker' }));
  index.add('ns/h2', obj('ns', 'h2', { 'ray.io/cluster': 'c2', 'ray.io/node-type': 'head' }));
  index.add('other/h3', obj('other', 'h3', { 'ray.io/cluster': 'c1', 'ray.io/node-type': 'head' }));
  expect([...index.candidates('ns', { 'ray.io/cluster': 'c1', 'ray.io/node-type': 'head' })].sort()).toEqual(['ns/h1', 'ns/w1']);
  expect([...index.candidates('ns', { 'ray.io/cluster': 'c2', 'ray.io/node-type': 'head' })]).toEqual(['ns/h2']);
  expect([...index.candidates('ns', { 'ray.io/cluster': 'c9' })]).toEqual([]);
  expect([...index.candidates('ns')].sort()).toEqual(['ns/h1', 'ns/h2', 'ns/w1']);
  expect([...index.candidates('other', { 'ray.io/cluster': 'c1' })]).toEqual(['other/h3']);
  expect([...index.candidates('none')]).toEqual([]);
});

test('remove forgets every entry the object was indexed under', () => {
  const index = new CacheIndex();
  const a = obj('ns', 'a', { app: 'x' });
  index.add('ns/a', a);
  index.add('ns/b', obj('ns', 'b', { app: 'y' }));
  index.remove('ns/a', a);
  expect([...index.candidates('ns', { app: 'x' })]).toEqual([]);
  expect([...index.candidates('ns')]).toEqual(['ns/b']);
  index.remove('ns/b', obj('ns', 'b', { app: 'y' }));
  expect([...index.candidates('ns')]).toEqual([]);
  index.clear();
  expect([...index.candidates('ns', { app: 'y' })]).toEqual([]);
});

test('cluster-scoped objects are indexed under the empty namespace', () => {
  const index = new CacheIndex();
  index.add('n1', obj(undefined, 'n1', { zone: 'a' }));
  expect([...index.candidates('', { zone: 'a' })]).toEqual(['n1']);
});

test('hasLabels needs every label with its value', () => {
  const o = obj('ns', 'p', { a: '1', b: '2' });
  expect(hasLabels(o, { a: '1' })).toBe(true);
  expect(hasLabels(o, { a: '1', b: '2' })).toBe(true);
  expect(hasLabels(o, { a: '2' })).toBe(false);
  expect(hasLabels(o, { c: '' })).toBe(false);
  expect(hasLabels(obj('ns', 'q'), {})).toBe(true);
});
