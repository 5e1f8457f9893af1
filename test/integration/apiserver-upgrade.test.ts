/**
 * Upgrade status, the progress watch and steering through the API server, with the in-process
 * rayshift operator (beside the real KubeRay of the test cluster, with the TEST-ONLY Gateway status
 * writer and Serve fleet) executing real incremental upgrades on a real kube-apiserver: the watch (gRPC stream and REST
 * server-sent events) follows a whole upgrade and ends on completion; pause, resume, promote, abort
 * and rollback change what the operator does, are refused with FAILED_PRECONDITION when they do not
 * apply, are authorised per verb and written as the caller (a user may promote only with patch on the
 * service too; kube-apiserver's audit log names them), and rollback restores the operator's record of
 * the serving spec, not what someone who may only edit RayClusters wrote on the serving cluster. A
 * service's revisions (from the clusters it controls) and events (of it and its clusters, by kind
 * and name) answer equally over REST and gRPC, only to callers who may read them, and a revision
 * sent back as the spec rolls the service back to it.
 */
import { toJson } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { ListRayServiceEventsResponseSchema, ListRayServiceRevisionsResponseSchema } from '../../lib/apiserver/gen/rayshift/v1/rayservice_service_pb';
import { UpgradeEventType, UpgradePhase, type UpgradeEvent } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import { RAYSHIFT_RAYSERVICE } from '../../lib/spec/object-names';
import { ApiEnv, TEAM_A, auditEventOf, eventAbout, grantUser, rayServiceBody, serviceAccountCaller, startApiEnv } from '../apiserver/support/api-env';
import { waitFor } from '../support/operator-env';

let env: ApiEnv;
const base = `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`;
let cpu = 1;

beforeAll(async () => {
  env = await startApiEnv({ operator: true, heartbeatSeconds: 1 });
  // bob may promote in team-a, and nothing else there.
  await grantUser(env.admin, TEAM_A, 'bob', 'bob-promotes', [{ apiGroups: ['rayshift.dev'], resources: ['rayservices/promote'], verbs: ['update'] }]);
  expect((await env.rest('POST', base, rayServiceBody('llm', { interval: 2 }))).status).toBe(200);
  await waitUntil('llm', (u) => u.phase === 'UPGRADE_PHASE_IDLE' && !!u.active?.cluster, 'the first cluster to serve');
}, 240_000);

afterAll(async () => {
  await env?.stop();
});

/** The upgrade status over REST. */
async function upgrade(name: string): Promise<any> {
  const r = await env.rest('GET', `${base}/${name}/upgrade`);
  expect(r.status).toBe(200);
  return r.body;
}

async function waitUntil(name: string, check: (u: any) => boolean, what: string): Promise<any> {
  let last: any;
  try {
    await waitFor(async () => check((last = await upgrade(name))), what, 90_000, 200);
  } catch (e) {
    throw new Error(`${(e as Error).message}; last status: ${JSON.stringify(last)}`);
  }
  return last;
}

/** Waits until the operator removed a spent steering annotation (else it would steer the next upgrade too). */
async function waitSpent(annotation: string): Promise<void> {
  await waitFor(async () => !((await env.rest('GET', `${base}/llm`)).body.annotations ?? {})[annotation], `the operator to clear ${annotation}`, 60_000, 200);
}

/** Starts an upgrade by changing the worker CPU request (part of the cluster spec hash). */
async function startUpgrade(name: string): Promise<void> {
  cpu++;
  const body = rayServiceBody(name, { cpu: String(cpu) }) as any;
  const r = await env.rest('PATCH', `${base}/${name}?update_mask=spec.ray_cluster_config`, { spec: { rayClusterConfig: body.spec.rayClusterConfig } });
  expect(r.status).toBe(200);
}

/** Reads a REST server-sent-event stream to its end. */
async function sseEvents(path: string): Promise<any[]> {
  const answer = await env.rest('GET', path);
  expect(answer.headers['content-type']).toBe('text/event-stream');
  return answer.text
    .split('\n\n')
    .filter((chunk) => chunk.startsWith('event: message'))
    .map((chunk) => JSON.parse(chunk.split('\ndata: ')[1]));
}

test('steering verbs that do not apply are FAILED_PRECONDITION', async () => {
  for (const verb of ['promote', 'abort', 'rollback', 'resume']) {
    const r = await env.rest('POST', `${base}/llm:${verb}`, { reason: 'test' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(Code.FailedPrecondition);
    // The refusal names the phase the service is in.
    expect(r.body.message).toMatch(/\(phase Running\)$/);
  }
});

test('a NewCluster upgrade can be paused (the engine holds its switch) but not promoted', async () => {
  const body = rayServiceBody('bg') as any;
  body.spec.upgradeStrategy = { type: 'UPGRADE_STRATEGY_TYPE_NEW_CLUSTER' };
  expect((await env.rest('POST', base, body)).status).toBe(200);
  await waitUntil('bg', (u) => u.phase === 'UPGRADE_PHASE_IDLE' && !!u.active?.cluster, 'the first cluster to serve');
  expect((await env.rest('POST', `${base}/bg:pause`, { reason: 'hold the switch' })).status).toBe(200);
  await startUpgrade('bg');
  const held = await waitUntil('bg', (u) => u.phase === 'UPGRADE_PHASE_PAUSED' && !!u.pending?.cluster, 'the pause to hold the switch');
  const promote = await env.rest('POST', `${base}/bg:promote`, {});
  expect(promote.body).toMatchObject({ code: Code.FailedPrecondition, message: expect.stringContaining('a NewCluster upgrade switches as soon as the new cluster serves') });
  expect((await env.rest('POST', `${base}/bg:resume`, {})).status).toBe(200);
  const done = await waitUntil('bg', (u) => u.phase === 'UPGRADE_PHASE_IDLE' && !u.pending, 'the switch after resume');
  expect(done.active.cluster).toBe(held.pending.cluster);
});

test('the watch follows a full incremental upgrade over gRPC and REST and ends on completion', async () => {
  const before = await upgrade('llm');
  const grpcEvents: UpgradeEvent[] = [];
  const grpc = (async () => {
    for await (const e of env.client('grpc', env.tokens.alice).rayServices.watchUpgrade({ namespace: TEAM_A, name: 'llm' })) grpcEvents.push(e);
  })();
  const rest = sseEvents(`${base}/llm/upgrade:watch?heartbeat_seconds=1`);
  // Nothing changes before the upgrade starts: heartbeats (every second here) keep the stream alive.
  await waitFor(() => grpcEvents.some((e) => e.type === UpgradeEventType.HEARTBEAT), 'a heartbeat', 30_000);
  expect(grpcEvents[1].status?.active?.cluster).toBe(before.active.cluster);
  await startUpgrade('llm');
  await grpc;
  const restEvents = await rest;

  expect(grpcEvents[0].type).toBe(UpgradeEventType.SNAPSHOT);
  const last = grpcEvents[grpcEvents.length - 1];
  expect(last.type).toBe(UpgradeEventType.COMPLETED);
  expect(last.status?.phase).toBe(UpgradePhase.COMPLETE);
  expect(last.status?.active?.cluster).not.toBe(before.active.cluster);
  expect(last.status?.pending).toBeUndefined();
  const progress = grpcEvents.filter((e) => e.type === UpgradeEventType.PROGRESS && e.status?.pending);
  const weights = progress.map((e) => e.status!.pending!.trafficRoutedPercent);
  expect(weights).toEqual([...weights].sort((a, b) => a - b));
  expect(new Set(weights)).toEqual(new Set([0, 25, 50, 75, 100].filter((w) => weights.includes(w))));
  expect(weights).toContain(50);
  expect(progress.some((e) => e.status!.phase === UpgradePhase.SHIFTING)).toBe(true);
  expect(Math.max(...progress.map((e) => e.status!.totalSteps))).toBe(4);

  expect(restEvents[0].type).toBe('UPGRADE_EVENT_TYPE_SNAPSHOT');
  expect(restEvents[restEvents.length - 1]).toMatchObject({ type: 'UPGRADE_EVENT_TYPE_COMPLETED', status: { phase: 'UPGRADE_PHASE_COMPLETE', active: { cluster: last.status?.active?.cluster } } });
  // Implicit zero values stay on REST (a pending side at 0% traffic is not dropped).
  expect(restEvents.some((e) => e.status.pending?.trafficRoutedPercent === 0)).toBe(true);
}, 180_000);

test('pause holds the operator, resume lets it continue, promote finishes without waiting', async () => {
  await startUpgrade('llm');
  await waitUntil('llm', (u) => u.pending?.trafficRoutedPercent > 0, 'traffic to start moving');
  const paused = await env.rest('POST', `${base}/llm:pause`, { reason: 'look at the dashboards' });
  expect(paused.status).toBe(200);
  expect(paused.body.paused).toBe(true);
  expect((await env.rest('POST', `${base}/llm:pause`, {})).body.code).toBe(Code.FailedPrecondition);
  const held = await waitUntil('llm', (u) => u.phase === 'UPGRADE_PHASE_PAUSED', 'the operator to report Paused');
  expect(held.reason).toBe('Paused');

  expect((await env.rest('POST', `${base}/llm:resume`, {})).status).toBe(200);
  await waitUntil('llm', (u) => u.phase !== 'UPGRADE_PHASE_PAUSED', 'the operator to leave Paused');

  // bob may promote (his Role grants rayservices/promote) and read llm, but not patch it: the
  // promotion is written as bob, so it is refused and nothing is written.
  await grantUser(env.admin, TEAM_A, 'bob', 'bob-reads-llm', [{ apiGroups: ['rayshift.dev'], resources: ['rayservices'], resourceNames: ['llm'], verbs: ['get'] }]);
  await waitFor(async () => (await env.rest('GET', `${base}/llm`, undefined, { token: env.tokens.bob })).status === 200, 'bob to read llm', 30_000, 200);
  expect((await env.rest('POST', `${base}/llm:pause`, {}, { token: env.tokens.bob })).status).toBe(403);
  const refused = await env.rest('POST', `${base}/llm:promote`, { reason: 'ship it' }, { token: env.tokens.bob });
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe(Code.PermissionDenied);
  expect((await env.rest('GET', `${base}/llm`)).body.annotations?.['rayshift.dev/promote']).toBeUndefined();

  // With patch as well, bob promotes; kube-apiserver's audit log records the patch as bob's, made through the API server.
  await grantUser(env.admin, TEAM_A, 'bob', 'bob-patches-llm', [{ apiGroups: ['rayshift.dev'], resources: ['rayservices'], resourceNames: ['llm'], verbs: ['patch'] }]);
  await waitFor(async () => (await env.rest('GET', `${base}/llm/steeringAccess`, undefined, { token: env.tokens.bob })).body.allowedVerbs?.includes('promote'), 'bob to patch llm', 30_000, 200);
  const promoted = await env.rest('POST', `${base}/llm:promote`, { reason: 'ship it' }, { token: env.tokens.bob });
  expect(promoted.status).toBe(200);
  const audited = await auditEventOf(env, (e) => e.verb === 'patch' && e.objectRef?.name === 'llm' && e.impersonatedUser?.username === 'bob');
  expect(audited).toMatchObject({ user: { username: 'rayshift-admin' }, responseStatus: { code: 200 } });
  const done = await waitUntil('llm', (u) => u.phase === 'UPGRADE_PHASE_IDLE' && !u.pending, 'the promotion to finish');
  expect(done.reason).toBe('Promoted');
  const svc = (await env.rest('GET', `${base}/llm`)).body;
  expect(JSON.parse(svc.annotations['rayshift.dev/last-steering'])).toMatchObject({ verb: 'promote', user: 'bob', reason: 'ship it' });
  await waitSpent('rayshift.dev/promote');
}, 180_000);

test('abort rolls the upgrade back and rejects its spec', async () => {
  const before = await upgrade('llm');
  await startUpgrade('llm');
  await waitUntil('llm', (u) => !!u.pending, 'a pending cluster');
  expect((await env.rest('POST', `${base}/llm:abort`, {})).status).toBe(200);
  const after = await waitUntil('llm', (u) => !u.pending && u.reason === 'Aborted', 'the rollback after abort');
  expect(after.active.cluster).toBe(before.active.cluster);
  await waitSpent('rayshift.dev/abort');
}, 180_000);

test("rollback restores the operator's record of the serving spec, not what a RayCluster editor wrote on the serving cluster", async () => {
  const before = await upgrade('llm');
  const stored = await env.admin.get(RAYSHIFT_RAYSERVICE, 'llm', TEAM_A);
  const record = (stored.status as any).servingSpec;
  expect(record).toMatchObject({ rayClusterName: before.active.cluster, serveConfigV2: (stored.spec as any).serveConfigV2 });
  await startUpgrade('llm');
  await waitUntil('llm', (u) => !!u.pending, 'a pending cluster');
  // Held, so that the upgrade cannot finish before the rollback.
  expect((await env.rest('POST', `${base}/llm:pause`, {})).status).toBe(200);

  // mallory may edit RayClusters in team-a but not RayServices, and rewrites the serving cluster's
  // Serve config annotation (what rollback used to restore) to another import path.
  const mallory = await serviceAccountCaller(env, TEAM_A, 'mallory', [{ apiGroups: ['ray.io'], resources: ['rayclusters'], verbs: ['get', 'patch'] }]);
  const evil = 'applications:\n- name: app\n  import_path: mallory.app:build\n  route_prefix: /\n';
  const clusterPath = `/apis/ray.io/v1/namespaces/${TEAM_A}/rayclusters/${before.active.cluster}`;
  const tamper = () => env.cp.request('PATCH', clusterPath, { metadata: { annotations: { 'rayshift.dev/serve-config': evil } } }, { token: mallory, contentType: 'application/merge-patch+json' });
  await waitFor(async () => (await tamper()).status === 200, 'mallory to patch the serving cluster', 30_000, 200);
  const servicePath = `/apis/rayshift.dev/v1alpha1/namespaces/${TEAM_A}/rayservices/llm`;
  expect((await env.cp.request('PATCH', servicePath, { spec: { serveConfigV2: evil } }, { token: mallory, contentType: 'application/merge-patch+json' })).status).toBe(403);

  // alice's rollback writes the recorded spec and Serve config.
  const r = await env.rest('POST', `${base}/llm:rollback`, {});
  expect(r.status).toBe(200);
  const reverted = await env.admin.get(RAYSHIFT_RAYSERVICE, 'llm', TEAM_A);
  expect((reverted.spec as any).serveConfigV2).toBe(record.serveConfigV2);
  expect((reverted.spec as any).rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu).toBe(String(cpu - 2));
  expect(JSON.parse(reverted.metadata.annotations!['rayshift.dev/last-steering'])).toMatchObject({ verb: 'rollback', user: 'alice' });
  expect((await env.rest('POST', `${base}/llm:resume`, {})).status).toBe(200);

  const after = await waitUntil('llm', (u) => !u.pending && u.phase === 'UPGRADE_PHASE_IDLE', 'the rollback');
  expect(after.active.cluster).toBe(before.active.cluster);
  expect(after.reason).not.toBe('Aborted');
}, 180_000);

test('revisions and events answer equally over REST and gRPC, only to callers who may read them, and a revision rolls back', async () => {
  const body = rayServiceBody('hist') as any;
  expect((await env.rest('POST', base, body)).status).toBe(200);
  const serving = await waitUntil('hist', (u) => u.phase === 'UPGRADE_PHASE_IDLE' && !!u.active?.cluster, 'hist to serve');
  // Paused, the upgrade creates its pending cluster and holds: both clusters stay.
  expect((await env.rest('POST', `${base}/hist:pause`, {})).status).toBe(200);
  body.spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].resources.requests.cpu = '7';
  expect((await env.rest('PATCH', `${base}/hist?update_mask=spec.ray_cluster_config`, { spec: { rayClusterConfig: body.spec.rayClusterConfig } })).status).toBe(200);
  const upgrading = await waitUntil('hist', (u) => u.phase === 'UPGRADE_PHASE_PAUSED' && !!u.pending?.cluster, 'a held upgrade with a pending cluster');
  let revisions = await env.rest('GET', `${base}/hist/revisions`);
  await waitFor(async () => (revisions = await env.rest('GET', `${base}/hist/revisions`)).body.revisions?.length === 2, 'the pending RayCluster', 30_000, 200);
  expect(revisions.status).toBe(200);
  expect(revisions.body.revisions.map((r: any) => [r.cluster, r.state, r.current])).toEqual([
    [upgrading.pending.cluster, 'REVISION_STATE_PENDING', true],
    [serving.active.cluster, 'REVISION_STATE_ACTIVE', false],
  ]);
  expect(revisions.body.revisions[1].serveConfigV2).toBe(body.spec.serveConfigV2);
  const grpc = await env.client('grpc', env.tokens.alice).rayServices.listRayServiceRevisions({ namespace: TEAM_A, name: 'hist' });
  expect(toJson(ListRayServiceRevisionsResponseSchema, grpc, { alwaysEmitImplicit: true })).toEqual(revisions.body);

  // Events of the service and of its clusters, by kind and name: not those of a Pod named like a cluster.
  await env.admin.create(eventAbout('hist.1', TEAM_A, { apiVersion: 'rayshift.dev/v1alpha1', kind: 'RayService', name: 'hist' }, 'ServiceEvent'));
  await env.admin.create(eventAbout('hist.2', TEAM_A, { apiVersion: 'ray.io/v1', kind: 'RayCluster', name: serving.active.cluster }, 'ActiveClusterEvent'));
  await env.admin.create(eventAbout('hist.3', TEAM_A, { apiVersion: 'v1', kind: 'Pod', name: serving.active.cluster }, 'PodEvent'));
  // A core/v1 Event (involvedObject, as KubeRay records them) about the pending cluster.
  await env.admin.create({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'hist.4', namespace: TEAM_A },
    involvedObject: { apiVersion: 'ray.io/v1', kind: 'RayCluster', name: upgrading.pending.cluster, namespace: TEAM_A },
    reason: 'PendingClusterEvent',
    message: 'created pods',
    type: 'Warning',
    count: 3,
    firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    source: { component: 'kuberay-operator' },
  } as never);
  // The same list over both protocols (read again when KubeRay recorded an event between the two calls).
  const readBoth = async () => {
    const rest = await env.rest('GET', `${base}/hist/events`);
    const grpc = await env.client('grpc', env.tokens.alice).rayServices.listRayServiceEvents({ namespace: TEAM_A, name: 'hist' });
    return { rest, grpc: toJson(ListRayServiceEventsResponseSchema, grpc, { alwaysEmitImplicit: true }) };
  };
  let both = await readBoth();
  for (let i = 0; i < 5 && JSON.stringify(both.grpc) !== JSON.stringify(both.rest.body); i++) both = await readBoth();
  const events = both.rest;
  expect(events.status).toBe(200);
  expect(both.grpc).toEqual(events.body);
  const listed: [string, string, string][] = events.body.events.map((e: any) => [e.regardingKind, e.regardingName, e.reason]);
  const written = ['ServiceEvent', 'ActiveClusterEvent', 'PendingClusterEvent', 'PodEvent'];
  expect(listed.filter(([, , reason]) => written.includes(reason)).sort()).toEqual(
    [
      ['RayService', 'hist', 'ServiceEvent'],
      ['RayCluster', serving.active.cluster, 'ActiveClusterEvent'],
      ['RayCluster', upgrading.pending.cluster, 'PendingClusterEvent'],
    ].sort(),
  );
  // Beside them, what the real KubeRay recorded about both clusters (core/v1 Events); nothing about another object.
  expect(listed).toEqual(expect.arrayContaining([['RayCluster', serving.active.cluster, 'CreatedHeadPod'], ['RayCluster', upgrading.pending.cluster, 'CreatedHeadPod']]));
  expect(listed.filter(([kind, name]) => !(kind === 'RayService' && name === 'hist') && !(kind === 'RayCluster' && [serving.active.cluster, upgrading.pending.cluster].includes(name)))).toEqual([]);
  expect(events.body.events.find((e: any) => e.reason === 'PendingClusterEvent')).toMatchObject({ type: 'Warning', note: 'created pods', count: 3 });

  // bob may read the service (and only it), not its clusters nor the events: both are refused, over both protocols.
  await grantUser(env.admin, TEAM_A, 'bob', 'bob-reads-hist', [{ apiGroups: ['rayshift.dev'], resources: ['rayservices'], resourceNames: ['hist'], verbs: ['get'] }]);
  await waitFor(async () => (await env.rest('GET', `${base}/hist`, undefined, { token: env.tokens.bob })).status === 200, 'bob to read hist', 30_000, 200);
  for (const sub of ['revisions', 'events']) expect((await env.rest('GET', `${base}/hist/${sub}`, undefined, { token: env.tokens.bob })).status).toBe(403);
  const bob = env.client('grpc', env.tokens.bob).rayServices;
  expect((await bob.listRayServiceRevisions({ namespace: TEAM_A, name: 'hist' }).catch((e) => e)).code).toBe(Code.PermissionDenied);
  expect((await bob.listRayServiceEvents({ namespace: TEAM_A, name: 'hist' }).catch((e) => e)).code).toBe(Code.PermissionDenied);

  // The active revision's spec and Serve config, sent back, are a goal that reverts to the serving cluster
  // (a rollback, which no pause holds).
  const active = revisions.body.revisions[1];
  const reverted = await env.rest('PATCH', `${base}/hist?update_mask=spec.ray_cluster_config,spec.serve_config_v2`, { spec: { rayClusterConfig: active.rayClusterConfig, serveConfigV2: active.serveConfigV2 } });
  expect(reverted.status).toBe(200);
  const back = await waitUntil('hist', (u) => !u.pending && u.phase === 'UPGRADE_PHASE_IDLE', 'the rollback to the active revision');
  expect(back.active.cluster).toBe(serving.active.cluster);
  const after = (await env.rest('GET', `${base}/hist/revisions`)).body.revisions;
  expect(after.find((r: any) => r.cluster === serving.active.cluster)).toMatchObject({ state: 'REVISION_STATE_ACTIVE', current: true, specHash: active.specHash });
}, 240_000);
