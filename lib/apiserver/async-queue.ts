/** A push-to-pull queue: callbacks push, one consumer awaits items with an optional timeout. */

/** What `next` resolves to. */
export type QueueResult<T> = { readonly kind: 'item'; readonly item: T } | { readonly kind: 'end' } | { readonly kind: 'timeout' };

/** An unbounded queue with an end and a failure. */
export class AsyncQueue<T> {
  readonly #items: T[] = [];
  #ended = false;
  #failure: { error: unknown } | undefined;
  #wake: (() => void) | undefined;

  /** Adds an item. */
  push(item: T): void {
    this.#items.push(item);
    this.#wake?.();
  }

  /** Marks the end: `next` returns `end` once the items are drained. */
  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /** Fails: `next` throws `error` once the items are drained. */
  fail(error: unknown): void {
    this.#failure ??= { error };
    this.#wake?.();
  }

  /** The next item, `end`, or `timeout` after `timeoutMs` without one. */
  async next(timeoutMs: number): Promise<QueueResult<T>> {
    for (;;) {
      if (this.#items.length > 0) return { kind: 'item', item: this.#items.shift() as T };
      if (this.#failure) throw this.#failure.error;
      if (this.#ended) return { kind: 'end' };
      const woken = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      this.#wake = undefined;
      if (!woken) return { kind: 'timeout' };
    }
  }
}
