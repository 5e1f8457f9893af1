/** CRD field descriptions that name their default, taken from `lib/spec`'s defaults tables instead of being written by hand. */

/** `description` followed by ` Default <value>.` (the form every rayshift CRD description uses). */
export function describeDefault(description: string, value: string | number | boolean): string {
  return `${description} Default ${String(value)}.`;
}
