/**
 * Kubernetes-style status conditions (API conventions, `metav1.Condition`): `lastTransitionTime`
 * changes only when `status` changes; `reason`, `message` and `observedGeneration` are updated in place.
 */

/** `True`, `False` or `Unknown`. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A status condition as stored in `status.conditions[]`. */
export interface Condition {
  /** CamelCase type, e.g. `Ready`, `Progressing`. */
  type: string;
  status: ConditionStatus;
  /** CamelCase machine-readable reason. */
  reason: string;
  /** Human-readable message (may be empty). */
  message: string;
  /** RFC 3339 time, second precision, of the last change of `status`. */
  lastTransitionTime: string;
  /** The `metadata.generation` the condition was computed from. */
  observedGeneration?: number;
}

/** A condition to set: `lastTransitionTime` is computed. */
export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  reason: string;
  message?: string;
  observedGeneration?: number;
}

/** Formats a time as Kubernetes does (`metav1.Time`: RFC 3339, UTC, whole seconds). */
export function kubeTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Returns `conditions` with `update` set: an existing condition of that type keeps its
 * `lastTransitionTime` unless its `status` changes; a new one gets `now`. Order is kept (new types are
 * appended). The input array is not modified.
 */
export function setCondition(conditions: readonly Condition[] | undefined, update: ConditionUpdate, now: Date = new Date()): Condition[] {
  const list = conditions ? [...conditions] : [];
  const i = list.findIndex((c) => c.type === update.type);
  const prev = i >= 0 ? list[i] : undefined;
  const next: Condition = {
    type: update.type,
    status: update.status,
    reason: update.reason,
    message: update.message ?? '',
    lastTransitionTime: prev && prev.status === update.status && prev.lastTransitionTime ? prev.lastTransitionTime : kubeTime(now),
  };
  const gen = update.observedGeneration ?? prev?.observedGeneration;
  if (gen !== undefined) next.observedGeneration = gen;
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** Applies several updates with `setCondition`, in order. */
export function mergeConditions(conditions: readonly Condition[] | undefined, updates: readonly ConditionUpdate[], now: Date = new Date()): Condition[] {
  let list = conditions ? [...conditions] : [];
  for (const u of updates) list = setCondition(list, u, now);
  return list;
}

/** Returns `conditions` without the condition of `type`. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** The condition of `type`, if present. */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` is present with status `True`. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** True when both lists hold the same conditions (same order, every field equal): use it to skip no-op status writes. */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  return x.every((c, i) => {
    const d = y[i];
    return (
      c.type === d.type &&
      c.status === d.status &&
      c.reason === d.reason &&
      (c.message ?? '') === (d.message ?? '') &&
      c.lastTransitionTime === d.lastTransitionTime &&
      c.observedGeneration === d.observedGeneration
    );
  });
}
