/**
 * The two prefill/decode group shapes the rollback suites run on the test cluster, under the
 * operator (cluster-rbg-analysis) and under executor `pulumi` (cluster-pulumi-rbg-rollback).
 */

/** A group's size and rolling-update bounds. */
export interface PdShape {
  readonly replicas: Readonly<Record<'prefill' | 'decode', number>>;
  readonly maxSkewPercent: number;
  /** The coordination's `rollingUpdate.maxUnavailable` as the construct takes it. */
  readonly maxUnavailableSpec: number | string;
  /** Per role, the count that resolves to. */
  readonly maxUnavailable: Readonly<Record<string, number>>;
}

/**
 * 4 prefill / 2 decode at maxSkew 1%, one replica of each role at a time: rounds of 2 prefill and
 * 1 decode. A looser skew lets the first round release every replica (each workload's own
 * maxUnavailable paces it), and once every pod is updated RBG makes the new revision current:
 * nothing is left to gate or to roll back to.
 */
export const SMALL_PD: PdShape = { replicas: { prefill: 4, decode: 2 }, maxSkewPercent: 1, maxUnavailableSpec: 1, maxUnavailable: { prefill: 1, decode: 1 } };

/** 40 prefill / 20 decode at maxSkew 10%, maxUnavailable 10% (4 prefill, 2 decode). */
export const LARGE_PD: PdShape = { replicas: { prefill: 40, decode: 20 }, maxSkewPercent: 10, maxUnavailableSpec: '10%', maxUnavailable: { prefill: 4, decode: 2 } };
