/**
 * KubeRay's upgrade strategies and the default one, in a module of their own with no imports, so
 * the steering rules (which the dashboard's bundle takes for its verb list) reach them without the
 * RayService model.
 */

/** KubeRay's upgrade strategies: blue/green, incremental (stepwise), or none. */
export type UpgradeStrategyType = 'NewCluster' | 'NewClusterWithIncrementalUpgrade' | 'None';

/** Every upgrade strategy KubeRay accepts. */
export const UPGRADE_STRATEGY_TYPES: readonly UpgradeStrategyType[] = ['NewCluster', 'NewClusterWithIncrementalUpgrade', 'None'];

/** KubeRay's default `upgradeStrategy.type`. */
export const DEFAULT_UPGRADE_STRATEGY: UpgradeStrategyType = 'NewCluster';

/**
 * The strategy a service's upgrades follow: the one of the upgrade in flight (it keeps the strategy
 * it started with), else the spec's, else KubeRay's default. Values that are no strategy are unset.
 */
export function effectiveStrategy(inFlight: unknown, specStrategy: unknown): UpgradeStrategyType {
  const known = (v: unknown): v is UpgradeStrategyType => typeof v === 'string' && (UPGRADE_STRATEGY_TYPES as readonly string[]).includes(v);
  if (known(inFlight)) return inFlight;
  return known(specStrategy) ? specStrategy : DEFAULT_UPGRADE_STRATEGY;
}
