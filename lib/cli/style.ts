/** Terminal styling: ANSI colours only when the stream is a TTY and NO_COLOR is unset. */

/** Colour helpers for one output stream. */
export interface Style {
  /** Errors. */
  red(s: string): string;
  /** Warnings. */
  yellow(s: string): string;
  /** The new (pending) side. */
  green(s: string): string;
  /** Secondary text. */
  dim(s: string): string;
  /** Headings. */
  bold(s: string): string;
}

/** A `Style` for `stream`: colours on a TTY, plain text otherwise (CI logs, pipes, files). */
export function styleFor(stream: NodeJS.WriteStream): Style {
  const on = Boolean(stream.isTTY) && process.env.NO_COLOR === undefined;
  const wrap = (code: number, reset: number) => (s: string) => (on ? `\u001b[${code}m${s}\u001b[${reset}m` : s);
  return { red: wrap(31, 39), yellow: wrap(33, 39), green: wrap(32, 39), dim: wrap(2, 22), bold: wrap(1, 22) };
}
