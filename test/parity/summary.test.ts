/**
 * The parity suite's ledger: how many upstream cases rayshift runs with upstream's outcome and how
 * many it deliberately changes (each with its README row), per upstream test file, plus the upstream
 * tests of those files it does not port and why. The counts are asserted so the figures quoted in
 * docs and notes stay true; the case tests (test/parity/*.test.ts) assert each case's outcome.
 */
import { KUBERAY_CLUSTER_CASES } from './kuberay-cluster-cases';
import { KUBERAY_INCREMENTAL_CASES } from './kuberay-incremental-cases';
import { KUBERAY_SERVICE_CASES } from './kuberay-service-cases';
import { DIFFERENCES, readmeDifferenceRules, tally, type NotPorted, type UpstreamCase } from './ledger';
import { BOUNDS, FASTEST_SLOWEST, MERGES, MIN_PROGRESS, PARTITIONS, rollingCases } from './rbg-cases';

const NO_RAYJOB = 'rayshift has no RayJob or RayCronJob';

/** Tests of KubeRay v1.7.0's validation_test.go that no RayService reaches. */
const KUBERAY_VALIDATION_NOT_PORTED: readonly NotPorted[] = [
  { test: 'TestValidateRayClusterStatus', cases: 4, reason: 'checks a RayCluster status, which rayshift never writes' },
  { test: 'TestValidateRayClusterSpecNames', cases: 3, reason: "a RayService's clusters are named <service>-xxxxx by the engine, from a name rayshift keeps within 47 characters (TestValidateRayServiceMetadata)" },
  { test: 'TestValidateRayClusterUpgradeOptions', cases: 4, reason: 'the 4 of its 6 cases about RayClusters created directly or by a RayJob; the 2 a RayService can reach are ported' },
  { test: 'TestValidateRayJobStatus', cases: 3, reason: NO_RAYJOB },
  { test: 'TestValidateRayJobSpec', cases: 22, reason: NO_RAYJOB },
  { test: 'TestValidateRayJobSpecWithFeatureGate', cases: 30, reason: NO_RAYJOB },
  { test: 'TestValidateRayJobMetadata', cases: 3, reason: NO_RAYJOB },
  { test: 'TestValidateRayCronJobSpec', cases: 10, reason: NO_RAYJOB },
];

/** Incremental-upgrade tests of rayservice_controller_unit_test.go that concern the executor's objects, not the engine's decisions. */
const KUBERAY_INCREMENTAL_NOT_PORTED: readonly NotPorted[] = [
  { test: 'TestCreateGateway', cases: 2, reason: 'builds the Gateway object: lib/runtime and the constructs (test/runtime, test/cdk8s)' },
  { test: 'TestReconcileGateway', cases: 2, reason: 'writes the Gateway object: lib/runtime (test/runtime)' },
  { test: 'TestReconcilePerClusterServeService', cases: 3, reason: "writes each cluster's serve Service: lib/runtime (test/runtime)" },
  { test: 'TestReconcileServe_SkipConfigUpdateDuringRollback', cases: 3, reason: 'when Serve configs are submitted is the executor\'s choice (lib/runtime), not an engine decision' },
];

/** Every `func Test…` of validation_test.go (v1.7.0), in file order. */
const VALIDATION_TESTS = [
  'TestValidateRayClusterStatus', 'TestValidateRayClusterSpecGcsFaultToleranceOptions', 'TestValidateRayClusterSpecEmbeddedGCSFeatureGate',
  'TestValidateGcsFaultToleranceEmbeddedReservedVolume', 'TestValidateRayClusterSpecRedisPassword', 'TestValidateRayClusterSpecRedisUsername',
  'TestValidateRayClusterSpecNames', 'TestValidateRayClusterSpecEmptyContainers', 'TestValidateRayClusterSpecSuspendingWorkerGroup',
  'TestValidateRayClusterSpecAutoscaler', 'TestValidateRayClusterSpec_Resources', 'TestValidateRayClusterSpec_Labels',
  'TestValidateRayClusterSpecRayVersionForAuth', 'TestValidateRayJobStatus', 'TestValidateRayJobSpec', 'TestValidateRayJobSpecWithFeatureGate',
  'TestValidateRayJobMetadata', 'TestValidateRayServiceSpec', 'TestValidateRayServiceMetadata', 'TestValidateClusterUpgradeOptions',
  'TestValidateRayClusterSpec_IdleTimeoutSeconds', 'TestValidateRayClusterSpec_Priority', 'TestValidateRayCronJobSpec',
  'TestValidateRayClusterUpgradeOptions', 'TestValidateRayClusterSpec_WorkerGroupReplicaValidation', 'TestValidateRayClusterSpec_Auth',
  'TestValidateNetworkPolicy', 'TestValidateRayClusterSpec_NetworkPolicyRequiresFeatureGate', 'TestValidateTLSOptions',
  'TestValidateRayClusterSpec_TLSOptionsRequiresFeatureGate', 'TestValidateRayClusterSpec_HistoryServerRequiresFeatureGate', 'TestValidateCollectorOptions',
];

/** The incremental-upgrade tests of rayservice_controller_unit_test.go (v1.7.0). */
const INCREMENTAL_TESTS = [
  'TestCreateGateway', 'TestCreateHTTPRoute', 'TestReconcileHTTPRoute', 'TestReconcileGateway', 'TestReconcileServeTargetCapacity',
  'TestCheckIfNeedTargetCapacityUpdate', 'TestReconcilePerClusterServeService', 'TestReconcileRollbackState',
  'TestShouldCompleteIncrementalRollback', 'TestReconcileServe_SkipConfigUpdateDuringRollback',
];

const VALIDATION = [...KUBERAY_SERVICE_CASES, ...KUBERAY_CLUSTER_CASES];
const RBG: UpstreamCase[] = [...rollingCases(), MIN_PROGRESS, ...FASTEST_SLOWEST, ...BOUNDS, ...PARTITIONS, ...MERGES];

describe('parity suite ledger', () => {
  test('case counts by outcome (same as upstream / deliberately different)', () => {
    expect({
      'KubeRay validation_test.go': tally(VALIDATION),
      'KubeRay rayservice_controller_unit_test.go (incremental upgrade)': tally(KUBERAY_INCREMENTAL_CASES),
      'RBG coordinated rolling update (v0.7.0, v0.8.0-alpha.5)': tally(RBG),
    }).toEqual({
      'KubeRay validation_test.go': { same: 93, different: 76 },
      'KubeRay rayservice_controller_unit_test.go (incremental upgrade)': { same: 25, different: 4 },
      'RBG coordinated rolling update (v0.7.0, v0.8.0-alpha.5)': { same: 45942, different: 10 },
    });
  });

  test('deliberate differences by README row', () => {
    const byRow = new Map<string, number>();
    for (const c of [...VALIDATION, ...KUBERAY_INCREMENTAL_CASES, ...RBG]) if (c.difference) byRow.set(c.difference, (byRow.get(c.difference) ?? 0) + 1);
    expect(Object.fromEntries(byRow)).toEqual({
      [DIFFERENCES.passedThrough]: 70,
      [DIFFERENCES.featureGated]: 5,
      [DIFFERENCES.workerGroups]: 1,
      [DIFFERENCES.routeFirst]: 3,
      [DIFFERENCES.capacityMoves]: 1,
      [DIFFERENCES.partitionKeepsAll]: 3,
      [DIFFERENCES.rbgOutOfRange]: 2,
      [DIFFERENCES.roleInTwoRules]: 5,
    });
    const rows = readmeDifferenceRules();
    expect(Object.values(DIFFERENCES).filter((d) => !rows.includes(d))).toEqual([]);
  });

  test('every test of the ported files is ported or listed with its reason', () => {
    const ported = new Set([...VALIDATION, ...KUBERAY_INCREMENTAL_CASES].map((c) => c.test));
    const listed = new Set([...KUBERAY_VALIDATION_NOT_PORTED, ...KUBERAY_INCREMENTAL_NOT_PORTED].map((n) => n.test));
    const unaccounted = [...VALIDATION_TESTS, ...INCREMENTAL_TESTS].filter((t) => !ported.has(t) && !listed.has(t));
    expect(unaccounted).toEqual([]);
    expect([...KUBERAY_VALIDATION_NOT_PORTED, ...KUBERAY_INCREMENTAL_NOT_PORTED].every((n) => n.reason.length > 0 && n.cases > 0)).toBe(true);
    expect(KUBERAY_VALIDATION_NOT_PORTED.reduce((a, n) => a + n.cases, 0)).toBe(79);
  });
});
