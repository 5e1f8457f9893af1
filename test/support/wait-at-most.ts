/**
 * The test suites' one way to wait: `waitFor` re-checks a condition when something it watches
 * changes (`wake`: an informer's handler, a process' output, a recorder's push) and otherwise at a
 * poll period, and fails naming what it waited for, the last reason it was not met, and any
 * process that died meanwhile. Its timeout is a bound on a failure, never an assertion: no test
 * asserts that something happens within a time. `waitAtMost` bounds a wait on a promise.
 */

/**
 * Waits for `promise` for at most `ms`; resolves true when it settled first. The timer is cleared
 * either way, so a process that stopped sooner does not keep Jest waiting for the full time.
 */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const, () => true as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a check answers: true when met; false, or the reason it is not met yet. */
export type CheckResult = boolean | string;

/** Options of `waitFor`. */
export interface WaitForOptions {
  /** Give up after this long, ms (a bound on a failure, not an assertion). @default 60000 */
  readonly timeoutMs?: number;
  /** Re-check at least this often, ms (with `wake`, only a safety net). @default 50 */
  readonly everyMs?: number;
  /** Subscribes `recheck` to the events that can change the answer; returns the unsubscribe. */
  readonly wake?: (recheck: () => void) => () => void;
  /** Fails the wait at once when this returns a reason (e.g. a process the wait depends on exited). */
  readonly abortIf?: () => string | undefined;
  /** Appended to a failure's message (e.g. log tails). */
  readonly explain?: () => string;
  /** A check that throws counts as not met, its message the reason (a server still starting); else the error ends the wait. @default false */
  readonly retryErrors?: boolean;
}

/**
 * Resolves once `check` is met; a check that throws ends the wait with its error (unless
 * `retryErrors`). `options` may be the timeout in ms, and `everyMs` the poll period.
 */
export async function waitFor(check: () => CheckResult | Promise<CheckResult>, what: string, options: WaitForOptions | number = {}, everyMs?: number): Promise<void> {
  const o: WaitForOptions = typeof options === 'number' ? { timeoutMs: options, everyMs } : options;
  const timeoutMs = o.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let last = 'not checked yet';
  let rechecked: (() => void) | undefined;
  const unsubscribe = o.wake?.(() => rechecked?.());
  const tail = () => (o.explain ? `\n${o.explain()}` : '');
  try {
    for (;;) {
      const aborted = o.abortIf?.();
      if (aborted !== undefined) throw new Error(`${aborted} while waiting for ${what}${tail()}`);
      // Subscribed before the check, so that an event during an async check is not missed.
      const woken = new Promise<void>((resolve) => (rechecked = resolve));
      try {
        const result = await check();
        if (result === true) return;
        last = typeof result === 'string' ? result : 'not met';
      } catch (e) {
        if (!o.retryErrors) throw e;
        last = (e as Error).message;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last}${tail()}`);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(left, o.everyMs ?? 50))))]);
      clearTimeout(timer);
    }
  } finally {
    unsubscribe?.();
  }
}
