/**
 * The one loop every Pulumi executor runs during `pulumi up`: a pass, then either the run's result
 * or a sleep until the pass's wake-up time (never past the deadline), and once, at the deadline,
 * the caller's decision. Dynamic providers get no timeouts and no cancel, so the deadline is the
 * loop's own. What a pass does and when a run is settled are the callers' (their rules are the
 * engine's); this module only waits.
 */

/** What one pass found. */
export type DrivePass<T> =
  /** The run is over with this result. */
  | { readonly settled: true; readonly result: T }
  /** Not yet: the next pass is due at `wakeAt` (epoch ms). @default now + pollMs */
  | { readonly settled: false; readonly wakeAt?: number };

/** Settings of `driveUntilSettled`. */
export interface DriveLoopOptions {
  /** When the run must end (epoch ms). */
  readonly deadlineAt: number;
  /** Longest sleep when a pass names no wake-up time, ms. */
  readonly pollMs: number;
  /**
   * Called once, when a pass finds the run unsettled at or after the deadline. Throw to end the run;
   * return to keep driving with no deadline (e.g. while a rollback the deadline started runs).
   */
  readonly onDeadline: () => void | Promise<void>;
  /** The clock. @default Date.now */
  readonly now?: () => number;
  /** Waits `ms`. @default a timer */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Runs `pass` until it settles; see the file comment. */
export async function driveUntilSettled<T>(pass: () => Promise<DrivePass<T>>, options: DriveLoopOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let deadlineAt: number | undefined = options.deadlineAt;
  for (;;) {
    const found = await pass();
    if (found.settled) return found.result;
    const at = now();
    if (deadlineAt !== undefined && at >= deadlineAt) {
      deadlineAt = undefined;
      await options.onDeadline();
      continue;
    }
    const due = Math.min(found.wakeAt ?? at + options.pollMs, deadlineAt ?? Infinity);
    await sleep(Math.max(0, due - at));
  }
}
