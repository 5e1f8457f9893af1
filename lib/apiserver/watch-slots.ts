/**
 * A per-caller cap on concurrent watches. Each upgrade watch holds a Kubernetes watch opened as the
 * caller and costs a TokenReview per re-check, so one caller (one token, or many tokens of one user)
 * must not be able to open them without bound; another caller's watches are counted apart.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Caller } from './auth/caller';

/** Counts the open watches of each caller, up to `max` each. */
export class WatchSlots {
  readonly #open = new Map<string, number>();

  /** @param max watches one caller may have open at once (`--max-watches-per-caller`) */
  constructor(private readonly max: number) {}

  /**
   * Takes one of `caller`'s slots and returns its release (idempotent); RESOURCE_EXHAUSTED, naming
   * the caller's count and the limit, when they already have `max` open.
   */
  acquire(caller: Caller): () => void {
    const open = this.#open.get(caller.username) ?? 0;
    if (open >= this.max) {
      throw new ConnectError(`${caller.username} already has ${open} watches open, the limit of --max-watches-per-caller (${this.max}); close one first`, Code.ResourceExhausted);
    }
    this.#open.set(caller.username, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(caller.username) ?? 1) - 1;
      if (left === 0) this.#open.delete(caller.username);
      else this.#open.set(caller.username, left);
    };
  }
}
