/**
 * The analysis the RBG cluster test reads its verdicts from, on one run it recorded
 * (`rbg-coordinated-pd-5-3.states.json`: prefill 5 and decode 3 at maxSkew 20%, revisions renamed).
 * In it RBG releases all of decode from stale counts (state 9); decode's status shows the three
 * replicas updated only at state 22, under partition 1; and RBG writes partition 0 again from the
 * true counts at state 26, when nothing is left to release.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CoordinatedCase, midRoundWrites, partitionWrites, skewExcesses, staleOnlyWrites } from './rbg-coordinated-analysis';
import { GroupState } from './rbg-workload-recorder';

const CASE: CoordinatedCase = { name: 'pd-5-3', replicas: { prefill: 5, decode: 3 }, maxSkewPercent: 20, maxUnavailable: 1 };
const states: GroupState[] = JSON.parse(fs.readFileSync(path.join(__dirname, 'rbg-coordinated-pd-5-3.states.json'), 'utf8'));
const writes = partitionWrites(states, ['decode', 'prefill']);

test('decode\'s writes after the first: only stale counts explain the release at 9 and the hold at 29', () => {
  expect(writes.filter((w) => w.role === 'decode' && w.at > 0).map((w) => [w.at, w.partition])).toEqual([[7, 2], [9, 0], [19, 1], [26, 0], [29, 1], [34, 0]]);
  expect(staleOnlyWrites(states, writes, CASE).filter((w) => w.role === 'decode').map((w) => w.at)).toEqual([9, 29]);
});

test('every state over the bound is blamed on the release under which decode\'s replicas were updated, not on a later write that released nothing', () => {
  const excesses = skewExcesses(states, writes, CASE);
  expect(excesses.map((e) => [e.at, e.role, e.updated])).toEqual([22, 23, 24, 25, 26].map((at) => [at, 'decode', 3]));
  expect(new Set(excesses.map((e) => e.release))).toEqual(new Set([writes.find((w) => w.role === 'decode' && w.at === 9)]));
});

describe('a run where RBG read a state mid-round (`rbg-coordinated-pd-4-2.states.json`: prefill 4 and decode 2 at maxSkew 50%, the CI run of 28 November 2026 that failed the round-by-round check)', () => {
  const CASE_4_2: CoordinatedCase = { name: 'pd-4-2', replicas: { prefill: 4, decode: 2 }, maxSkewPercent: 50, maxUnavailable: 1 };
  const run: GroupState[] = JSON.parse(fs.readFileSync(path.join(__dirname, 'rbg-coordinated-pd-4-2.states.json'), 'utf8'));
  const runWrites = partitionWrites(run, ['decode', 'prefill']);

  test('prefill goes 0 → 3 where the plan goes 0 → 2; no stale count explains it, a state read mid-round does (prefill 1/4 and decode 1/2 updated)', () => {
    expect(runWrites.filter((w) => w.role === 'prefill').map((w) => [w.at, w.partition])).toEqual([[0, 0], [8, 3], [13, 2], [21, 1], [32, 0]]);
    expect(staleOnlyWrites(run, runWrites, CASE_4_2)).toEqual([]);
    // Only in-flight states give prefill 3 (and the other writes listed); decode's 0 at 28 and prefill's 1 at 21 also follow from a settled state.
    expect(midRoundWrites(run, runWrites, CASE_4_2).map((w) => [w.role, w.at, w.partition])).toEqual([['decode', 7, 1], ['prefill', 8, 3], ['prefill', 13, 2], ['prefill', 32, 0]]);
  });
});
