/**
 * A token bucket per client address, drained by refused tokens only: a flood of new garbage tokens
 * from one address then costs a bounded number of TokenReviews (`burst`, then `perSecond`), while
 * callers whose tokens pass, and other addresses, are not slowed.
 */

/** Options of `FailureLimiter`. */
export interface FailureLimiterOptions {
  /** Failures an address may have before it is limited; default 20. */
  readonly burst?: number;
  /** Failures per second an address regains; default 1. */
  readonly perSecond?: number;
  /** Addresses tracked at once (the least recently failed is forgotten first); default 10 000. */
  readonly maxAddresses?: number;
  /** The clock (epoch ms). */
  readonly now?: () => number;
}

/** Counts failed authentications per address. */
export class FailureLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #burst: number;
  readonly #perMs: number;
  readonly #maxAddresses: number;
  readonly #now: () => number;

  constructor(opts: FailureLimiterOptions = {}) {
    this.#burst = opts.burst ?? 20;
    this.#perMs = (opts.perSecond ?? 1) / 1000;
    this.#maxAddresses = opts.maxAddresses ?? 10_000;
    this.#now = opts.now ?? Date.now;
  }

  /** Whether `address` may have another token reviewed. */
  allows(address: string): boolean {
    return this.#tokens(address) >= 1;
  }

  /** Records a refused token from `address`. */
  fail(address: string): void {
    const tokens = this.#tokens(address) - 1;
    this.#buckets.delete(address);
    if (this.#buckets.size >= this.#maxAddresses) this.#buckets.delete(this.#buckets.keys().next().value as string);
    this.#buckets.set(address, { tokens, at: this.#now() });
  }

  #tokens(address: string): number {
    const b = this.#buckets.get(address);
    if (!b) return this.#burst;
    return Math.min(this.#burst, b.tokens + (this.#now() - b.at) * this.#perMs);
  }
}
