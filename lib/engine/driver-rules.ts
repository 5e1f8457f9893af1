/**
 * The decisions of a driver that runs a RayService to its goal in one go (Pulumi's migration):
 * what a spec change does, and what happens when the deadline passes. The driver prints and
 * carries them out (lib/pulumi/migration-operations.ts, migration-drive.ts).
 */
import { clusterSpecHash } from './cluster-hash';
import type { RayServiceStatus } from './status';
import { effectiveStrategy, type UpgradeStrategyType } from '../spec/upgrade-strategy';
import type { RayServiceSpec } from '../spec/rayservice';

/** What a spec change does. */
export type SpecChange =
  /** The cluster spec changed: an upgrade to a new RayCluster by `strategy`. */
  | { readonly kind: 'upgrade'; readonly strategy: UpgradeStrategyType }
  /** Only the Serve config changed: applied in place to the serving cluster. */
  | { readonly kind: 'inPlace' }
  /** Only upgrade settings changed: recorded for the next upgrade. */
  | { readonly kind: 'settings' }
  /** Nothing changed. */
  | { readonly kind: 'none' };

/** What changing the spec from `olds` to `news` does (the cluster spec is compared by `clusterSpecHash`). */
export function classifySpecChange(olds: RayServiceSpec, news: RayServiceSpec): SpecChange {
  if (clusterSpecHash(olds.rayClusterConfig as never) !== clusterSpecHash(news.rayClusterConfig as never)) {
    return { kind: 'upgrade', strategy: effectiveStrategy(undefined, news.upgradeStrategy?.type) };
  }
  if (olds.serveConfigV2 !== news.serveConfigV2) return { kind: 'inPlace' };
  return JSON.stringify(olds) === JSON.stringify(news) ? { kind: 'none' } : { kind: 'settings' };
}

/**
 * What the driver does when its deadline passes: roll back an upgrade in flight when asked to
 * (`onDeadline: 'rollback'`); otherwise, and always when no upgrade is in flight (nothing to roll
 * back to), pause the service where it stands.
 */
export function deadlineChoice(onDeadline: 'pause' | 'rollback', status: Pick<RayServiceStatus, 'activeClusterName' | 'pendingClusterName'>): 'pause' | 'rollback' {
  const inFlight = status.activeClusterName !== undefined && status.pendingClusterName !== undefined;
  return onDeadline === 'rollback' && inFlight ? 'rollback' : 'pause';
}
