/**
 * A small map whose entries expire after a fixed time and whose size is bounded (the oldest entry
 * goes first). Used for TokenReview and SubjectAccessReview answers, keyed by hashes, never by tokens.
 */
export class ExpiringCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();

  /**
   * @param ttlMs how long an entry is served
   * @param maxEntries the most entries kept
   * @param now the clock (epoch ms)
   */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The live value under `key`, or undefined. */
  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /** Forgets the entry under `key`, if any. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Stores `value` under `key` for the cache's time to live. */
  set(key: string, value: V): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }
}
