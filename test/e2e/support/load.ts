/**
 * A fixed-rate load generator for the end-to-end tests: it starts `ratePerSecond` requests every
 * second whatever the answers take (an open model, like a real client population: a slow backend
 * cannot slow the offered load down), and counts per second of sending time the requests, the
 * answers per version, the failures and the timeouts. The transport is pluggable: `httpSender`
 * (node:http keep-alive) and `grpcSender` (node:http2 h2c, in grpc-load.ts).
 *
 * Every request is bounded by a timeout and the loop by `durationMs` or `stop()`, and a sender only
 * dials the address it was made for (loopback, or a network namespace the test made).
 */
import * as http from 'node:http';

/** What one request produced. */
export interface SendResult {
  /** True for a successful answer (HTTP 2xx, gRPC status 0) that named a version. */
  readonly ok: boolean;
  /** The version that answered (`x-rayshift-version` / the reply's `version`). */
  readonly version?: string;
  /** The cluster that answered, when the answer names it. */
  readonly cluster?: string;
  /** Why a request failed (status code, error code), for the report. */
  readonly detail?: string;
  /**
   * Epoch ms the request went out on its connection, when the sender knows: later than the call
   * when the client had to wait for a free connection.
   */
  readonly sentAt?: number;
}

/** Sends one request; must settle by itself or reject on `signal`'s abort. */
export type Sender = (signal: AbortSignal) => Promise<SendResult>;

/** Counts of the requests started in one second of the run. */
export interface LoadSecond {
  /** Index of the second since the load started (0-based). */
  readonly second: number;
  /** Requests started. */
  sent: number;
  /** Successful answers. */
  ok: number;
  /** Failed answers or errors (timeouts excluded). */
  failures: number;
  /** Requests without an answer within the timeout. */
  timeouts: number;
  /** Requests that were due but not started because `maxInFlight` requests were outstanding. */
  skipped: number;
  /** Successful answers per version. */
  readonly versions: Record<string, number>;
  /** Failure details and how often each occurred. */
  readonly failureDetails: Record<string, number>;
}

/** Options of `startLoad`. */
export interface LoadOptions {
  /** Requests started per second. */
  readonly ratePerSecond: number;
  /** Per-request timeout, ms. @default 5000 */
  readonly timeoutMs?: number;
  /** Outstanding requests at most; a due request beyond it is counted as skipped. @default 4 × rate */
  readonly maxInFlight?: number;
  /** Stops by itself after this long, ms. @default 30 minutes */
  readonly durationMs?: number;
  /** Keep one `RequestRecord` per request (for windows shorter than a second). @default false */
  readonly recordRequests?: boolean;
}

/** One request, when `recordRequests` is on. */
export interface RequestRecord {
  /** Epoch ms at which the request was due. */
  readonly at: number;
  /**
   * Epoch ms at which it actually went out: when the sender reports it (HTTP: the request got its
   * connection), else when it was handed to the sender. Later than `at` when the event loop was
   * late (a loaded machine) or the client waited for a connection, which matters when telling which
   * route weights a request met.
   */
  sentAt?: number;
  /** The version that answered successfully; undefined for a failure or timeout. */
  version?: string;
  /** Epoch ms at which the answer (or failure) arrived; undefined while outstanding or after a timeout. */
  answeredAt?: number;
}

/** A running load; `stop()` ends it and waits for the outstanding requests. */
export interface RunningLoad {
  /** Per-second counts so far (the last entry may still grow). */
  readonly seconds: readonly LoadSecond[];
  /** Epoch ms at which the load started. */
  readonly startedAt: number;
  /** Every request so far, in the order they were due (empty unless `recordRequests`). */
  readonly requests: readonly RequestRecord[];
  /** The second index that `at` (epoch ms) falls in. */
  secondAt(at: number): number;
  /** Stops sending, waits for every outstanding request, and returns the totals. */
  stop(): Promise<LoadTotals>;
}

/** Totals over a whole run. */
export interface LoadTotals {
  readonly sent: number;
  readonly ok: number;
  readonly failures: number;
  readonly timeouts: number;
  readonly skipped: number;
  readonly versions: Record<string, number>;
  readonly failureDetails: Record<string, number>;
  /** Successful answers per second of the run, on average. */
  readonly achievedRate: number;
}

const TICK_MS = 5;

/** Starts a fixed-rate load with `send` (see the file comment). */
export function startLoad(send: Sender, options: LoadOptions): RunningLoad {
  const rate = options.ratePerSecond;
  if (!(rate > 0)) throw new RangeError(`ratePerSecond must be positive; got ${rate}`);
  const timeoutMs = options.timeoutMs ?? 5000;
  const maxInFlight = options.maxInFlight ?? Math.max(16, Math.ceil(rate * 4));
  const durationMs = options.durationMs ?? 30 * 60_000;
  const startedAt = Date.now();
  const seconds: LoadSecond[] = [];
  const outstanding = new Set<Promise<void>>();
  const requests: RequestRecord[] = [];
  let started = 0;
  let stopped = false;

  const bucket = (second: number): LoadSecond => {
    while (seconds.length <= second) {
      seconds.push({ second: seconds.length, sent: 0, ok: 0, failures: 0, timeouts: 0, skipped: 0, versions: {}, failureDetails: {} });
    }
    return seconds[second];
  };
  const secondAt = (at: number) => Math.max(0, Math.floor((at - startedAt) / 1000));

  const fire = (second: number, dueAt: number) => {
    const b = bucket(second);
    const record: RequestRecord | undefined = options.recordRequests ? { at: dueAt, sentAt: Date.now() } : undefined;
    if (record) requests.push(record);
    if (outstanding.size >= maxInFlight) {
      b.skipped++;
      return;
    }
    b.sent++;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const p = send(controller.signal)
      .then(
        (r) => {
          if (record && !timedOut) record.answeredAt = Date.now();
          if (timedOut) b.timeouts++;
          else if (r.ok && r.version !== undefined) {
            b.ok++;
            b.versions[r.version] = (b.versions[r.version] ?? 0) + 1;
            if (record) {
              record.version = r.version;
              if (r.sentAt !== undefined) record.sentAt = r.sentAt;
            }
          } else {
            b.failures++;
            const d = r.detail ?? 'no version in the answer';
            b.failureDetails[d] = (b.failureDetails[d] ?? 0) + 1;
          }
        },
        (err: Error) => {
          if (record && !timedOut) record.answeredAt = Date.now();
          if (timedOut) b.timeouts++;
          else {
            b.failures++;
            const d = (err as NodeJS.ErrnoException).code ?? err.message;
            b.failureDetails[d] = (b.failureDetails[d] ?? 0) + 1;
          }
        },
      )
      .finally(() => {
        clearTimeout(timer);
        outstanding.delete(p);
      });
    outstanding.add(p);
  };

  const tick = () => {
    if (stopped) return;
    const now = Date.now();
    const elapsed = now - startedAt;
    if (elapsed >= durationMs) {
      stopped = true;
      return;
    }
    const due = Math.floor((elapsed * rate) / 1000) + 1;
    // Each request belongs to the second it was due in, even if the event loop was late.
    while (started < due) {
      const dueAt = startedAt + (started * 1000) / rate;
      started++;
      fire(secondAt(dueAt), dueAt);
    }
    timer = setTimeout(tick, TICK_MS);
  };
  let timer: NodeJS.Timeout = setTimeout(tick, 0);

  return {
    seconds,
    startedAt,
    requests,
    secondAt,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const endedAt = Date.now();
      while (outstanding.size > 0) await Promise.allSettled([...outstanding]);
      return totals(seconds, endedAt - startedAt);
    },
  };
}

/** Sums per-second counts (`elapsedMs` gives the achieved rate). */
export function totals(seconds: readonly LoadSecond[], elapsedMs: number): LoadTotals {
  const versions: Record<string, number> = {};
  const failureDetails: Record<string, number> = {};
  let sent = 0, ok = 0, failures = 0, timeouts = 0, skipped = 0;
  for (const s of seconds) {
    sent += s.sent;
    ok += s.ok;
    failures += s.failures;
    timeouts += s.timeouts;
    skipped += s.skipped;
    for (const [v, n] of Object.entries(s.versions)) versions[v] = (versions[v] ?? 0) + n;
    for (const [d, n] of Object.entries(s.failureDetails)) failureDetails[d] = (failureDetails[d] ?? 0) + n;
  }
  return { sent, ok, failures, timeouts, skipped, versions, failureDetails, achievedRate: elapsedMs > 0 ? (ok * 1000) / elapsedMs : 0 };
}

/** Options of `httpSender`. */
export interface HttpSenderOptions {
  /** Path and query. @default "/" */
  readonly path?: string;
  /** Keep-alive connections at most. @default 32 */
  readonly maxSockets?: number;
  /** The clock `sentAt` is read from. @default Date.now */
  readonly now?: () => number;
}

/**
 * GET requests to `http://host:port/path` over keep-alive connections; the version is the
 * `x-rayshift-version` header (or the JSON body's `version`), the cluster the body's `cluster`.
 */
export function httpSender(host: string, port: number, options: HttpSenderOptions = {}): { send: Sender; close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 32 });
  const path = options.path ?? '/';
  const now = options.now ?? Date.now;
  const send: Sender = (signal) =>
    new Promise<SendResult>((resolve, reject) => {
      let sentAt: number | undefined;
      const req = http.request({ host, port, path, method: 'GET', agent, signal, headers: { accept: 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status >= 300) {
            resolve({ ok: false, detail: `HTTP ${status}` });
            return;
          }
          let body: { version?: unknown; cluster?: unknown } = {};
          try {
            body = JSON.parse(text) as typeof body;
          } catch {
            // the header may still name the version
          }
          const header = res.headers['x-rayshift-version'];
          const version = typeof header === 'string' ? header : typeof body.version === 'string' ? body.version : undefined;
          resolve({ ok: version !== undefined, version, ...(typeof body.cluster === 'string' ? { cluster: body.cluster } : {}), ...(version === undefined ? { detail: `HTTP ${status} without a version` } : {}), ...(sentAt !== undefined ? { sentAt } : {}) });
        });
      });
      // The agent queues a request while all its connections are busy; it goes out when it gets one.
      req.on('socket', () => {
        sentAt = now();
      });
      req.on('error', reject);
      req.end();
    });
  return { send, close: () => agent.destroy() };
}
