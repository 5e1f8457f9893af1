/**
 * The engine's own normalized RayService options: plain numbers with every default already
 * applied. `lib/spec` resolves user input (percent strings, optional fields) into this shape.
 */

/** Upgrade strategy, named as KubeRay's `spec.upgradeStrategy.type`. */
export type UpgradeStrategy = 'NewClusterWithIncrementalUpgrade' | 'NewCluster' | 'None';

/** Options the RayService engine runs with. */
export interface RayServiceEngineOptions {
  /** How a change of the cluster spec hash is rolled out. */
  readonly strategy: UpgradeStrategy;
  /** Capacity step in percent of Serve `target_capacity`, integer 1–100 (incremental only). */
  readonly maxSurgePercent: number;
  /** Traffic step in percent, integer 1–100 (incremental only). */
  readonly stepSizePercent: number;
  /** Minimum time between two traffic-weight changes, seconds, > 0 (fractions allowed). */
  readonly intervalSeconds: number;
  /** Delay before a retired RayCluster is deleted, seconds, ≥ 0. */
  readonly rayClusterDeletionDelaySeconds: number;
  /** An upgrade that makes no progress for this long is rolled back automatically, seconds; 0 disables. */
  readonly progressDeadlineSeconds: number;
}

/**
 * Throws a `RangeError` naming the field, the value and the allowed range when an option is out
 * of range. The engine calls it on every run; `lib/spec` reports the same problems to users first.
 */
export function checkRayServiceOptions(o: RayServiceEngineOptions): void {
  if (o.strategy !== 'NewClusterWithIncrementalUpgrade' && o.strategy !== 'NewCluster' && o.strategy !== 'None') {
    throw new RangeError(`strategy is ${String(o.strategy)}; allowed: NewClusterWithIncrementalUpgrade, NewCluster, None`);
  }
  percent('maxSurgePercent', o.maxSurgePercent);
  percent('stepSizePercent', o.stepSizePercent);
  if (!(o.intervalSeconds > 0) || !Number.isFinite(o.intervalSeconds)) {
    throw new RangeError(`intervalSeconds is ${o.intervalSeconds}; allowed: a finite number > 0`);
  }
  nonNegative('rayClusterDeletionDelaySeconds', o.rayClusterDeletionDelaySeconds);
  nonNegative('progressDeadlineSeconds', o.progressDeadlineSeconds);
}

function percent(field: string, v: number): void {
  if (!Number.isInteger(v) || v < 1 || v > 100) throw new RangeError(`${field} is ${v}; allowed: an integer 1–100`);
}

function nonNegative(field: string, v: number): void {
  if (!(v >= 0) || !Number.isFinite(v)) throw new RangeError(`${field} is ${v}; allowed: a finite number ≥ 0`);
}
