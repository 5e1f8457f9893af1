/**
 * Parsers of the CLI's numeric and address flags, for commander's `.option(..., parser)`. Each
 * error names the flag, the allowed range and the value given.
 */
import { InvalidArgumentError } from 'commander';

/** An inclusive integer range. */
export interface IntegerRange {
  readonly min: number;
  readonly max: number;
}

/** A parser of an integer flag within `range`. */
export function integerIn(flag: string, range: IntegerRange): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || n < range.min || n > range.max) throw new InvalidArgumentError(`${flag} must be an integer from ${range.min} to ${range.max}; got ${JSON.stringify(v)}`);
    return n;
  };
}

/** TCP ports: 0 asks the system for a free one. */
export const PORT_RANGE: IntegerRange = { min: 0, max: 65535 };

/** Splits `--listen`'s `host:port`, `[v6]:port` or `:port` (host then undefined). */
export function parseListen(value: string): { host?: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > PORT_RANGE.max) throw new InvalidArgumentError(`--listen must be host:port, [v6]:port or :port with a port from 0 to 65535; got ${JSON.stringify(value)}`);
  const host = m[1] ?? m[2];
  return { ...(host ? { host } : {}), port };
}
