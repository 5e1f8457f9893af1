/**
 * The accelerator profile of a RayCluster spec and the smallest safe maxSurgePercent it implies
 * (with validateRayService's warning below it), validateRayClusterConfig's relative paths, and the
 * defaults resolveUpgradeOptions fills in.
 */
import {
  acceleratorProfile,
  acceleratorsOfPod,
  minimumSafeMaxSurgePercent,
  resolveUpgradeOptions,
  validateRayClusterConfig,
  validateRayService,
} from '../../lib/spec';
import { planRayService } from '../../lib/engine';
import { at, errorPaths, expectClean, podTemplate, rayService } from './fixtures';
import { OPTS } from './support/rayservice-fixtures';

describe('accelerator profile and minimumSafeMaxSurgePercent', () => {
  function gpuService(maxSurge: number, workers = 8, gpusPerPod = 1): any {
    const m = rayService();
    m.spec.rayClusterConfig.workerGroupSpecs = [{ groupName: 'gpu', minReplicas: 1, maxReplicas: workers, template: podTemplate(gpusPerPod) }];
    m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = maxSurge;
    m.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent = 1;
    return m;
  }

  test('8 workers × 1 GPU: 1 per pod, 8 in total, so the smallest safe surge is ceil(100/8) = 13', () => {
    const profile = acceleratorProfile(gpuService(20).spec.rayClusterConfig);
    expect(profile).toEqual({ acceleratorsPerPod: 1, totalAccelerators: 8 });
    expect(minimumSafeMaxSurgePercent(profile)).toBe(13);
  });

  test('with the autoscaler the profile takes the hungriest pod and sums groups (maxReplicas, else replicas)', () => {
    const cluster = {
      enableInTreeAutoscaling: true,
      workerGroupSpecs: [
        { groupName: 'a', maxReplicas: 4, template: podTemplate(2) },
        { groupName: 'b', replicas: 3, template: podTemplate(1) },
        { groupName: 'cpu', maxReplicas: 10, template: podTemplate(0) },
      ],
    };
    expect(acceleratorProfile(cluster)).toEqual({ acceleratorsPerPod: 2, totalAccelerators: 11 });
    expect(minimumSafeMaxSurgePercent({ acceleratorsPerPod: 2, totalAccelerators: 11 })).toBe(19);
  });

  test("without the autoscaler a group counts KubeRay's desired replicas: a maxReplicas alone starts none (replicas defaults to 0)", () => {
    const cluster = { workerGroupSpecs: [{ groupName: 'a', maxReplicas: 4, template: podTemplate(2) }, { groupName: 'b', replicas: 3, template: podTemplate(1) }] };
    expect(acceleratorProfile(cluster)).toEqual({ acceleratorsPerPod: 2, totalAccelerators: 3 });
  });

  test('requests count where no limit is set, and other accelerator vendors count', () => {
    const t = { spec: { containers: [{ resources: { requests: { 'amd.com/gpu': '4' } } }, { resources: { limits: { 'google.com/tpu': 4 } } }] } };
    expect(acceleratorsOfPod(t)).toBe(8);
  });

  test('no accelerators: no minimum; the minimum is clamped to 1..100', () => {
    expect(minimumSafeMaxSurgePercent({ acceleratorsPerPod: 0, totalAccelerators: 0 })).toBeUndefined();
    expect(minimumSafeMaxSurgePercent({ acceleratorsPerPod: 8, totalAccelerators: 8 })).toBe(100);
    expect(minimumSafeMaxSurgePercent({ acceleratorsPerPod: 1, totalAccelerators: 1000 })).toBe(1);
  });

  test('validateRayService warns when maxSurgePercent is below the minimum, naming both and the accelerators', () => {
    const r = validateRayService(gpuService(10));
    expect(r.errors).toEqual([]);
    const w = at(r.warnings, `${OPTS}.maxSurgePercent`);
    expect(w).toHaveLength(1);
    expect(w[0].message).toContain('10 is below 13');
    expect(w[0].message).toContain('1 of 8 accelerators');
  });

  test('no warning at exactly the minimum', () => {
    expectClean(validateRayService(gpuService(13)));
  });

  test('no warning for blue/green services, whatever the GPUs', () => {
    const m = gpuService(10);
    m.spec.upgradeStrategy.type = 'NewCluster';
    delete m.spec.upgradeStrategy.clusterUpgradeOptions;
    expectClean(validateRayService(m));
  });
});

describe('validateRayClusterConfig and resolveUpgradeOptions', () => {
  test('paths are relative to the cluster spec', () => {
    const r = validateRayClusterConfig({ headGroupSpec: { template: { spec: { containers: [] } } }, enableInTreeAutoscaling: 'yes' });
    expect(errorPaths(r).sort()).toEqual(['enableInTreeAutoscaling', 'headGroupSpec.template.spec.containers']);
  });

  test('defaults: surge 100, step = surge, deletion delay 60, deadline 600, capacity policy wait, surge bound 120', () => {
    const m = rayService();
    delete m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent;
    delete m.spec.rayClusterDeletionDelaySeconds;
    expect(resolveUpgradeOptions(m.spec)).toEqual({
      strategy: 'NewClusterWithIncrementalUpgrade',
      maxSurgePercent: 100,
      stepSizePercent: 5,
      intervalSeconds: 60,
      rayClusterDeletionDelaySeconds: 60,
      progressDeadlineSeconds: 600,
      capacityPolicy: 'wait',
      surgeUnschedulableSeconds: 120,
    });
    // Without a strategy, KubeRay's default (NewCluster) and interval 1.
    expect(resolveUpgradeOptions({ ...m.spec, upgradeStrategy: undefined })).toMatchObject({ strategy: 'NewCluster', intervalSeconds: 1 });
  });

  test('clusterUpgradeOptions of another strategy are ignored, as the warning says: defaults, which the engine accepts and plans (found by test/fuzz)', () => {
    for (const type of [undefined, 'NewCluster', 'None']) {
      const m = rayService();
      m.spec.upgradeStrategy = { ...(type ? { type } : {}), clusterUpgradeOptions: { maxSurgePercent: 0, stepSizePercent: 0, intervalSeconds: -1 } };
      expect(validateRayService(m).errors).toEqual([]);
      expect(resolveUpgradeOptions(m.spec)).toMatchObject({ maxSurgePercent: 100, stepSizePercent: 100, intervalSeconds: 1 });
      const plan = planRayService({ kind: 'RayService', name: 'llm', options: resolveUpgradeOptions(m.spec) });
      expect(plan.outcome).toBe(type === 'None' ? 'unchanged' : 'promoted');
    }
  });
});
