import { rbgFastestAndSlowest, rbgSkewCheck } from './rbg-skew-check';

const role = (name: string, desired: number, updatedReplicas: number) => ({ name, desired, updatedReplicas });
const names = (pair: ReturnType<typeof rbgFastestAndSlowest>) => pair && [pair.fastest.name, pair.slowest.name];

test('the fastest and slowest role as getFastestAndSlowestRole picks them: by updated/desired, a tie within 1e-6 puts the larger role as slowest', () => {
  expect(names(rbgFastestAndSlowest([role('p', 10, 5), role('d', 5, 1)]))).toEqual(['p', 'd']);
  expect(names(rbgFastestAndSlowest([role('p', 10, 5), role('d', 20, 10)]))).toEqual(['p', 'd']);
  expect(names(rbgFastestAndSlowest([role('d', 20, 10), role('p', 10, 5)]))).toEqual(['p', 'd']);
  expect(names(rbgFastestAndSlowest([role('p', 10, 1), role('d', 10, 5), role('e', 10, 9)]))).toEqual(['e', 'p']);
  expect(rbgFastestAndSlowest([role('p', 10, 1)])).toBeUndefined();
  expect(rbgFastestAndSlowest([])).toBeUndefined();
});

test('the check compares ceil(10000 · ratio difference) with the bias of the smallest role plus maxSkew, in basis points', () => {
  // 12/6 at maxSkew 10 %: bias ceil(10000/6) = 1667, + 1000 = 2667; 6/12 − 1/6 = 1/3 → 3334.
  expect(rbgSkewCheck(10, [role('prefill', 12, 6), role('decode', 6, 1)])).toEqual({ ok: false, skew: 3334, allowed: 2667 });
  // 4/12 − 1/6 = 1/6 → 1667 (float64: 0.33333… − 0.16666… rounds up past 1666.67).
  expect(rbgSkewCheck(10, [role('prefill', 12, 4), role('decode', 6, 1)])).toEqual({ ok: true, skew: 1667, allowed: 2667 });
  // One role: no pair to compare; the bias is ceil(10000/12) = 834, + 1000.
  expect(rbgSkewCheck(10, [role('prefill', 12, 4)])).toEqual({ ok: true, skew: 0, allowed: 1834 });
});
