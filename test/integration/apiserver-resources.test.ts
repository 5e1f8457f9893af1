/**
 * The API server's resources over every protocol against a real kube-apiserver: the same RPC answered
 * equally over gRPC, Connect and REST; REST paths, query parameters and bodies as the annotations
 * say; `validate_only` listing every violation; ALREADY_EXISTS, ABORTED (stale etag) and
 * FAILED_PRECONDITION (expired page token); update masks; plans (a shrinkFirst plan with its dip);
 * KubeRay RayServices; clusters expanded from label-checked compute templates;
 * `spec.rayshift.analysis` kept as written.
 */
import { fromJson, toJson } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { BadRequestSchema } from '../../lib/apiserver/gen/google/rpc/error_details_pb';
import { RayServiceSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_pb';
import { ApiEnv, TEAM_A, eventAbout, rayServiceBody, startApiEnv } from '../apiserver/support/api-env';
import { waitFor } from '../support/operator-env';

let env: ApiEnv;
const base = `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`;

beforeAll(async () => {
  // Frequent etcd compaction makes Kubernetes continue tokens expire within seconds.
  env = await startApiEnv({ apiserverArgs: ['--etcd-compaction-interval=5s'] });
  expect((await env.rest('POST', base, rayServiceBody('shared'))).status).toBe(200);
}, 180_000);

afterAll(async () => {
  await env?.stop();
});

test('GetRayService answers equally over gRPC, Connect (binary and JSON), gRPC-Web and REST', async () => {
  const req = { namespace: TEAM_A, name: 'shared' };
  const answers = await Promise.all([
    env.client('grpc', env.tokens.alice).rayServices.getRayService(req),
    env.client('connect', env.tokens.alice).rayServices.getRayService(req),
    env.client('grpc-web', env.tokens.alice).rayServices.getRayService(req),
  ]);
  const json = answers.map((a) => toJson(RayServiceSchema, a, { alwaysEmitImplicit: true }));
  const rest = await env.rest('GET', `${base}/shared`);
  expect(rest.status).toBe(200);
  for (const j of json) expect(j).toEqual(rest.body);
  expect(rest.body.spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent).toBe(25);
  expect(rest.body.etag).toMatch(/^\d+$/);
});

test('query parameters bind request fields: page_size and page_token page through a list', async () => {
  for (const n of ['page-1', 'page-2']) expect((await env.rest('POST', base, rayServiceBody(n))).status).toBe(200);
  const first = await env.rest('GET', `${base}?page_size=2`);
  expect(first.body.rayServices).toHaveLength(2);
  expect(first.body.nextPageToken).not.toBe('');
  const second = await env.rest('GET', `${base}?pageSize=2&page_token=${encodeURIComponent(first.body.nextPageToken)}`);
  expect(second.body.rayServices.length).toBeGreaterThanOrEqual(1);
  const names = [...first.body.rayServices, ...second.body.rayServices].map((s: { name: string }) => s.name);
  expect(new Set(names).size).toBe(names.length);
  expect((await env.rest('GET', `${base}?no_such_field=1`)).status).toBe(400);
  expect((await env.rest('GET', `${base}?page_token=garbage!`)).body.code).toBe(Code.InvalidArgument);
});

test('validate_only returns every violation with its field and creates nothing', async () => {
  const bad = rayServiceBody('Invalid_Name') as any;
  bad.spec.upgradeStrategy.clusterUpgradeOptions = { maxSurgePercent: 0, stepSizePercent: 0, intervalSeconds: 0, gatewayClassName: '' };
  bad.spec.rayClusterDeletionDelaySeconds = -1;
  bad.spec.rayClusterConfig.enableInTreeAutoscaling = false;
  const answer = await env.rest('POST', `${base}?validate_only=true`, bad);
  expect(answer.status).toBe(400);
  expect(answer.body.code).toBe(Code.InvalidArgument);
  const detail = answer.body.details.find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest');
  const fields = detail.fieldViolations.map((v: { field: string }) => v.field).sort();
  expect(fields).toEqual(
    [
      'ray_service.name',
      'ray_service.spec.ray_cluster_config.enableInTreeAutoscaling',
      'ray_service.spec.ray_cluster_deletion_delay_seconds',
      'ray_service.spec.upgrade_strategy.cluster_upgrade_options.gateway_class_name',
      'ray_service.spec.upgrade_strategy.cluster_upgrade_options.interval_seconds',
      'ray_service.spec.upgrade_strategy.cluster_upgrade_options.max_surge_percent',
      'ray_service.spec.upgrade_strategy.cluster_upgrade_options.step_size_percent',
    ].sort(),
  );
  // Over gRPC the same violations arrive as a BadRequest detail.
  const grpc = await env.client('grpc', env.tokens.alice).rayServices.createRayService({ namespace: TEAM_A, validateOnly: true, rayService: { name: 'Invalid_Name' } }).catch((e) => e);
  expect(grpc.code).toBe(Code.InvalidArgument);
  // A valid one dry-runs and is not stored.
  const ok = await env.rest('POST', `${base}?validate_only=true`, rayServiceBody('dry-run'));
  expect(ok.status).toBe(200);
  expect((await env.rest('GET', `${base}/dry-run`)).status).toBe(404);
});

test('creating twice is ALREADY_EXISTS / 409 and a stale etag is ABORTED / 409', async () => {
  const twice = await env.rest('POST', base, rayServiceBody('shared'));
  expect(twice.status).toBe(409);
  expect(twice.body.code).toBe(Code.AlreadyExists);
  expect(twice.body.message).toBe('RayService shared in namespace team-a already exists');

  const read = (await env.rest('GET', `${base}/shared`)).body;
  expect((await env.rest('PUT', `${base}/shared`, { ...read, labels: { v: '1' } })).status).toBe(200);
  const stale = await env.rest('PUT', `${base}/shared`, { ...read, labels: { v: '2' } });
  expect(stale.status).toBe(409);
  expect(stale.body.code).toBe(Code.Aborted);
  const staleDelete = await env.rest('DELETE', `${base}/shared?etag=${read.etag}`);
  expect(staleDelete.body.code).toBe(Code.Aborted);
});

test('PATCH changes only the fields of update_mask', async () => {
  const before = (await env.rest('GET', `${base}/shared`)).body;
  const patched = await env.rest('PATCH', `${base}/shared?update_mask=spec.upgrade_strategy.cluster_upgrade_options.step_size_percent,labels`, {
    labels: { patched: 'yes' },
    spec: { upgradeStrategy: { clusterUpgradeOptions: { stepSizePercent: 10 } }, serveConfigV2: 'ignored: not in the mask' },
  });
  expect(patched.status).toBe(200);
  expect(patched.body.labels).toEqual({ patched: 'yes' });
  expect(patched.body.spec.upgradeStrategy.clusterUpgradeOptions).toMatchObject({ stepSizePercent: 10, maxSurgePercent: 50, intervalSeconds: 1 });
  expect(patched.body.spec.serveConfigV2).toBe(before.spec.serveConfigV2);
  expect((await env.rest('PATCH', `${base}/shared?update_mask=name`, { name: 'other' })).status).toBe(400);
});

test('the raw overlay reaches CRD fields the typed spec lacks, and comes back on reads', async () => {
  const body = rayServiceBody('overlaid') as any;
  body.spec.overlay = { excludeHeadPodFromServeSvc: true };
  expect((await env.rest('POST', base, body)).status).toBe(200);
  const stored = await env.admin.get({ apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true }, 'overlaid', TEAM_A);
  expect((stored.spec as { excludeHeadPodFromServeSvc?: boolean }).excludeHeadPodFromServeSvc).toBe(true);
  expect((await env.rest('GET', `${base}/overlaid`)).body.spec.overlay).toEqual({ excludeHeadPodFromServeSvc: true });
});

test('spec.rayshift.analysis: created over REST, read back equally, patched by update_mask; a bad one names its fields', async () => {
  const RAYSHIFT = { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', plural: 'rayservices', namespaced: true };
  const stored = async () => ((await env.admin.get(RAYSHIFT, 'analysed', TEAM_A)).spec as any).rayshift.analysis;
  const analysis = {
    prometheusUrl: 'http://prometheus.monitoring:9090',
    metrics: [
      { name: 'error-ratio', template: 'ANALYSIS_TEMPLATE_RAY_SERVE_ERROR_RATIO', successCondition: { maximum: 0.02, minimum: 0 }, count: 3, failureLimit: 0 },
      { name: 'p99', query: 'sum(rate(x{cluster="{{cluster}}"}[{{window}}]))', successCondition: { maxAboveActive: 200 }, intervalSeconds: 20 },
    ],
    beforeEachStep: false,
    background: true,
    holds: [{ weightPercent: 50, seconds: 300 }],
    onFailure: 'ANALYSIS_FAILURE_ACTION_PAUSE',
  };
  const body = rayServiceBody('analysed') as any;
  body.spec.rayshift = { analysis };
  expect((await env.rest('POST', base, body)).status).toBe(200);
  // Stored in CRD spelling as given: no default filled in, zeros and false kept.
  const crd = {
    ...analysis,
    metrics: [{ ...analysis.metrics[0], template: 'ray-serve-error-ratio' }, analysis.metrics[1]],
    onFailure: 'pause',
  };
  expect(await stored()).toEqual(crd);
  const grpc = await env.client('grpc', env.tokens.alice).rayServices.getRayService({ namespace: TEAM_A, name: 'analysed' });
  const rest = await env.rest('GET', `${base}/analysed`);
  expect(toJson(RayServiceSchema, grpc, { alwaysEmitImplicit: true })).toEqual(rest.body);
  expect(rest.body.spec.rayshift.analysis).toMatchObject(analysis);
  expect(rest.body.spec.overlay).toBeUndefined();

  // A patch of other fields keeps the analysis; one of an option changes only it; the whole field is replaced.
  expect((await env.rest('PATCH', `${base}/analysed?update_mask=labels`, { labels: { a: 'b' } })).status).toBe(200);
  expect(await stored()).toEqual(crd);
  const onFailure = await env.rest('PATCH', `${base}/analysed?update_mask=spec.rayshift.analysis.on_failure`, { spec: { rayshift: { analysis: { onFailure: 'ANALYSIS_FAILURE_ACTION_ROLLBACK' } } } });
  expect(onFailure.status).toBe(200);
  expect(await stored()).toEqual({ ...crd, onFailure: 'rollback' });
  const minimal = { prometheusUrl: 'https://prom:9090', metrics: [{ name: 'm', template: 'envoy-error-ratio', successCondition: { maximum: 0.1 } }] };
  const whole = await env.rest('PATCH', `${base}/analysed?update_mask=spec.rayshift.analysis`, {
    spec: { rayshift: { analysis: { ...minimal, metrics: [{ ...minimal.metrics[0], template: 'ANALYSIS_TEMPLATE_ENVOY_ERROR_RATIO' }] } } },
  });
  expect(whole.status).toBe(200);
  expect(await stored()).toEqual(minimal);

  // A bad analysis is refused before Kubernetes sees it, every violation named by its request field.
  const bad = await env.rest('PATCH', `${base}/analysed?update_mask=spec.rayshift.analysis`, {
    spec: { rayshift: { analysis: { prometheusUrl: 'ftp://prom', metrics: [{ name: 'Bad_Name', successCondition: { maxAboveActivePercent: -1 } }], queryTimeoutSeconds: 0 } } },
  });
  expect(bad.status).toBe(400);
  expect(bad.body.code).toBe(Code.InvalidArgument);
  const detail = bad.body.details.find((d: { '@type': string }) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest');
  expect(detail.fieldViolations.map((v: { field: string }) => v.field).sort()).toEqual(
    [
      'ray_service.spec.rayshift.analysis.metrics[0]',
      'ray_service.spec.rayshift.analysis.metrics[0].name',
      'ray_service.spec.rayshift.analysis.metrics[0].success_condition.max_above_active_percent',
      'ray_service.spec.rayshift.analysis.prometheus_url',
      'ray_service.spec.rayshift.analysis.query_timeout_seconds',
    ].sort(),
  );
  expect(await stored()).toEqual(minimal);
  const created = await env.client('grpc', env.tokens.alice).rayServices.createRayService({ namespace: TEAM_A, validateOnly: true, rayService: fromJson(RayServiceSchema, { ...body, name: 'bad-analysis', spec: { ...body.spec, rayshift: { analysis: { prometheusUrl: 'http://prom:9090' } } } }) }).catch((e) => e);
  expect(created.code).toBe(Code.InvalidArgument);
  expect(created.findDetails(BadRequestSchema)[0].fieldViolations.map((v: { field: string }) => v.field)).toEqual(['ray_service.spec.rayshift.analysis.metrics']);
});

test(':plan returns the timeline of the proposed spec', async () => {
  const plan = await env.rest('POST', `${base}/shared:plan`, { proposed: { ...rayServiceBody('x', { step: 25 }).spec as object } });
  expect(plan.status).toBe(200);
  expect(plan.body.outcome).toBe('promoted');
  expect(plan.body.peakCapacityPercent).toBe(150);
  expect(plan.body.steps.filter((s: { action: string }) => s.action === 'shift-traffic').length).toBe(4);
  // A surge upgrade keeps every weight within its cluster's capacity: it serves all its load throughout, so no dip.
  expect(plan.body).not.toHaveProperty('dip');
  const invalid = await env.rest('POST', `${base}/shared:plan`, { proposed: { upgradeStrategy: { type: 'UPGRADE_STRATEGY_TYPE_NEW_CLUSTER_WITH_INCREMENTAL_UPGRADE' } } });
  expect(invalid.status).toBe(400);
});

test(':plan of a capacityPolicy shrinkFirst spec carries the dip: the lowest percent served, how often and how long it is below 100', async () => {
  // maxSurge 50, step 25, interval 10 s, no surge. At 0 s the old cluster gives back 50 (served 50), the new one takes 50,
  // traffic 75/25 (served 50 + 25 = 75); at 10 s 50/50 (100). The last round moves traffic off the old cluster before
  // its capacity goes: 25/75 at 20 s (25 + 50 = 75), 0/100 at 30 s (0 + 50 = 50), and at 40 s the old cluster at 0, the new
  // at 100, promoted. Below 100 twice (from 0 s and from 20 s), 10 + 20 = 30 s in all, from 0 s until 40 s, lowest 50.
  const spec = rayServiceBody('x', { step: 25, interval: 10 }).spec as Record<string, unknown>;
  const plan = await env.rest('POST', `${base}/shared:plan`, { proposed: { ...spec, rayshift: { ...(spec.rayshift as object), capacityPolicy: 'CAPACITY_POLICY_SHRINK_FIRST' } } });
  expect(plan.status).toBe(200);
  expect(plan.body).toMatchObject({ outcome: 'promoted', peakCapacityPercent: 100, durationSeconds: 40 });
  expect(plan.body.dip).toEqual({ value: 50, from: 0, until: 40, lasts: 30, times: 2 });
});

test('KubeRay (ray.io/v1) RayServices are reached with executor=EXECUTOR_KUBERAY', async () => {
  const created = await env.rest('POST', base, { ...rayServiceBody('kuberay-svc'), executor: 'EXECUTOR_KUBERAY' });
  expect(created.status).toBe(200);
  expect(await env.admin.tryGet({ apiVersion: 'ray.io/v1', kind: 'RayService', plural: 'rayservices', namespaced: true }, 'kuberay-svc', TEAM_A)).toBeDefined();
  expect((await env.rest('GET', `${base}/kuberay-svc`)).status).toBe(404);
  const got = await env.rest('GET', `${base}/kuberay-svc?executor=EXECUTOR_KUBERAY`);
  expect(got.body.executor).toBe('EXECUTOR_KUBERAY');
  expect((await env.rest('DELETE', `${base}/kuberay-svc?executor=EXECUTOR_KUBERAY`)).status).toBe(200);
});

test('clusters expand compute templates, and only labelled ConfigMaps are templates', async () => {
  const templates = `/apis/rayshift/v1/namespaces/${TEAM_A}/compute_templates`;
  expect((await env.rest('POST', templates, { name: 'small', cpu: 2, memory: 4, gpu: 1, tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }] })).status).toBe(200);
  await env.admin.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'not-a-template', namespace: TEAM_A }, data: { cpu: '1', memory: '1' } });
  expect((await env.rest('GET', `${templates}/not-a-template`)).status).toBe(404);
  expect((await env.rest('DELETE', `${templates}/not-a-template`)).status).toBe(404);
  expect(await env.admin.tryGet({ apiVersion: 'v1', kind: 'ConfigMap' }, 'not-a-template', TEAM_A)).toBeDefined();
  expect((await env.rest('GET', templates)).body.computeTemplates.map((t: { name: string }) => t.name)).toEqual(['small']);

  const clusters = `/apis/rayshift/v1/namespaces/${TEAM_A}/clusters`;
  const spec = { headGroupSpec: { computeTemplate: 'small' }, workerGroupSpec: [{ groupName: 'w', computeTemplate: 'small', replicas: 2, maxReplicas: 3 }] };
  const created = await env.rest('POST', clusters, { name: 'c1', version: '2.52.0', user: 'alice', clusterSpec: spec });
  expect(created.status).toBe(200);
  expect(created.body.clusterSpec.workerGroupSpec[0]).toMatchObject({ computeTemplate: 'small', replicas: 2, image: 'rayproject/ray:2.52.0' });
  const rc = await env.admin.get({ apiVersion: 'ray.io/v1', kind: 'RayCluster', plural: 'rayclusters', namespaced: true }, 'c1', TEAM_A);
  const worker = (rc.spec as any).workerGroupSpecs[0].template.spec;
  expect(worker.containers[0].resources.limits).toEqual({ cpu: '2', memory: '4Gi', 'nvidia.com/gpu': '1' });
  expect(worker.tolerations).toEqual([{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  const missing = await env.rest('POST', clusters, { name: 'c2', version: '2.52.0', clusterSpec: { headGroupSpec: { computeTemplate: 'not-a-template' } } });
  expect(missing.status).toBe(404);
  expect((await env.rest('GET', '/apis/rayshift/v1/clusters', undefined, { token: env.tokens.bob })).body.clusters).toEqual([]);
  expect((await env.rest('DELETE', `${clusters}/c1`)).status).toBe(200);
});

test('an expired page token is FAILED_PRECONDITION', async () => {
  const first = await env.rest('GET', `${base}?page_size=1`);
  const token = first.body.nextPageToken;
  expect(token).not.toBe('');
  let answer = await env.rest('GET', `${base}?page_size=1&page_token=${encodeURIComponent(token)}`);
  await waitFor(
    async () => {
      await env.rest('PUT', `${base}/shared`, { ...(await env.rest('GET', `${base}/shared`)).body, labels: { bump: String(Date.now()) } });
      answer = await env.rest('GET', `${base}?page_size=1&page_token=${encodeURIComponent(token)}`);
      return answer.status !== 200;
    },
    'the continue token to expire after etcd compaction',
    90_000,
    2_000,
  );
  expect(answer.status).toBe(400);
  expect(answer.body.code).toBe(Code.FailedPrecondition);
}, 120_000);

test('RoleBasedGroup status carries the coordination progress of its CoordinatedPolicy', async () => {
  const { Testing } = await import('cdk8s');
  const { RoleBasedGroup } = await import('../../lib/cdk8s/rolebasedgroup');
  const chart = Testing.chart();
  new RoleBasedGroup(chart, 'g', {
    metadata: { name: 'pd', namespace: TEAM_A },
    version: 'v1alpha2',
    executor: 'rbg',
    roles: ['prefill', 'decode'].map((name) => ({ name, replicas: 4, template: { spec: { containers: [{ name, image: 'sglang:v1' }] } } })),
    coordination: [{ name: 'pd', roles: ['prefill', 'decode'], rollingUpdate: { maxSkew: '25%' } }],
  });
  const objects = Testing.synth(chart) as any[];
  expect(objects.map((o) => o.kind).sort()).toEqual(['CoordinatedPolicy', 'RoleBasedGroup']);
  for (const o of objects) await env.admin.create(o);
  const group = objects.find((o) => o.kind === 'RoleBasedGroup');
  const type = { apiVersion: group.apiVersion, kind: 'RoleBasedGroup', plural: 'rolebasedgroups', namespaced: true };
  await env.admin.patchMerge(type, 'pd', TEAM_A, { status: { roleStatuses: [{ name: 'prefill', replicas: 4, readyReplicas: 4, updatedReplicas: 3 }, { name: 'decode', replicas: 4, readyReplicas: 4, updatedReplicas: 1 }] } }, { subresource: 'status' });
  const got = await env.rest('GET', `/apis/rayshift/v1/namespaces/${TEAM_A}/rolebasedgroups/pd`);
  expect(got.status).toBe(200);
  expect(got.body.roles).toEqual([
    { name: 'prefill', replicas: 4, readyReplicas: 4, updatedReplicas: 3 },
    { name: 'decode', replicas: 4, readyReplicas: 4, updatedReplicas: 1 },
  ]);
  // The rollout fields rayshift's executor writes (phase, rounds, the way back) are empty: RBG's
  // controller runs this CoordinatedPolicy, and REST writes every field, defaults included.
  const role = (name: string, updatedPercent: number) => ({ role: name, updatedPercent, phase: '', partition: 0, abandonedReplicas: 0, previousReplicas: 0 });
  expect(got.body.coordination).toEqual([
    { rule: 'pd', maxSkewPercent: 25, skewPercent: 50, withinBound: false, roles: [role('prefill', 75), role('decode', 25)], phase: '', reason: '', message: '', rounds: 0, conditions: [] },
  ]);
  expect((await env.rest('GET', `/apis/rayshift/v1/namespaces/${TEAM_A}/rolebasedgroups`)).body.roleBasedGroups.map((g: { name: string }) => g.name)).toEqual(['pd']);
  expect((await env.rest('GET', `/apis/rayshift/v1/namespaces/${TEAM_A}/rolebasedgroups/pd`, undefined, { token: env.tokens.bob })).status).toBe(403);
});

test('events of a RayService are matched by kind and name', async () => {
  await env.admin.create(eventAbout('shared.1', TEAM_A, { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', name: 'shared' }, 'UpgradeStarted', 'UpgradeStarted happened'));
  await env.admin.create(eventAbout('shared.2', TEAM_A, { apiVersion: 'v1', kind: 'ConfigMap', name: 'shared' }, 'Unrelated'));
  const answer = await env.rest('GET', `${base}/shared/events`);
  expect(answer.status).toBe(200);
  expect(answer.body.events).toEqual([expect.objectContaining({ regardingKind: 'RayService', regardingName: 'shared', reason: 'UpgradeStarted', note: 'UpgradeStarted happened', count: 1, type: 'Normal' })]);
  expect((await env.rest('GET', `${base}/shared/events`, undefined, { token: env.tokens.bob })).status).toBe(403);
});
