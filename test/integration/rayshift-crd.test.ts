/**
 * The `rayservices.rayshift.dev` CRD on a real kube-apiserver: it installs (Established) within the
 * CEL cost budget, a valid rayshift RayService is accepted, each invalid option is rejected at
 * admission with rayshift's CEL message (and by `lib/spec`, at the same field), the status
 * subresource holds rayshift's structural status, and `kubectl get` shows the printer columns.
 * Needs `npm run controlplane:build`.
 */
import * as fs from 'node:fs';
import { parse } from 'yaml';
import { SUPPORTED_VERSIONS, crdsOf } from '../../lib/crds/catalog';
import { RAYSHIFT_CEL_RULES, rayshiftRayServiceCrd } from '../../lib/crds/rayshift-crd';
import { RAYSHIFT_PRINTER_COLUMNS } from '../../lib/crds/rayshift-status-schema';
import { resolveCrdFile } from '../../lib/crds/resolve';
import { validateRayService } from '../../lib/spec';
import { ControlPlane, startControlPlane } from '../support/controlplane';
import { rayshiftService } from '../spec/fixtures';
import { waitFor } from '../support/wait-at-most';

const NS = 'rayshift-crd-it';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const RS = `/apis/rayshift.dev/v1alpha1/namespaces/${NS}/rayservices`;

let cp: ControlPlane;

async function upstreamRayServiceCrd(version: string): Promise<unknown> {
  const file = await resolveCrdFile(crdsOf('kuberay', version).find((c) => c.file === 'ray.io_rayservices.yaml')!);
  return parse(fs.readFileSync(file, 'utf8'), { maxAliasCount: -1 });
}

async function waitEstablished(name: string): Promise<any> {
  let body: any;
  await waitFor(async () => {
    const r = await cp.request('GET', `${CRDS}/${name}`);
    body = r.body;
    const established = (r.body?.status?.conditions ?? []).find((c: any) => c.type === 'Established');
    if (established?.status !== 'True') return `conditions: ${JSON.stringify(r.body?.status?.conditions)}`;
    return (await cp.request('GET', '/apis/rayshift.dev/v1alpha1/rayservices?limit=1')).status === 200 || 'Established, not served yet';
  }, `CRD ${name} to be Established and served`, { timeoutMs: 30_000, everyMs: 200 });
  return body;
}

let installed: any;

beforeAll(async () => {
  cp = await startControlPlane({});
  expect((await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
  const created = await cp.request('POST', CRDS, rayshiftRayServiceCrd(await upstreamRayServiceCrd('v1.7.0')));
  if (created.status !== 201) throw new Error(`installing the rayshift CRD: HTTP ${created.status}: ${created.body?.message}`);
  installed = await waitEstablished('rayservices.rayshift.dev');
}, 300_000);

afterAll(async () => {
  await cp?.stop();
});

/** A valid rayshift RayService (the model's fixture with every extension), in the test namespace. */
/** A valid analysis with `over` applied, its one metric with `metric` applied. */
function analysis(over: object, metric: object = {}): object {
  return { prometheusUrl: 'http://prometheus.monitoring:9090', metrics: [{ name: 'errors', template: 'ray-serve-error-ratio', successCondition: { maximum: 0.05 }, ...metric }], ...over };
}

function valid(name = 'llm'): any {
  const m = rayshiftService();
  m.metadata = { name, namespace: NS };
  return m;
}

describe('installing the CRD', () => {
  test.each(SUPPORTED_VERSIONS.kuberay)('the CRD built from KubeRay %s passes the API server\'s structural and CEL cost checks', async (version) => {
    // A dry-run replace of the installed CRD: full validation (structural schema, CEL compilation and cost), nothing stored.
    const crd: any = rayshiftRayServiceCrd(await upstreamRayServiceCrd(version));
    crd.metadata.resourceVersion = (await cp.request('GET', `${CRDS}/rayservices.rayshift.dev`)).body.metadata.resourceVersion;
    const r = await cp.request('PUT', `${CRDS}/rayservices.rayshift.dev?dryRun=All`, crd);
    expect(r.body?.message ?? '').toBe('');
    expect(r.status).toBe(200);
  });

  test('it is Established and served, with the status subresource and rayshift\'s printer columns', () => {
    const v = installed.spec.versions[0];
    expect(v.name).toBe('v1alpha1');
    expect(v.subresources).toEqual({ status: {} });
    expect(v.additionalPrinterColumns.map((c: any) => [c.name, c.jsonPath])).toEqual([
      ['Phase', '.status.phase'],
      ['Active', '.status.activeServiceStatus.rayClusterName'],
      ['Pending', '.status.pendingServiceStatus.rayClusterName'],
      ['Active Weight', '.status.activeServiceStatus.trafficRoutedPercent'],
      ['Pending Weight', '.status.pendingServiceStatus.trafficRoutedPercent'],
      ['Active Capacity', '.status.activeServiceStatus.targetCapacity'],
      ['Pending Capacity', '.status.pendingServiceStatus.targetCapacity'],
      ['Owner', '.status.owner.replica'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
    expect(v.additionalPrinterColumns.length).toBe(RAYSHIFT_PRINTER_COLUMNS.length);
    const rules = Object.values(RAYSHIFT_CEL_RULES).flat().length;
    const stored = JSON.stringify(v.schema).match(/"rule":/g)?.length ?? 0;
    // Every rayshift rule is stored, next to KubeRay's own (managedBy, gcsFaultToleranceOptions.backend).
    expect(stored).toBeGreaterThanOrEqual(rules);
  });

  test('a rule whose cost cannot be bounded is refused by the API server (why groupName uniqueness is not a CEL rule)', async () => {
    const crd: any = rayshiftRayServiceCrd(await upstreamRayServiceCrd('v1.7.0'));
    const groups = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.rayClusterConfig.properties.workerGroupSpecs;
    groups['x-kubernetes-validations'] = [{ rule: 'self.all(g, self.exists_one(h, h.groupName == g.groupName))', message: 'groupName must be unique' }];
    crd.metadata.resourceVersion = (await cp.request('GET', `${CRDS}/rayservices.rayshift.dev`)).body.metadata.resourceVersion;
    const r = await cp.request('PUT', `${CRDS}/rayservices.rayshift.dev?dryRun=All`, crd);
    expect(r.status).toBe(422);
    expect(r.body.message).toMatch(/estimated rule cost exceeds budget/);
  });
});

describe('admission', () => {
  test('a valid rayshift RayService is accepted, and so is one with only a gatewayRef (no gatewayClassName)', async () => {
    const m = valid('valid');
    expect(validateRayService(m).errors).toEqual([]);
    const r = await cp.request('POST', RS, m);
    expect(r.body?.message ?? '').toBe('');
    expect(r.status).toBe(201);
    expect(r.body.spec.rayshift).toEqual(m.spec.rayshift);

    const byRef = valid('by-ref');
    delete byRef.spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName;
    expect(validateRayService(byRef).errors).toEqual([]);
    expect((await cp.request('POST', RS, byRef)).status).toBe(201);

    const dotted = valid('dotted');
    dotted.spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName = 'gateway.example.com';
    dotted.spec.rayshift.gatewayRef.name = 'shared.gw';
    expect(validateRayService(dotted).errors).toEqual([]);
    expect((await cp.request('POST', RS, dotted)).status).toBe(201);
  });

  test('options of a non-incremental strategy are not range-checked (lib/spec only warns that they are ignored)', async () => {
    const m = valid('bluegreen');
    m.spec.upgradeStrategy = { type: 'NewCluster', clusterUpgradeOptions: { maxSurgePercent: 0, stepSizePercent: 0, intervalSeconds: 0, gatewayClassName: 'x' } };
    expect(validateRayService(m).errors).toEqual([]);
    expect((await cp.request('POST', RS, m)).status).toBe(201);
  });

  type Case = [label: string, mutate: (m: any) => void, celMessage: string, modelPath: string];
  const OPTS = 'spec.upgradeStrategy.clusterUpgradeOptions';
  const cases: Case[] = [
    ['upgrade type outside the enum', (m) => (m.spec.upgradeStrategy.type = 'BlueGreen'), 'spec.upgradeStrategy.type is not a strategy; allowed: NewCluster, NewClusterWithIncrementalUpgrade, None', 'spec.upgradeStrategy.type'],
    ['incremental without clusterUpgradeOptions', (m) => delete m.spec.upgradeStrategy.clusterUpgradeOptions, `${OPTS} are required for NewClusterWithIncrementalUpgrade`, OPTS],
    ['incremental with the autoscaler off', (m) => (m.spec.rayClusterConfig.enableInTreeAutoscaling = false), 'spec.rayClusterConfig.enableInTreeAutoscaling must be true: the Ray autoscaler is required for NewClusterWithIncrementalUpgrade', 'spec.rayClusterConfig.enableInTreeAutoscaling'],
    ['incremental with the autoscaler unset', (m) => delete m.spec.rayClusterConfig.enableInTreeAutoscaling, 'spec.rayClusterConfig.enableInTreeAutoscaling must be true', 'spec.rayClusterConfig.enableInTreeAutoscaling'],
    ['maxSurgePercent 0', (m) => (m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = 0), `${OPTS}.maxSurgePercent must be an integer from 1 to 100`, `${OPTS}.maxSurgePercent`],
    ['maxSurgePercent 101', (m) => (m.spec.upgradeStrategy.clusterUpgradeOptions.maxSurgePercent = 101), `${OPTS}.maxSurgePercent must be an integer from 1 to 100`, `${OPTS}.maxSurgePercent`],
    ['stepSizePercent 0', (m) => (m.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent = 0), `${OPTS}.stepSizePercent must be an integer from 1 to 100`, `${OPTS}.stepSizePercent`],
    ['stepSizePercent above maxSurgePercent', (m) => (m.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent = 30), `${OPTS}.stepSizePercent exceeds maxSurgePercent; must be ≤ maxSurgePercent`, `${OPTS}.stepSizePercent`],
    ['intervalSeconds 0', (m) => (m.spec.upgradeStrategy.clusterUpgradeOptions.intervalSeconds = 0), `${OPTS}.intervalSeconds must be an integer from 1 to 2147483647 (int32)`, `${OPTS}.intervalSeconds`],
    [
      'no gatewayClassName and no gatewayRef',
      (m) => {
        delete m.spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName;
        delete m.spec.rayshift.gatewayRef;
      },
      `${OPTS}.gatewayClassName is required for NewClusterWithIncrementalUpgrade unless spec.rayshift.gatewayRef names an existing Gateway`,
      `${OPTS}.gatewayClassName`,
    ],
    [
      'an empty gatewayClassName and no gatewayRef',
      (m) => {
        m.spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName = '';
        delete m.spec.rayshift.gatewayRef;
      },
      `${OPTS}.gatewayClassName is required for NewClusterWithIncrementalUpgrade`,
      `${OPTS}.gatewayClassName`,
    ],
    ['a gatewayClassName that is not a DNS subdomain', (m) => (m.spec.upgradeStrategy.clusterUpgradeOptions.gatewayClassName = 'Istio_Class'), `${OPTS}.gatewayClassName is not a DNS-1123 subdomain`, `${OPTS}.gatewayClassName`],
    ['rayClusterDeletionDelaySeconds -1', (m) => (m.spec.rayClusterDeletionDelaySeconds = -1), 'spec.rayClusterDeletionDelaySeconds must be an integer from 0 to 2147483647 (int32)', 'spec.rayClusterDeletionDelaySeconds'],
    ['a name of 48 characters', (m) => (m.metadata.name = 'a'.repeat(48)), 'metadata.name is too long; at most 47 characters are allowed', 'metadata.name'],
    ['a name starting with a digit', (m) => (m.metadata.name = '9lives'), 'metadata.name is not a DNS-1035 label', 'metadata.name'],
    ['a name with a dot', (m) => (m.metadata.name = 'llm.v2'), 'metadata.name is not a DNS-1035 label', 'metadata.name'],
    ['progressDeadlineSeconds 0', (m) => (m.spec.rayshift.progressDeadlineSeconds = 0), 'spec.rayshift.progressDeadlineSeconds must be an integer from 1 to 2147483647 (int32)', 'spec.rayshift.progressDeadlineSeconds'],
    ['routeKind TCP', (m) => (m.spec.rayshift.routeKind = 'TCP'), 'spec.rayshift.routeKind is not a route kind; allowed: HTTP, GRPC', 'spec.rayshift.routeKind'],
    ['surgeUnschedulableSeconds 0', (m) => (m.spec.rayshift.surgeUnschedulableSeconds = 0), 'spec.rayshift.surgeUnschedulableSeconds must be an integer from 1 to 2147483647 (int32)', 'spec.rayshift.surgeUnschedulableSeconds'],
    ['capacityPolicy shrinkLater', (m) => (m.spec.rayshift.capacityPolicy = 'shrinkLater'), 'spec.rayshift.capacityPolicy is not a capacity policy; allowed: wait, fail, shrinkFirst', 'spec.rayshift.capacityPolicy'],
    ['analysis prometheusUrl with a password', (m) => (m.spec.rayshift.analysis = analysis({ prometheusUrl: 'http://u:p@prom:9090' })), 'spec.rayshift.analysis.prometheusUrl must be an http:// or https:// URL', 'spec.rayshift.analysis.prometheusUrl'],
    ['analysis onFailure explode', (m) => (m.spec.rayshift.analysis = analysis({ onFailure: 'explode' })), 'spec.rayshift.analysis.onFailure is not a failure action; allowed: rollback, abort, pause', 'spec.rayshift.analysis.onFailure'],
    ['analysis that never measures', (m) => (m.spec.rayshift.analysis = analysis({ beforeEachStep: false })), 'spec.rayshift.analysis.beforeEachStep is false and background is not true', 'spec.rayshift.analysis.beforeEachStep'],
    ['analysis metric name Errors', (m) => (m.spec.rayshift.analysis = analysis({}, { name: 'Errors' })), 'spec.rayshift.analysis.metrics[*].name must be a DNS label', 'spec.rayshift.analysis.metrics[0].name'],
    ['analysis metric with query and template', (m) => (m.spec.rayshift.analysis = analysis({}, { query: 'up{c="{{cluster}}"}' })), 'spec.rayshift.analysis.metrics[*] needs exactly one of query and template', 'spec.rayshift.analysis.metrics[0]'],
    ['analysis template nope', (m) => (m.spec.rayshift.analysis = analysis({}, { template: 'nope' })), 'spec.rayshift.analysis.metrics[*].template is not a template', 'spec.rayshift.analysis.metrics[0].template'],
    ['analysis quantile 1', (m) => (m.spec.rayshift.analysis = analysis({}, { quantile: 1 })), 'spec.rayshift.analysis.metrics[*].quantile must be a number between 0 and 1 (exclusive)', 'spec.rayshift.analysis.metrics[0].quantile'],
    ['analysis condition without a bound', (m) => (m.spec.rayshift.analysis = analysis({}, { successCondition: {} })), 'spec.rayshift.analysis.metrics[*].successCondition needs at least one of maximum, minimum', 'spec.rayshift.analysis.metrics[0].successCondition'],
    ['a gatewayRef name that is not a DNS subdomain', (m) => (m.spec.rayshift.gatewayRef.name = 'Shared_GW'), 'spec.rayshift.gatewayRef.name must name a Gateway (a DNS subdomain)', 'spec.rayshift.gatewayRef.name'],
    ['a gatewayRef namespace that is not a namespace name', (m) => (m.spec.rayshift.gatewayRef.namespace = 'Gate_Ways'), 'spec.rayshift.gatewayRef.namespace must be a namespace name', 'spec.rayshift.gatewayRef.namespace'],
    [
      'a head Service name',
      (m) => (m.spec.rayClusterConfig.headGroupSpec.headService = { metadata: { name: 'my-head' } }),
      'spec.rayClusterConfig.headGroupSpec.headService.metadata.name must not be set',
      'spec.rayClusterConfig.headGroupSpec.headService.metadata.name',
    ],
    ['maxReplicas below minReplicas', (m) => Object.assign(m.spec.rayClusterConfig.workerGroupSpecs[0], { replicas: 1, minReplicas: 3, maxReplicas: 2 }), 'spec.rayClusterConfig.workerGroupSpecs[*].maxReplicas is below minReplicas', 'spec.rayClusterConfig.workerGroupSpecs[0].maxReplicas'],
    ['minReplicas -1', (m) => (m.spec.rayClusterConfig.workerGroupSpecs[0].minReplicas = -1), 'spec.rayClusterConfig.workerGroupSpecs[*].minReplicas must be an integer ≥ 0', 'spec.rayClusterConfig.workerGroupSpecs[0].minReplicas'],
    ['maxReplicas -1', (m) => Object.assign(m.spec.rayClusterConfig.workerGroupSpecs[0], { replicas: 0, minReplicas: 0, maxReplicas: -1 }), 'spec.rayClusterConfig.workerGroupSpecs[*].maxReplicas must be an integer ≥ 0', 'spec.rayClusterConfig.workerGroupSpecs[0].maxReplicas'],
    ['replicas -1', (m) => Object.assign(m.spec.rayClusterConfig.workerGroupSpecs[0], { replicas: -1, minReplicas: 0 }), 'spec.rayClusterConfig.workerGroupSpecs[*].replicas must be an integer ≥ 0', 'spec.rayClusterConfig.workerGroupSpecs[0].replicas'],
  ];

  test('every CEL rule of the CRD has a case below', () => {
    for (const rule of Object.values(RAYSHIFT_CEL_RULES).flat()) {
      expect(cases.filter(([, , message]) => rule.message.includes(message)).map(([label]) => label)).not.toEqual([]);
    }
  });

  test.each(cases)('%s is rejected with 422 and rayshift\'s message, as lib/spec rejects it', async (label, mutate, celMessage, modelPath) => {
    const m = valid(`bad-${cases.findIndex((c) => c[0] === label)}`);
    mutate(m);
    // The model rejects it at the same field ...
    expect(validateRayService(m).errors.map((e) => e.path)).toContain(modelPath);
    // ... and so does the API server, with the CEL rule's message.
    const r = await cp.request('POST', RS, m);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.message).toContain(celMessage);
    if (!modelPath.startsWith('metadata.') && !modelPath.includes('[0]')) {
      expect(r.body.details.causes.map((c: any) => c.field)).toContain(modelPath);
    }
  });

  test('the rules apply to updates too', async () => {
    const m = valid('updated');
    const created = await cp.request('POST', RS, m);
    expect(created.status).toBe(201);
    const r = await cp.request('PATCH', `${RS}/updated`, { spec: { upgradeStrategy: { clusterUpgradeOptions: { stepSizePercent: 50 } } } }, { contentType: 'application/merge-patch+json' });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('stepSizePercent exceeds maxSurgePercent; must be ≤ maxSurgePercent');
  });
});

describe('status', () => {
  test('the status subresource keeps rayshift\'s fields (engine state verbatim), prunes unknown ones, and the printer columns show them', async () => {
    expect((await cp.request('POST', RS, valid('observed'))).status).toBe(201);
    const status = {
      observedGeneration: 1,
      phase: 'Upgrading',
      reason: 'WaitingForInterval',
      message: 'next traffic step at 12:00:30',
      nextStepAt: '2026-01-01T12:00:30Z',
      activeServiceStatus: { rayClusterName: 'observed-aaaaa', targetCapacity: 80, trafficRoutedPercent: 75, lastTrafficMigratedTime: '2026-01-01T12:00:00Z' },
      pendingServiceStatus: {
        rayClusterName: 'observed-bbbbb',
        targetCapacity: 40,
        trafficRoutedPercent: 25,
        lastTrafficMigratedTime: '2026-01-01T12:00:00Z',
        applicationStatuses: { llm: { status: 'RUNNING', serveDeploymentStatuses: { LLMServer: { status: 'HEALTHY' } } } },
      },
      conditions: [{ type: 'UpgradeInProgress', status: 'True', reason: 'BothActivePendingClustersExist', message: '', lastTransitionTime: '2026-01-01T11:59:00Z', observedGeneration: 1 }],
      engineState: { phase: 'Upgrading', activeWeight: 75, pendingWeight: 25, scheduledDeletions: [] },
      owner: { replica: 'rayshift-operator-7d9f-x2k4p', shard: 5 },
      somethingElse: 'pruned',
    };
    const w = await cp.request('PATCH', `${RS}/observed/status`, { status }, { contentType: 'application/merge-patch+json' });
    expect(w.status).toBe(200);
    const { somethingElse: _pruned, ...kept } = status;
    expect(w.body.status).toEqual(kept);

    // Out-of-range capacities are refused by the status schema.
    const bad = await cp.request('PATCH', `${RS}/observed/status`, { status: { activeServiceStatus: { targetCapacity: 101 } } }, { contentType: 'application/merge-patch+json' });
    expect(bad.status).toBe(422);

    // The main resource ignores status writes (subresource semantics).
    const main = await cp.request('PATCH', `${RS}/observed`, { status: { phase: 'Running' } }, { contentType: 'application/merge-patch+json' });
    expect(main.status).toBe(200);
    expect(main.body.status.phase).toBe('Upgrading');

    const table = await cp.request('GET', `${RS}/observed`, undefined, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expect(table.status).toBe(200);
    const names = table.body.columnDefinitions.map((c: any) => c.name);
    expect(names).toEqual(['Name', 'Phase', 'Active', 'Pending', 'Active Weight', 'Pending Weight', 'Active Capacity', 'Pending Capacity', 'Owner', 'Age']);
    // Owner has priority 1: kubectl shows it with -o wide only.
    expect(table.body.columnDefinitions.find((c: any) => c.name === 'Owner').priority).toBe(1);
    expect(table.body.rows[0].cells.slice(0, 9)).toEqual(['observed', 'Upgrading', 'observed-aaaaa', 'observed-bbbbb', 75, 25, 80, 40, 'rayshift-operator-7d9f-x2k4p']);
  });
});
