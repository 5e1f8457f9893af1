/**
 * What every fuzz suite shares: the seed (fixed by default so a failure reproduces, `FUZZ_SEED` to
 * explore), fast-check's parameters, the figures each suite prints (requests, specs, crashes, 5xx,
 * peak RSS), and an RSS sampler for the "memory bounded" property.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';

/** The default seed: any fixed number; change it only on purpose (the run's inputs change with it). */
const DEFAULT_SEED = 15_007;

/** The seed of this run: `FUZZ_SEED` when set (an integer), else the fixed default. */
export function fuzzSeed(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer; got ${JSON.stringify(raw)}`);
  return seed;
}

/**
 * fast-check parameters of one property: the run's seed offset by `salt` (so two properties of a
 * suite do not draw the same inputs) and `numRuns` runs; fast-check prints a failure's seed and path, `withInput` its input.
 */
export function fuzzParams<T>(salt: number, numRuns: number): fc.Parameters<T> {
  return { seed: fuzzSeed() + salt, numRuns };
}

/**
 * A value as JSON that keeps what JSON drops (undefined, NaN, ±Infinity, -0, bigint, bytes), for
 * counterexamples: fast-check prints objects whose `constructor` key the noise replaced as
 * `[object Object]`.
 */
export function showInput(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v === undefined) return '<undefined>';
    if (typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0))) return `<${Object.is(v, -0) ? '-0' : String(v)}>`;
    if (typeof v === 'bigint') return `<${v}n>`;
    if (v instanceof Uint8Array) return `<bytes ${Buffer.from(v).toString('base64')}>`;
    // An own `__proto__` key (JSON.parse makes them) would vanish into the copy's prototype: rename it.
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, '__proto__')) {
      return Object.fromEntries(Object.keys(v).map((k) => [k === '__proto__' ? '<__proto__>' : k, (v as Record<string, unknown>)[k]]));
    }
    return v;
  });
  return text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
}

/** `check` with its input added to any error it throws, so the counterexample prints readably. */
export function withInput<A extends unknown[]>(check: (...args: A) => void): (...args: A) => void {
  return (...args) => {
    try {
      check(...args);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n\ninput: ${showInput(args.length === 1 ? args[0] : args)}`, { cause: e });
    }
  };
}

/** The async form of `withInput`. */
export function withInputAsync<A extends unknown[]>(check: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args) => {
    try {
      await check(...args);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n\ninput: ${showInput(args.length === 1 ? args[0] : args)}`, { cause: e });
    }
  };
}

/** The figures a suite reports when it ends. */
export interface FuzzFigures {
  /** Generated requests sent to the server. */
  requests: number;
  /** Generated specs checked. */
  specs: number;
  /** Uncaught exceptions and unhandled rejections in the process, plus health checks that failed. */
  crashes: number;
  /** Answers with a 5xx HTTP status or a gRPC status that maps to one. */
  serverErrors: number;
  /** RSS when measuring started and its peak since, MB. */
  rssStartMb: number;
  rssPeakMb: number;
  /** Peak of the JS heap in use and of array buffers (Buffers), MB: where a growing RSS comes from. */
  heapPeakMb: number;
  buffersPeakMb: number;
}

/** Empty figures. */
export function newFigures(): FuzzFigures {
  return { requests: 0, specs: 0, crashes: 0, serverErrors: 0, rssStartMb: 0, rssPeakMb: 0, heapPeakMb: 0, buffersPeakMb: 0 };
}

/** One line of figures, as the suites print it (and the closing note quotes it). */
export function formatFigures(suite: string, f: FuzzFigures, seconds: number): string {
  return (
    `fuzz figures (${suite}, FUZZ_SEED=${fuzzSeed()}): requests ${f.requests}, specs ${f.specs}, crashes ${f.crashes}, ` +
    `5xx ${f.serverErrors}, RSS start ${f.rssStartMb.toFixed(0)} MB, peak ${f.rssPeakMb.toFixed(0)} MB ` +
    `(+${(f.rssPeakMb - f.rssStartMb).toFixed(0)} MB; heap peak ${f.heapPeakMb.toFixed(0)} MB, buffers peak ${f.buffersPeakMb.toFixed(0)} MB), ${seconds.toFixed(0)} s`
  );
}

const MB = 1024 * 1024;

/** Samples this process's RSS every `everyMs` into `figures` (start and peak) until stopped. */
export function sampleRss(figures: FuzzFigures, everyMs = 20): { stop(): void } {
  figures.rssStartMb = process.memoryUsage.rss() / MB;
  figures.rssPeakMb = figures.rssStartMb;
  const sample = () => {
    const m = process.memoryUsage();
    figures.rssPeakMb = Math.max(figures.rssPeakMb, m.rss / MB);
    figures.heapPeakMb = Math.max(figures.heapPeakMb, m.heapUsed / MB);
    figures.buffersPeakMb = Math.max(figures.buffersPeakMb, m.arrayBuffers / MB);
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      sample();
      clearInterval(timer);
    },
  };
}

/**
 * A full garbage collection now. V8 collects lazily: between collections the RSS holds garbage too,
 * so a peak without them measures the collector's pace, not what the server keeps. `--expose-gc`
 * set at run time gives a `gc` to contexts created after it.
 */
export function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

/**
 * Counts uncaught exceptions and unhandled rejections into `figures.crashes` while installed (a
 * server bug that would take the process down in production shows up here instead of killing jest's
 * worker), keeping the first few for the failure message.
 */
export function countCrashes(figures: FuzzFigures): { readonly errors: unknown[]; stop(): void } {
  const errors: unknown[] = [];
  const onError = (err: unknown) => {
    figures.crashes++;
    if (errors.length < 5) errors.push(err);
  };
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return {
    errors,
    stop() {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
    },
  };
}
