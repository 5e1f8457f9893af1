/**
 * Keeps every distinct state a watch reports, in order, and resolves waits on them without
 * polling: the recorders of the RBG tests (rbg-workload-recorder.ts) build on
 * it. Test support, not the package's API.
 */
export class StateRecorder<S> {
  readonly history: S[] = [];
  private readonly waiters: { check: (s: S) => boolean; resolve: (s: S) => void }[] = [];

  /** `subject` names what is recorded in timeout messages; `timeoutMs` is `until`'s default. */
  constructor(
    private readonly subject: string,
    private readonly timeoutMs: number,
  ) {}

  /** Adds `state` unless it equals the last one, and resolves the waits it satisfies. */
  record(state: S): void {
    const last = this.history[this.history.length - 1];
    if (last !== undefined && JSON.stringify(last) === JSON.stringify(state)) return;
    this.history.push(state);
    for (const w of [...this.waiters]) {
      if (w.check(state)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(state);
      }
    }
  }

  /** Resolves with the first state from index `from` on (past or future) passing `check`; fails naming `what` after `timeoutMs`. */
  until(what: string, check: (s: S) => boolean, timeoutMs = this.timeoutMs, from = 0): Promise<S> {
    const seen = this.history.slice(from).find(check);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.subject}: timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(this.history[this.history.length - 1])}`)), timeoutMs);
      this.waiters.push({ check, resolve: (s) => (clearTimeout(timer), resolve(s)) });
    });
  }

  /** States from index `from` on. */
  since(from: number): S[] {
    return this.history.slice(from);
  }
}
