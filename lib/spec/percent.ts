/** Kubernetes IntOrString values used by RoleBasedGroup rollouts: an absolute count or a percent string. */

/** An absolute count (`3`) or a percent string (`"10%"`). */
export type IntOrPercent = number | string;

const PERCENT = /^(\d+(?:\.\d+)?)%$/;
/**
 * Digits and '%' only, without leading zeros: what Kubernetes' IntOrString percent parsing
 * (`strconv.Atoi`) accepts ("5.0%" is not) and what RBG v1alpha1's CRD pattern admits ("05%" is not).
 */
const WHOLE_PERCENT = /^(0|[1-9]\d*)%$/;

/** The number in a percent string (`"10%"` → 10), or undefined when `value` is not a percent string. */
export function parsePercent(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = PERCENT.exec(value);
  return m ? Number(m[1]) : undefined;
}

/**
 * Checks an IntOrPercent: an integer ≥ 0 (when `allowInteger`) or a whole percent from 0% to 100%.
 * Returns what is wrong, or undefined.
 */
export function intOrPercentProblem(value: unknown, allowInteger: boolean): string | undefined {
  if (typeof value === 'number') {
    if (!allowInteger) return `must be a percent string from "0%" to "100%"; got the integer ${value}`;
    return Number.isInteger(value) && value >= 0 ? undefined : `must be an integer ≥ 0 or a percent from "0%" to "100%"; got ${value}`;
  }
  if (typeof value === 'string') {
    const p = parsePercent(value);
    if (p === undefined || !WHOLE_PERCENT.test(value)) {
      return `must be ${allowInteger ? 'an integer ≥ 0 or ' : ''}a whole percent from "0%" to "100%"; got ${JSON.stringify(value)}`;
    }
    if (p > 100) return `${JSON.stringify(value)} is outside "0%"–"100%"`;
    return undefined;
  }
  return `must be ${allowInteger ? 'an integer ≥ 0 or ' : ''}a percent string from "0%" to "100%"; got ${value === undefined ? 'unset' : JSON.stringify(value)}`;
}

/**
 * Resolves a rollout partition against a role's replicas the way RBG does: a percent rounds up,
 * and a percent other than 100% that would keep every replica keeps one fewer; clamped to [0, replicas].
 */
export function resolvePartition(value: IntOrPercent, replicas: number): number {
  const p = parsePercent(value);
  let n: number;
  if (p === undefined) {
    n = typeof value === 'number' ? value : Number(value);
  } else {
    n = Math.ceil((p * replicas) / 100);
    if (n === replicas && p !== 100) n = replicas - 1;
  }
  return Math.max(0, Math.min(replicas, Number.isFinite(n) ? n : 0));
}
