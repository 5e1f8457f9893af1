/**
 * KubeRay v1.7.0's `ray.io/initializing-timeout` annotation rule (`validateInitializingTimeout`,
 * called by `ValidateRayServiceMetadata`): when set and not empty, the value is a Go duration
 * (`time.ParseDuration`: `5m`, `1h30m`, `1.5h`) greater than zero, or else a whole number of
 * seconds (`strconv.Atoi`) greater than zero.
 */
import { show } from './problem';

/** The annotation that bounds how long a RayService may stay initializing. */
export const INITIALIZING_TIMEOUT_ANNOTATION = 'ray.io/initializing-timeout';

const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5
  'μs': 1_000n, // U+03BC
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const LIMIT = 1n << 63n;

/** Parses a duration as Go's `time.ParseDuration` does; returns nanoseconds, or undefined when Go rejects it. */
export function parseGoDuration(value: string): bigint | undefined {
  let s = value;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return undefined;
  let total = 0n;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s) as RegExpExecArray;
    const [whole, int, frac] = m;
    if (int === '' && (frac === undefined || frac === '')) return undefined;
    s = s.slice(whole.length);
    const unitMatch = /^[^0-9.]+/.exec(s);
    if (!unitMatch) return undefined;
    const unit = UNIT_NS[unitMatch[0]];
    if (unit === undefined) return undefined;
    s = s.slice(unitMatch[0].length);
    let v = BigInt(int === '' ? '0' : int);
    if (v > LIMIT) return undefined;
    if (v > LIMIT / unit) return undefined;
    v *= unit;
    if (frac) {
      // Go keeps the fraction's digits while they fit in int64, then scales in float64.
      let f = 0n;
      let scale = 1;
      for (const d of frac) {
        if (f > (LIMIT - 1n) / 10n) break;
        f = f * 10n + BigInt(d);
        scale *= 10;
      }
      v += BigInt(Math.floor(Number(f) * (Number(unit) / scale)));
      if (v > LIMIT) return undefined;
    }
    total += v;
    if (total > LIMIT) return undefined;
  }
  if (!neg && total > LIMIT - 1n) return undefined;
  return neg ? -total : total;
}

/** Parses an integer as Go's `strconv.Atoi` does on 64-bit platforms; undefined when it rejects it. */
function parseGoInt(value: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(value)) return undefined;
  const n = BigInt(value);
  return n < -LIMIT || n > LIMIT - 1n ? undefined : n;
}

/**
 * Checks the `ray.io/initializing-timeout` annotation value (undefined or empty: not set); returns
 * what is wrong, naming the value and the allowed forms, or undefined.
 */
export function initializingTimeoutProblem(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return `must be a string (annotation values are strings); got ${show(value)}`;
  const duration = parseGoDuration(value);
  if (duration !== undefined) {
    return duration > 0n ? undefined : `must be a positive duration (e.g. "5m", "1h"); got ${show(value)}`;
  }
  const seconds = parseGoInt(value);
  if (seconds !== undefined) {
    return seconds > 0n ? undefined : `must be a positive integer (seconds); got ${show(value)}`;
  }
  return `has an invalid format: expected a Go duration (e.g. "5m", "1h") or a positive integer of seconds; got ${show(value)}`;
}
