/**
 * The test-side JSON Patch applier (json-patch.ts) on RFC 6902's own examples (appendix A), on the
 * failures kube-apiserver answers 422 for, and against fast-json-patch on the route writer's patches.
 */
import { applyTestJsonPatch, JsonPatchFailure } from './json-patch';
import { applyRfc6902, sharedHttpRoute } from '../runtime/support/route-fixtures';
import { planWeightPatch } from '../../lib/runtime/route/weight-patch';

test("RFC 6902's examples: add a member, insert and append array elements, remove, replace, escaped pointers", () => {
  expect(applyTestJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }])).toEqual({ baz: 'qux', foo: 'bar' });
  expect(applyTestJsonPatch({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }])).toEqual({ foo: ['bar', 'qux', 'baz'] });
  expect(applyTestJsonPatch({ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }])).toEqual({ foo: ['bar', ['abc', 'def']] });
  expect(applyTestJsonPatch({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }])).toEqual({ foo: 'bar' });
  expect(applyTestJsonPatch({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }])).toEqual({ foo: ['bar', 'baz'] });
  expect(applyTestJsonPatch({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }])).toEqual({ baz: 'boo', foo: 'bar' });
  expect(applyTestJsonPatch({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }, { op: 'replace', path: '/~1', value: 1 }])).toEqual({ '/': 1, '~1': 10 });
  expect(applyTestJsonPatch({ baz: 'qux', foo: ['a', 2, 'c'] }, [{ op: 'test', path: '/baz', value: 'qux' }, { op: 'test', path: '/foo/1', value: 2 }])).toEqual({ baz: 'qux', foo: ['a', 2, 'c'] });
});

test('a failed test, a missing member or parent, or an index out of range fails the whole patch and leaves the document alone', () => {
  const doc = { a: { b: [1, 2] }, c: 'x' };
  const bad = [
    [{ op: 'replace', path: '/c', value: 'y' }, { op: 'test', path: '/a/b/0', value: 7 }],
    [{ op: 'replace', path: '/missing', value: 1 }],
    [{ op: 'remove', path: '/a/nope' }],
    [{ op: 'add', path: '/nope/x', value: 1 }],
    [{ op: 'add', path: '/a/b/3', value: 1 }],
    [{ op: 'remove', path: '/a/b/2' }],
    [{ op: 'replace', path: '/a/b/01', value: 1 }],
  ] as const;
  for (const ops of bad) expect(() => applyTestJsonPatch(doc, ops)).toThrow(JsonPatchFailure);
  expect(doc).toEqual({ a: { b: [1, 2] }, c: 'x' });
});

test("agrees with fast-json-patch on the route writer's weight patches of a shared route", () => {
  const route = sharedHttpRoute();
  for (const [a, p] of [[100, 0], [75, 25], [0, 100]] as const) {
    const ops = planWeightPatch(route, [{ name: 'llm-aaaaa-serve-svc', weight: a }, { name: 'llm-bbbbb-serve-svc', weight: p }]);
    expect(ops.length).toBeGreaterThan(0);
    expect(applyTestJsonPatch(route, ops)).toEqual(applyRfc6902(route, ops));
  }
});
