/**
 * validateRayService's rules beyond KubeRay: zero surge or step (which stall), non-dividing steps,
 * the resolved-options guard, gateway class, name, deletion delay, serveConfigV2, strategy type,
 * rayshift.dev extensions, head service, worker groups and malformed manifests.
 */
import { MAX_RAY_SERVICE_NAME_LENGTH, assertResolvedUpgradeOptions, resolveUpgradeOptions, validateRayService } from '../../lib/spec';
import { planRayService } from '../../lib/engine';
import { errorPaths, expectClean, expectErrorAt, expectOnlyError, podTemplate, rayService, rayshiftService } from './fixtures';
import { OPTS, withOption } from './support/rayservice-fixtures';

describe('validateRayService: rules beyond KubeRay', () => {
  test('maxSurgePercent 0 (which KubeRay accepts) is rejected with the stall explanation', () => {
    expectOnlyError(validateRayService(withOption('maxSurgePercent', 0)), `${OPTS}.maxSurgePercent`, 'from 1 to 100', 'got 0', 'never adds capacity', 'stall forever');
  });

  test('stepSizePercent 0 (which KubeRay accepts) is rejected with the stall explanation', () => {
    expectOnlyError(validateRayService(withOption('stepSizePercent', 0)), `${OPTS}.stepSizePercent`, 'from 1 to 100', 'got 0', 'never moves traffic', 'stall forever');
  });

  test('a step that does not divide the surge is a warning, not an error, that names the first cut step, which the engine\'s plan takes', () => {
    const m = rayService();
    m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = 25;
    m.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent = 10;
    const r = validateRayService(m);
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => w.path)).toEqual([`${OPTS}.stepSizePercent`]);
    expect(r.warnings[0].message).toContain('10 does not divide maxSurgePercent 25');
    expect(r.warnings[0].message).toContain('cut to what is left (the first to 5;');
    // KubeRay caps each step at the pending target capacity: 10, 20, then 5 to 25.
    const shifts = planRayService({ kind: 'RayService', name: 'llm', options: resolveUpgradeOptions(m.spec) }).steps.filter((s) => s.action === 'shift-traffic');
    expect(shifts.slice(0, 3).map((s) => s.pendingWeight)).toEqual([10, 20, 25]);
  });

  test('hand-built options out of range fail the guard with the field, the value and the range', () => {
    const good = resolveUpgradeOptions(rayService().spec);
    expect(() => assertResolvedUpgradeOptions(good)).not.toThrow();
    expect(() => assertResolvedUpgradeOptions({ ...good, stepSizePercent: 0 })).toThrow(new RangeError('stepSizePercent is 0; allowed: an integer 1–100'));
    expect(() => assertResolvedUpgradeOptions({ ...good, intervalSeconds: Infinity })).toThrow(new RangeError('intervalSeconds is Infinity; allowed: a finite number > 0'));
    expect(() => assertResolvedUpgradeOptions({ ...good, progressDeadlineSeconds: -1 })).toThrow(new RangeError('progressDeadlineSeconds is -1; allowed: a finite number ≥ 0'));
    expect(() => assertResolvedUpgradeOptions({ ...good, strategy: 'Canary' as never })).toThrow(new RangeError('strategy is Canary; allowed: NewCluster, NewClusterWithIncrementalUpgrade, None'));
  });

  test('a dividing step gives no warning', () => {
    expectClean(validateRayService(withOption('stepSizePercent', 10)));
  });

  test.each(['Istio_Class', 'istio.', 'Istio', '-istio'])('gatewayClassName %p is not a DNS subdomain', (v) => {
    expectOnlyError(validateRayService(withOption('gatewayClassName', v)), `${OPTS}.gatewayClassName`, JSON.stringify(v), 'DNS-1123 subdomain');
  });

  test('gatewayClassName of 254 characters is too long', () => {
    const v = ['a'.repeat(63), 'a'.repeat(63), 'a'.repeat(63), 'a'.repeat(62)].join('.');
    expect(v.length).toBe(254);
    expectOnlyError(validateRayService(withOption('gatewayClassName', v)), `${OPTS}.gatewayClassName`, '254 characters', 'at most 253');
  });

  test('gatewayClassName with dots is a valid subdomain', () => {
    expectClean(validateRayService(withOption('gatewayClassName', 'gateway.example.com')));
  });

  test('gatewayClassName that is not a string is rejected', () => {
    expectOnlyError(validateRayService(withOption('gatewayClassName', 42)), `${OPTS}.gatewayClassName`, 'must be a string', 'got 42');
  });

  test('the operator kind with a gatewayRef may leave gatewayClassName unset', () => {
    const m = rayshiftService();
    delete m.spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName;
    expectClean(validateRayService(m));
  });

  test('the operator kind without a gatewayRef still needs gatewayClassName', () => {
    const m = rayshiftService();
    delete m.spec.rayshift.gatewayRef;
    delete m.spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName;
    expectOnlyError(validateRayService(m), `${OPTS}.gatewayClassName`, 'required');
  });

  test(`a name of ${MAX_RAY_SERVICE_NAME_LENGTH + 1} characters is too long; ${MAX_RAY_SERVICE_NAME_LENGTH} is fine`, () => {
    expect(MAX_RAY_SERVICE_NAME_LENGTH).toBe(47);
    const m = rayService();
    m.metadata.name = 'a'.repeat(48);
    expectOnlyError(validateRayService(m), 'metadata.name', '48 characters', 'at most 47');
    m.metadata.name = 'a'.repeat(47);
    expectClean(validateRayService(m));
  });

  test.each(['Llm', 'llm_service', '1llm', 'llm-', 'llm.svc'])('name %p is not a DNS-1035 label', (name) => {
    const m = rayService();
    m.metadata.name = name;
    expectOnlyError(validateRayService(m), 'metadata.name', JSON.stringify(name), 'DNS-1035 label');
  });

  test('a missing name is rejected', () => {
    const m = rayService();
    delete m.metadata.name;
    expectOnlyError(validateRayService(m), 'metadata.name', 'required', 'unset');
  });

  test('rayClusterDeletionDelaySeconds below 0 is rejected', () => {
    const m = rayService();
    m.spec.rayClusterDeletionDelaySeconds = -1;
    expectOnlyError(validateRayService(m), 'spec.rayClusterDeletionDelaySeconds', 'integer from 0 to 2147483647', 'got -1');
  });

  test('rayClusterDeletionDelaySeconds above int32 is rejected', () => {
    const m = rayService();
    m.spec.rayClusterDeletionDelaySeconds = 1e10;
    expectOnlyError(validateRayService(m), 'spec.rayClusterDeletionDelaySeconds', 'integer from 0 to 2147483647', 'got 10000000000');
  });

  test.each([[1.5, 'got 1.5'], ['60', 'got "60"']])('rayClusterDeletionDelaySeconds %p is not an integer', (v, shown) => {
    const m = rayService();
    m.spec.rayClusterDeletionDelaySeconds = v;
    expectOnlyError(validateRayService(m), 'spec.rayClusterDeletionDelaySeconds', 'integer from 0 to 2147483647', shown);
  });

  test('rayClusterDeletionDelaySeconds 0 is valid (delete at once)', () => {
    const m = rayService();
    m.spec.rayClusterDeletionDelaySeconds = 0;
    expectClean(validateRayService(m));
  });

  test('serveConfigV2 that is not YAML is rejected at spec.serveConfigV2', () => {
    const m = rayService();
    m.spec.serveConfigV2 = 'applications: [\n  - name: x';
    expectOnlyError(validateRayService(m), 'spec.serveConfigV2', 'not valid YAML');
  });

  test('serveConfigV2 with no applications is rejected', () => {
    const m = rayService();
    m.spec.serveConfigV2 = 'applications: []\n';
    expectOnlyError(validateRayService(m), 'spec.serveConfigV2.applications', 'at least one application', 'got []');
  });

  test('serveConfigV2 with duplicate application names is rejected', () => {
    const m = rayService();
    m.spec.serveConfigV2 = 'applications:\n  - {name: a, import_path: "m:app", route_prefix: /a}\n  - {name: a, import_path: "m:app", route_prefix: /b}\n';
    expectOnlyError(validateRayService(m), 'spec.serveConfigV2.applications[1].name', '"a"', 'already used by applications[0]', 'unique');
  });

  test('serveConfigV2 with a bad import_path is rejected', () => {
    const m = rayService();
    m.spec.serveConfigV2 = 'applications:\n  - {name: a, import_path: "not a path"}\n';
    expectOnlyError(validateRayService(m), 'spec.serveConfigV2.applications[0].import_path', 'Python import path', '"not a path"');
  });

  test('target_capacity set by hand under an incremental upgrade is rejected', () => {
    const m = rayService();
    m.spec.serveConfigV2 = `${m.spec.serveConfigV2}target_capacity: 50\n`;
    expectOnlyError(validateRayService(m), 'spec.serveConfigV2.target_capacity', 'driven by the incremental upgrade', 'got 50');
  });

  test('target_capacity under a blue/green upgrade is allowed', () => {
    const m = rayService();
    m.spec.upgradeStrategy = { type: 'NewCluster' };
    m.spec.serveConfigV2 = `${m.spec.serveConfigV2}target_capacity: 50\n`;
    expectClean(validateRayService(m));
  });

  test('serveConfigV2 not a string is rejected', () => {
    const m = rayService();
    m.spec.serveConfigV2 = { applications: [] };
    expectOnlyError(validateRayService(m), 'spec.serveConfigV2', 'must be a YAML string');
  });

  test('an unknown strategy type is rejected with the allowed values', () => {
    const m = rayService();
    m.spec.upgradeStrategy = { type: 'BlueGreen' };
    expectOnlyError(validateRayService(m), 'spec.upgradeStrategy.type', '"BlueGreen"', 'NewCluster, NewClusterWithIncrementalUpgrade, None');
  });

  test('an upgradeStrategy that is not a mapping is rejected', () => {
    const m = rayService();
    m.spec.upgradeStrategy = 'NewCluster';
    expectOnlyError(validateRayService(m), 'spec.upgradeStrategy', 'must be a mapping', '"NewCluster"');
  });

  test('rayshift extensions on ray.io/v1 are rejected', () => {
    const m = rayService();
    m.spec.rayshift = { routeKind: 'HTTP' };
    expectOnlyError(validateRayService(m), 'spec.rayshift', 'rayshift.dev/v1alpha1', '"ray.io/v1"');
  });

  test.each([0, -1, 1.5, '600', 2 ** 31])('progressDeadlineSeconds %p is rejected', (v) => {
    const m = rayshiftService();
    m.spec.rayshift.progressDeadlineSeconds = v;
    expectOnlyError(validateRayService(m), 'spec.rayshift.progressDeadlineSeconds', 'integer from 1 to 2147483647', `got ${JSON.stringify(v)}`);
  });

  test('routeKind other than HTTP or GRPC is rejected', () => {
    const m = rayshiftService();
    m.spec.rayshift.routeKind = 'TCP';
    expectOnlyError(validateRayService(m), 'spec.rayshift.routeKind', '"TCP"', 'HTTP, GRPC');
    m.spec.rayshift.routeKind = 'GRPC';
    expectClean(validateRayService(m));
  });

  test('capacityPolicy: wait and fail pass; shrinkFirst passes with the warning of what it trades; anything else lists the allowed values', () => {
    const m = rayshiftService();
    for (const ok of ['wait', 'fail']) {
      m.spec.rayshift.capacityPolicy = ok;
      expectClean(validateRayService(m));
    }
    m.spec.rayshift.capacityPolicy = 'Wait';
    expectOnlyError(validateRayService(m), 'spec.rayshift.capacityPolicy', '"Wait" is not a capacity policy', 'allowed: wait, fail, shrinkFirst');
  });

  test('capacityPolicy shrinkFirst: a warning with the dip it costs; maxSurgePercent 100 and a strategy other than the incremental upgrade are errors', () => {
    const m = rayshiftService();
    m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = 25;
    m.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent = 25;
    m.spec.rayshift.capacityPolicy = 'shrinkFirst';
    const r = validateRayService(m);
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => [w.path, w.message])).toEqual([[
      'spec.rayshift.capacityPolicy',
      '"shrinkFirst" trades availability for accelerators: when the new Pods fit only once the old cluster shrinks, each step first lowers the old cluster\'s capacity by maxSurgePercent 25, so the service runs at 75% until the new cluster\'s Pods are ready (`rayshift plan` shows the dips)',
    ]]);
    m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = 100;
    expectOnlyError(validateRayService(m), `${OPTS}.maxSurgePercent`, 'is 100 with capacityPolicy shrinkFirst', 'nothing would serve', 'must be an integer from 1 to 99', 'got 100');
    delete m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent;
    expectOnlyError(validateRayService(m), `${OPTS}.maxSurgePercent`, 'is 100 with capacityPolicy shrinkFirst', 'the default is 100');
    m.spec.upgradeStrategy = { type: 'NewCluster' };
    expectOnlyError(validateRayService(m), 'spec.rayshift.capacityPolicy', '"shrinkFirst"', 'needs upgradeStrategy.type NewClusterWithIncrementalUpgrade');
  });

  test('assertResolvedUpgradeOptions refuses shrinkFirst with maxSurgePercent 100, naming the range', () => {
    const m = rayshiftService();
    m.spec.rayshift.capacityPolicy = 'shrinkFirst';
    m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = 100;
    expect(() => assertResolvedUpgradeOptions(resolveUpgradeOptions(m.spec))).toThrow('maxSurgePercent is 100 with capacityPolicy shrinkFirst; allowed: 1–99');
    m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = 50;
    expect(() => assertResolvedUpgradeOptions(resolveUpgradeOptions(m.spec))).not.toThrow();
  });

  test('surgeUnschedulableSeconds: an integer from 1 to int32 max', () => {
    const m = rayshiftService();
    for (const ok of [1, 120, 2147483647]) {
      m.spec.rayshift.surgeUnschedulableSeconds = ok;
      expectClean(validateRayService(m));
    }
    for (const bad of [0, -5, 1.5, 2147483648, '60']) {
      m.spec.rayshift.surgeUnschedulableSeconds = bad;
      expectOnlyError(validateRayService(m), 'spec.rayshift.surgeUnschedulableSeconds', 'must be an integer from 1 to 2147483647 (int32)', `got ${JSON.stringify(bad)}`);
    }
  });

  test('gatewayRef with a bad name or namespace is rejected', () => {
    const m = rayshiftService();
    m.spec.rayshift.gatewayRef = { name: 'Shared_GW' };
    expectOnlyError(validateRayService(m), 'spec.rayshift.gatewayRef.name', 'DNS subdomain', '"Shared_GW"');
    m.spec.rayshift.gatewayRef = {};
    expectOnlyError(validateRayService(m), 'spec.rayshift.gatewayRef.name', 'unset');
    m.spec.rayshift.gatewayRef = { name: 'shared', namespace: 'Gate Ways' };
    expectOnlyError(validateRayService(m), 'spec.rayshift.gatewayRef.namespace', 'namespace name', '"Gate Ways"');
  });

  test('paused that is not a boolean and extensions that are not a mapping are rejected', () => {
    const m = rayshiftService();
    m.spec.rayshift.paused = 'yes';
    expectOnlyError(validateRayService(m), 'spec.rayshift.paused', 'true or false', '"yes"');
    m.spec.rayshift = 'on';
    expectOnlyError(validateRayService(m), 'spec.rayshift', 'must be a mapping', '"on"');
  });

  test('headService.metadata.name must not be set', () => {
    const m = rayService();
    m.spec.rayClusterConfig.headGroupSpec.headService = { metadata: { name: 'my-head' } };
    expectOnlyError(validateRayService(m), 'spec.rayClusterConfig.headGroupSpec.headService.metadata.name', 'must not be set', '"my-head"');
  });

  test('a worker group with minReplicas above maxReplicas is rejected', () => {
    const m = rayService();
    Object.assign(m.spec.rayClusterConfig.workerGroupSpecs[0], { replicas: 3, minReplicas: 3, maxReplicas: 2 });
    const r = validateRayService(m);
    expectErrorAt(r, 'spec.rayClusterConfig.workerGroupSpecs[0].maxReplicas', '2 is below minReplicas 3');
    // replicas 3 is then also above maxReplicas 2
    expectErrorAt(r, 'spec.rayClusterConfig.workerGroupSpecs[0].replicas', '3 is outside [minReplicas 3, maxReplicas 2]');
    expect(r.errors).toHaveLength(2);
  });

  test('worker replicas outside [min, max] are rejected', () => {
    const m = rayService();
    m.spec.rayClusterConfig.workerGroupSpecs[0].replicas = 5;
    expectOnlyError(validateRayService(m), 'spec.rayClusterConfig.workerGroupSpecs[0].replicas', '5 is outside [minReplicas 1, maxReplicas 4]');
  });

  test('negative and non-integer replica counts are rejected', () => {
    const m = rayService();
    m.spec.rayClusterConfig.workerGroupSpecs[0] = { groupName: 'cpu', minReplicas: -1, template: podTemplate(0) };
    expectOnlyError(validateRayService(m), 'spec.rayClusterConfig.workerGroupSpecs[0].minReplicas', 'integer ≥ 0', 'got -1');
  });

  test('duplicate worker group names and containerless templates are rejected', () => {
    const m = rayService();
    const g = m.spec.rayClusterConfig.workerGroupSpecs[0];
    m.spec.rayClusterConfig.workerGroupSpecs.push({ ...g, template: { spec: { containers: [] } } });
    const r = validateRayService(m);
    expect(errorPaths(r).sort()).toEqual(
      ['spec.rayClusterConfig.workerGroupSpecs[1].groupName', 'spec.rayClusterConfig.workerGroupSpecs[1].template.spec.containers'].sort(),
    );
    expectErrorAt(r, 'spec.rayClusterConfig.workerGroupSpecs[1].groupName', '"cpu" is already used by workerGroupSpecs[0]');
  });

  test('a missing rayClusterConfig, headGroupSpec or spec is rejected at the right path', () => {
    const m = rayService();
    delete m.spec.rayClusterConfig.headGroupSpec;
    expectOnlyError(validateRayService(m), 'spec.rayClusterConfig.headGroupSpec', 'required');
    delete m.spec.rayClusterConfig;
    // The incremental autoscaler rule also fires, since there is no cluster to enable it in.
    const r = validateRayService(m);
    expectErrorAt(r, 'spec.rayClusterConfig', 'RayCluster spec');
    delete m.spec;
    expectOnlyError(validateRayService(m), 'spec', 'required');
  });

  test('non-object manifests give errors, not exceptions', () => {
    for (const m of [null, undefined, 42, 'RayService', [], { metadata: 'x', spec: [] }]) {
      const r = validateRayService(m);
      expect(errorPaths(r)).toEqual(expect.arrayContaining(['metadata.name', 'spec']));
    }
  });
});
