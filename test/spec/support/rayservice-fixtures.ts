/**
 * Shared pieces of the validateRayService tests (test/spec/rayservice-*.test.ts): the upgrade
 * options' path and a baseline with one option changed.
 */
import { rayService } from '../fixtures';

export const OPTS = 'spec.upgradeStrategy.clusterUpgradeOptions';

/** The baseline with one clusterUpgradeOptions field replaced (or removed when `value` is undefined). */
export function withOption(field: string, value: unknown): unknown {
  const m = rayService();
  if (value === undefined) delete m.spec.upgradeStrategy.clusterUpgradeOptions[field];
  else m.spec.upgradeStrategy.clusterUpgradeOptions[field] = value;
  return m;
}
