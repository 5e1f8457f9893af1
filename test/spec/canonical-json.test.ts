import { canonicalJson } from '../../lib/spec/canonical-json';

test('keys are sorted at every level; arrays keep their order', () => {
  expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
  expect(canonicalJson({ a: { c: null, d: [2, 1] }, b: 1 })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
  expect(canonicalJson([{ y: 1, x: 2 }, 'z'])).toBe('[{"x":2,"y":1},"z"]');
});

test('omitNullMembers leaves out null members only; undefined members are always left out', () => {
  expect(canonicalJson({ b: null, a: undefined, c: [null] }, { omitNullMembers: true })).toBe('{"c":[null]}');
  expect(canonicalJson({ b: null, a: undefined })).toBe('{"b":null}');
});
