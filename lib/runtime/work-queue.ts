/**
 * A keyed work queue for controllers: each key is reconciled by at most one worker at a time,
 * a key added while it is queued is not queued twice, a key added while it is being reconciled
 * runs once more afterwards, and `addAt(key, time)` wakes a key at an exact time through one
 * timer for the earliest due key (a min-heap of due times; no polling, no per-key intervals).
 * A key woken at its due time goes ahead of keys queued by events: when hundreds of services are
 * busy, the one whose traffic step is due is not kept waiting behind their echoes.
 */
import { backoffDelay } from './kube/retry';

/** What the queue calls for each key; a rejection is reported and the key retried with backoff. */
export type Reconcile = (key: string) => Promise<void>;

/** Options of a `WorkQueue`. */
export interface WorkQueueOptions {
  /** Keys reconciled at once. @default 4 */
  readonly concurrency?: number;
  /** First retry delay after a failure, ms; doubles per consecutive failure. @default 500 */
  readonly retryBaseMs?: number;
  /** Longest retry delay, ms. @default 30000 */
  readonly retryMaxMs?: number;
  /** Called when a reconcile fails (before the retry is scheduled). */
  readonly onError?: (key: string, err: unknown, attempt: number) => void;
  /** The clock, for tests. @default Date.now */
  readonly now?: () => number;
}

interface Due {
  key: string;
  at: number;
}

/** See the file comment. */
export class WorkQueue {
  private readonly ready: string[] = [];
  /** Keys woken at their due time; taken before `ready`. */
  private readonly dueReady: string[] = [];
  /** Keys whose next run was asked for by a due time (queued in `dueReady`, or running and to re-run first). */
  private readonly urgent = new Set<string>();
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly heap: Due[] = [];
  private readonly dueAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];
  private settleWaiters: { matches: (key: string) => boolean; resolve: () => void }[] = [];
  private readonly concurrency: number;
  private readonly now: () => number;

  constructor(
    private readonly reconcile: Reconcile,
    private readonly options: WorkQueueOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 4;
    this.now = options.now ?? Date.now;
  }

  /** Queues `key` now. */
  add(key: string): void {
    this.enqueue(key, false);
  }

  private enqueue(key: string, due: boolean): void {
    if (this.stopped) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      if (due) this.urgent.add(key);
      return;
    }
    if (due && !this.urgent.has(key)) {
      this.urgent.add(key);
      this.dueReady.push(key); // an entry of the key left in `ready` is skipped when reached
    } else if (this.queued.has(key)) {
      return;
    } else {
      this.ready.push(key);
    }
    this.queued.add(key);
    this.pump();
  }

  /** Queues `key` at `at` (epoch ms); an earlier wake-up for the same key wins, a later one is ignored. */
  addAt(key: string, at: number): void {
    if (this.stopped) return;
    if (at <= this.now()) {
      this.add(key);
      return;
    }
    const current = this.dueAt.get(key);
    if (current !== undefined && current <= at) return;
    this.dueAt.set(key, at);
    this.push({ key, at });
    this.arm();
  }

  /**
   * Queues now every key waiting out a failure's backoff (their failure counts stay): for when the
   * cause has gone away, e.g. the API server answers again after a restart.
   */
  retryFailedNow(): void {
    for (const key of this.failures.keys()) {
      if (this.active.has(key)) continue;
      this.dueAt.delete(key); // its backoff entry in the heap is skipped when it fires
      this.add(key);
    }
  }

  /** True once `stop()` was called. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Keys queued, being reconciled or waiting for a due time. */
  get size(): number {
    return new Set([...this.queued, ...this.active, ...this.dueAt.keys()]).size;
  }

  /** Resolves once nothing is queued or running (due wake-ups may remain). */
  idle(): Promise<void> {
    if (this.queued.size === 0 && this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Resolves once no key that `matches` is being reconciled; keys queued meanwhile still run (a
   * caller that gives keys up keeps them out itself, e.g. a reconcile that skips keys it no longer owns).
   */
  settled(matches: (key: string) => boolean): Promise<void> {
    if (![...this.active].some(matches)) return Promise.resolve();
    return new Promise((resolve) => this.settleWaiters.push({ matches, resolve }));
  }

  /** Stops taking work and cancels the timer; running reconciles finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.ready.length = 0;
    this.dueReady.length = 0;
    this.urgent.clear();
    this.queued.clear();
    await this.idle();
  }

  private pump(): void {
    while (!this.stopped && this.active.size < this.concurrency && this.queued.size > 0) {
      const key = (this.dueReady.length > 0 ? this.dueReady : this.ready).shift()!;
      if (!this.queued.delete(key)) continue; // already taken through the other list
      this.urgent.delete(key);
      this.active.add(key);
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    try {
      await this.reconcile(key);
      this.failures.delete(key);
    } catch (err) {
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      this.options.onError?.(key, err, attempt);
      const delay = backoffDelay(attempt, { initialMs: this.options.retryBaseMs ?? 500, maxMs: this.options.retryMaxMs ?? 30_000, factor: 2, jitter: 0 });
      this.addAt(key, this.now() + delay);
    } finally {
      this.active.delete(key);
      if (this.dirty.delete(key)) {
        const due = this.urgent.delete(key);
        this.enqueue(key, due);
      }
      this.pump();
      if (this.settleWaiters.length > 0) {
        const waiting = this.settleWaiters;
        this.settleWaiters = waiting.filter((w) => [...this.active].some(w.matches));
        for (const w of waiting) if (!this.settleWaiters.includes(w)) w.resolve();
      }
      if (this.queued.size === 0 && this.active.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }

  private arm(): void {
    const next = this.heap[0];
    if (!next || next.at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next.at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, next.at - this.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    while (this.heap.length > 0 && this.heap[0].at <= now) {
      const due = this.pop();
      if (this.dueAt.get(due.key) === due.at) {
        this.dueAt.delete(due.key);
        this.enqueue(due.key, true);
      }
    }
    this.arm();
  }

  private push(item: Due): void {
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent].at <= h[i].at) break;
      [h[parent], h[i]] = [h[i], h[parent]];
      i = parent;
    }
  }

  private pop(): Due {
    const h = this.heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l].at < h[m].at) m = l;
        if (r < h.length && h[r].at < h[m].at) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }
}
