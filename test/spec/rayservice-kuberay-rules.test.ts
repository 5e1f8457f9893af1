/**
 * validateRayService on valid baselines (incremental, rayshift.dev, blue/green, no strategy, None)
 * and on KubeRay's ValidateClusterUpgradeOptions rules 1–7, each broken in one field of a valid
 * baseline, then all at once.
 */
import { RAY_SERVICE_DEFAULTS, validateRayService } from '../../lib/spec';
import { errorPaths, expectClean, expectOnlyError, rayService, rayshiftService } from './fixtures';
import { OPTS, withOption } from './support/rayservice-fixtures';

describe('validateRayService: baselines', () => {
  test('a valid incremental ray.io/v1 service has no errors and no warnings', () => {
    expectClean(validateRayService(rayService()));
  });

  test('a valid rayshift.dev/v1alpha1 service with every extension has no errors and no warnings', () => {
    expectClean(validateRayService(rayshiftService()));
  });

  test('a blue/green service needs neither the autoscaler nor upgrade options', () => {
    const m = rayService();
    m.spec.upgradeStrategy = { type: 'NewCluster' };
    m.spec.rayClusterConfig.enableInTreeAutoscaling = false;
    expectClean(validateRayService(m));
  });

  test('no upgradeStrategy at all (KubeRay default) is valid', () => {
    const m = rayService();
    delete m.spec.upgradeStrategy;
    expectClean(validateRayService(m));
  });

  test('type None is valid and checks no upgrade options', () => {
    const m = rayService();
    m.spec.upgradeStrategy = { type: 'None' };
    m.spec.rayClusterConfig.enableInTreeAutoscaling = false;
    expectClean(validateRayService(m));
  });

  test('options given with a non-incremental type are only a warning', () => {
    const m = rayService();
    m.spec.upgradeStrategy.type = 'NewCluster';
    const r = validateRayService(m);
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => w.path)).toEqual([OPTS]);
    expect(r.warnings[0].message).toContain('ignored with type "NewCluster"');
    expect(r.warnings[0].severity).toBe('warning');
  });
});

describe('validateRayService: KubeRay ValidateClusterUpgradeOptions rules', () => {
  test('1. the Ray autoscaler must be on', () => {
    const m = rayService();
    m.spec.rayClusterConfig.enableInTreeAutoscaling = false;
    expectOnlyError(validateRayService(m), 'spec.rayClusterConfig.enableInTreeAutoscaling', 'must be true', 'autoscaler', 'NewClusterWithIncrementalUpgrade', 'got false');
  });

  test('1. the autoscaler left unset is the same error', () => {
    const m = rayService();
    delete m.spec.rayClusterConfig.enableInTreeAutoscaling;
    expectOnlyError(validateRayService(m), 'spec.rayClusterConfig.enableInTreeAutoscaling', 'must be true', 'got unset');
  });

  test('2. clusterUpgradeOptions are required', () => {
    const m = rayService();
    delete m.spec.upgradeStrategy.clusterUpgradeOptions;
    expectOnlyError(validateRayService(m), OPTS, 'required', 'NewClusterWithIncrementalUpgrade', 'unset');
  });

  test('2. clusterUpgradeOptions that are not a mapping are rejected', () => {
    const m = rayService();
    m.spec.upgradeStrategy.clusterUpgradeOptions = 'fast';
    expectOnlyError(validateRayService(m), OPTS, 'required', '"fast"');
  });

  test.each([101, -5, 1000])('3. maxSurgePercent %p is outside 1..100', (v) => {
    expectOnlyError(validateRayService(withOption('maxSurgePercent', v)), `${OPTS}.maxSurgePercent`, 'from 1 to 100', `got ${v}`);
  });

  test.each([[50.5, 'got 50.5'], ['50', 'got "50"'], [true, 'got true']])('3. maxSurgePercent %p is not an integer', (v, shown) => {
    expectOnlyError(validateRayService(withOption('maxSurgePercent', v)), `${OPTS}.maxSurgePercent`, 'integer from 1 to 100', shown);
  });

  test('3. maxSurgePercent unset defaults to 100 (the CRD default) and is valid', () => {
    expect(RAY_SERVICE_DEFAULTS.maxSurgePercent).toBe(100);
    expectClean(validateRayService(withOption('maxSurgePercent', undefined)));
  });

  test.each([1, 100])('3. maxSurgePercent %p is at the edge of the range and valid', (v) => {
    const m = rayService();
    m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = v;
    m.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent = 1;
    expectClean(validateRayService(m));
  });

  test.each([101, -1])('4. stepSizePercent %p is outside 1..100', (v) => {
    expectOnlyError(validateRayService(withOption('stepSizePercent', v)), `${OPTS}.stepSizePercent`, 'from 1 to 100', `got ${v}`);
  });

  test('4. stepSizePercent missing is rejected (KubeRay raises it for nil too)', () => {
    expectOnlyError(validateRayService(withOption('stepSizePercent', undefined)), `${OPTS}.stepSizePercent`, 'from 1 to 100', 'got unset');
  });

  test('4. stepSizePercent 2.5 is not an integer', () => {
    expectOnlyError(validateRayService(withOption('stepSizePercent', 2.5)), `${OPTS}.stepSizePercent`, 'integer', 'got 2.5');
  });

  test('5. stepSizePercent must not exceed maxSurgePercent', () => {
    expectOnlyError(validateRayService(withOption('stepSizePercent', 25)), `${OPTS}.stepSizePercent`, '25 exceeds maxSurgePercent 20', '≤ maxSurgePercent');
  });

  test('5. stepSizePercent equal to maxSurgePercent is valid', () => {
    expectClean(validateRayService(withOption('stepSizePercent', 20)));
  });

  test('5. step against the default surge of 100: 100 is valid', () => {
    const m = rayService();
    delete m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent;
    m.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent = 100;
    expectClean(validateRayService(m));
  });

  test.each([0, -10])('6. intervalSeconds %p is not > 0', (v) => {
    expectOnlyError(validateRayService(withOption('intervalSeconds', v)), `${OPTS}.intervalSeconds`, 'from 1 to 2147483647', `got ${v}`);
  });

  test('6. intervalSeconds above int32 (which KubeRay cannot decode) is rejected; 2147483647 is valid', () => {
    expectOnlyError(validateRayService(withOption('intervalSeconds', 2 ** 31)), `${OPTS}.intervalSeconds`, 'from 1 to 2147483647', 'int32', 'got 2147483648');
    expectClean(validateRayService(withOption('intervalSeconds', 2 ** 31 - 1)));
  });

  test('6. intervalSeconds missing is rejected', () => {
    expectOnlyError(validateRayService(withOption('intervalSeconds', undefined)), `${OPTS}.intervalSeconds`, 'integer from 1 to 2147483647', 'got unset');
  });

  test('6. intervalSeconds 1.5 is not an integer', () => {
    expectOnlyError(validateRayService(withOption('intervalSeconds', 1.5)), `${OPTS}.intervalSeconds`, 'integer from 1 to 2147483647', 'got 1.5');
  });

  test('6. intervalSeconds 1 is valid', () => {
    expectClean(validateRayService(withOption('intervalSeconds', 1)));
  });

  test.each([undefined, ''])('7. gatewayClassName %p is required', (v) => {
    expectOnlyError(validateRayService(withOption('gatewayClassName', v)), `${OPTS}.gatewayClassName`, 'required', 'NewClusterWithIncrementalUpgrade');
  });

  test('every KubeRay rule at once: all problems are reported together', () => {
    const m = rayService();
    m.spec.rayClusterConfig.enableInTreeAutoscaling = false;
    m.spec.upgradeStrategy.clusterUpgradeOptions = { maxSurgePercent: 120, stepSizePercent: 0, intervalSeconds: 0 };
    expect(errorPaths(validateRayService(m)).sort()).toEqual(
      [
        'spec.rayClusterConfig.enableInTreeAutoscaling',
        `${OPTS}.maxSurgePercent`,
        `${OPTS}.stepSizePercent`,
        `${OPTS}.intervalSeconds`,
        `${OPTS}.gatewayClassName`,
      ].sort(),
    );
  });
});
