/** Retrying on optimistic-concurrency conflicts, and the exponential backoff used across the client. */
import { isConflict } from './errors';

/** Exponential backoff with jitter. */
export interface BackoffOptions {
  /** First delay in ms; default 10 (for `retryOnConflict`). */
  readonly initialMs?: number;
  /** Multiplier per attempt; default 2. */
  readonly factor?: number;
  /** Upper bound of one delay in ms; default 1 000. */
  readonly maxMs?: number;
  /** Random spread as a fraction of the delay (0.1 = ±10 %); default 0.1. */
  readonly jitter?: number;
}

/** Options of `retryOnConflict`. */
export interface RetryOnConflictOptions {
  /** Total attempts including the first; default 5 (client-go's `DefaultRetry`). */
  readonly attempts?: number;
  /** Backoff between attempts: options, or a function of the attempt number (1 = after the first failure). */
  readonly backoff?: BackoffOptions | ((attempt: number) => number);
  /** Sleeps `ms` (injectable for tests); default a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Which refusals a fresh read can fix, hence are retried; default a 409 `Conflict`. A JSON patch
   * guarded by `test` ops passes `isPatchConflict` (the engine's rule, which also takes a failed `test`).
   */
  readonly isConflict?: (e: unknown) => boolean;
}

/** The delay before retry number `attempt` (1-based) under `opts`. */
export function backoffDelay(attempt: number, opts: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = opts.initialMs ?? 10;
  const factor = opts.factor ?? 2;
  const max = opts.maxMs ?? 1_000;
  const jitter = opts.jitter ?? 0.1;
  const base = Math.min(max, initial * Math.pow(factor, Math.max(0, attempt - 1)));
  return Math.max(0, Math.round(base * (1 + jitter * (2 * random() - 1))));
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Runs `fn` (which must re-read the object and redo its change each time) until it does not throw a
 * conflict (`opts.isConflict`, default a 409 `Conflict` `KubeApiError`), at most `attempts` times;
 * other errors, and the last conflict, are rethrown. `fn` receives the attempt number (1-based). The
 * one retry loop of the runtime's re-reading writers; `backoffDelay` is its (and the informer's and
 * work queue's) one backoff.
 */
export async function retryOnConflict<T>(fn: (attempt: number) => Promise<T>, opts: RetryOnConflictOptions = {}): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 5);
  const wait = opts.sleep ?? sleep;
  const conflict = opts.isConflict ?? isConflict;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      if (!conflict(e) || attempt >= attempts) throw e;
      const b = opts.backoff;
      const ms = typeof b === 'function' ? b(attempt) : backoffDelay(attempt, b);
      if (ms > 0) await wait(ms);
    }
  }
}
