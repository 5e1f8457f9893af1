/** The rollback suites' skew oracle in exact arithmetic, against RBG's float64 check (test/support/rbg-skew-check.ts). */
import { withinSkew } from './rbg-rollback-states';
import { rbgSkewCheck } from './rbg-skew-check';

const roles = (prefill: [number, number], decode: [number, number]) => [
  { name: 'prefill', updated: prefill[0], desired: prefill[1] },
  { name: 'decode', updated: decode[0], desired: decode[1] },
];

test('a state exactly at maxSkew + one replica of the smallest role is within it (8/40 and 1/20 at 10%: 15% = 1,000 + 500 basis points)', () => {
  expect(withinSkew(10, roles([8, 40], [1, 20]))).toBe(true);
  // Go's float64 check sees 0.2 − 0.05 as 0.15000000000000002 and rounds it up to 1,501 basis points.
  expect(rbgSkewCheck(10, roles([8, 40], [1, 20]).map((r) => ({ ...r, updatedReplicas: r.updated })))).toMatchObject({ ok: false, skew: 1501, allowed: 1500 });
  // One replica past the bound is over, whichever role is ahead.
  expect(withinSkew(10, roles([9, 40], [1, 20]))).toBe(false);
  expect(withinSkew(10, roles([0, 40], [4, 20]))).toBe(false);
  expect(withinSkew(10, roles([2, 40], [4, 20]))).toBe(true);
});

test('away from the bound the exact check and RBG\'s agree on every state of 4/2 at 1% and 40/20 at 10%', () => {
  for (const [p, d, skew] of [[4, 2, 1], [40, 20, 10]] as const) {
    for (let up = 0; up <= p; up++) {
      for (let ud = 0; ud <= d; ud++) {
        const rbg = rbgSkewCheck(skew, roles([up, p], [ud, d]).map((r) => ({ ...r, updatedReplicas: r.updated })));
        if (Math.abs(rbg.skew - rbg.allowed) <= 1) continue;
        expect({ up, ud, ok: withinSkew(skew, roles([up, p], [ud, d])) }).toEqual({ up, ud, ok: rbg.ok });
      }
    }
  }
});
