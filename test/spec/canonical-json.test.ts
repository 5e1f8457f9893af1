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

/** The definition this module's text must keep to the byte: JSON.stringify with every object copied sorted by key. */
function replacerCanonical(value: unknown, omitNullMembers = false): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const members = Object.entries(v as Record<string, unknown>).filter(([, m]) => !(omitNullMembers && m === null));
    return Object.fromEntries(members.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  });
}

test('the text is that of JSON.stringify over copies sorted by key, to the byte (stored spec hashes depend on it)', () => {
  const cases: unknown[] = [
    { '10': 1, '2': 2, b: 3, '01': 4, a: 5, '-1': 6, '4294967295': 7, '4294967294': 8, 'é': 9, Z: 10 },
    { when: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), f: () => 1, s: Symbol('x'), u: undefined, n: NaN, i: -Infinity, z: -0, e: 1e21, x: 0.1 },
    [undefined, () => 1, null, { b: [{ d: 1, c: '\u2028"\\\n' }], a: true }],
    { nested: { toJSON: () => ({ y: 1, x: { '3': 'c', '1': 'a' } }) } },
    'plain',
    42,
    null,
  ];
  for (const c of cases) {
    expect(canonicalJson(c)).toBe(replacerCanonical(c));
    expect(canonicalJson(c, { omitNullMembers: true })).toBe(replacerCanonical(c, true));
  }
});
