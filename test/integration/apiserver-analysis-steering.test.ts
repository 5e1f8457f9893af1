/**
 * Retrying and skipping a failed analysis through the API server, against a real kube-apiserver with
 * RBAC (no operator: each service's status is written as the operator leaves an upgrade its failed
 * analysis paused). `:retryAnalysis` and `:skipAnalysis` (gRPC `RetryAnalysisRayService`,
 * `SkipAnalysisRayService`) write the analysis override naming the failed run, as the caller; a
 * caller without the subresource (`rayservices/retry-analysis`, `rayservices/skip-analysis`) is
 * PERMISSION_DENIED even with `patch` on the service; with no failed run holding the upgrade they are
 * FAILED_PRECONDITION and write nothing. `rayshift retry-analysis|skip-analysis --api-server` call
 * them. The typed analysis of the upgrade status answers the same
 * over REST and gRPC. Needs `npm run controlplane:build`.
 */
import { toJson } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { UpgradeStatusSchema } from '../../lib/apiserver/gen/rayshift/v1/upgrade_pb';
import { ANALYSIS_OVERRIDE_ANNOTATION, LAST_STEERING_ANNOTATION } from '../../lib/engine/steering';
import { ApiEnv, TEAM_A, grantUser, startApiEnv } from '../apiserver/support/api-env';
import { rayshiftIn } from '../cli/cli-io';
import { RAYSHIFT_RAYSERVICE, rayService, waitFor } from '../support/operator-env';

let env: ApiEnv;
const base = `/apis/rayshift/v1/namespaces/${TEAM_A}/rayservices`;
const RUN = 'step/svc-b/25/1764000000000';

/** The engine state of an upgrade whose step gate at 25 % failed with `onFailure: pause`. */
const HELD = {
  phase: 'Paused',
  reason: 'AnalysisFailed',
  activeClusterName: 'svc-a',
  pendingClusterName: 'svc-b',
  upgradeStrategy: 'NewClusterWithIncrementalUpgrade',
  activeTargetCapacity: 100,
  pendingTargetCapacity: 30,
  activeWeight: 75,
  pendingWeight: 25,
  trafficConfirmed: true,
  deletions: [],
  analysis: {
    step: {
      id: RUN,
      kind: 'step',
      cluster: 'svc-b',
      pendingWeight: 25,
      startedAt: 1_764_000_000_000,
      phase: 'Failed',
      metrics: [{ name: 'error-ratio', phase: 'Failed', taken: 2, successes: 0, failures: 2, inconclusives: 0, consecutiveSuccesses: 0, last: { at: 1_764_000_040_000, result: 'Failed', value: 0.2, message: '0.2 > maximum 0.05' } }],
    },
    verdicts: [],
  },
};
/** The same upgrade moving on, its analysis running. */
const MIGRATING = { ...HELD, phase: 'Upgrading', reason: 'WaitingForAnalysis', analysis: { step: { ...HELD.analysis.step, phase: 'Running' }, verdicts: [] } };

/** Creates `name` in team-a and writes the status the operator would write for `engineState`. */
async function service(name: string, engineState: Record<string, unknown>, annotations?: Record<string, string>): Promise<void> {
  const svc = rayService(TEAM_A, name);
  const created = await env.admin.create({ ...svc, metadata: { ...svc.metadata, annotations } });
  await env.admin.updateStatus({ ...created, status: { phase: engineState.phase, reason: engineState.reason, engineState } });
}

async function annotations(name: string): Promise<Record<string, string>> {
  return (await env.admin.get(RAYSHIFT_RAYSERVICE, name, TEAM_A)).metadata.annotations ?? {};
}

beforeAll(async () => {
  env = await startApiEnv();
  await service('held-retry', HELD);
  await service('held-skip', HELD);
  await service('held-denied', HELD);
  await service('held-cli', HELD);
  await service('migrating', MIGRATING);
  await service('paused', { ...MIGRATING, phase: 'Paused', reason: 'Paused' }, { 'rayshift.dev/paused': 'true' });
  // bob (of team-b) may get and patch RayServices in team-a and resume them, but neither retry nor skip an analysis.
  await grantUser(env.admin, TEAM_A, 'bob', 'bob-resumes', [
    { apiGroups: ['rayshift.dev'], resources: ['rayservices'], verbs: ['get', 'patch'] },
    { apiGroups: ['rayshift.dev'], resources: ['rayservices/resume'], verbs: ['update'] },
  ]);
}, 300_000);

afterAll(async () => {
  await env?.stop();
});

test('the typed analysis of the upgrade status answers the same over REST and gRPC', async () => {
  const rest = await env.rest('GET', `${base}/held-retry/upgrade`);
  expect(rest.status).toBe(200);
  expect(rest.body.analysis.step).toMatchObject({ id: RUN, phase: 'Failed', pendingWeight: 25, startTime: '2025-11-24T16:00:00Z', metrics: [{ name: 'error-ratio', failures: 2, last: { value: 0.2 } }] });
  const grpc = await env.client('grpc', env.tokens.alice).rayServices.getUpgradeStatus({ namespace: TEAM_A, name: 'held-retry' });
  expect(toJson(UpgradeStatusSchema, grpc, { alwaysEmitImplicit: true })).toEqual(rest.body);
});

test('retry-analysis over REST and skip-analysis over gRPC name the failed run, recorded as the caller', async () => {
  const retried = await env.rest('POST', `${base}/held-retry:retryAnalysis`, { reason: 'Prometheus was down' });
  expect(retried.status).toBe(200);
  expect(retried.body.analysis.step.id).toBe(RUN);
  const after = await annotations('held-retry');
  expect(after[ANALYSIS_OVERRIDE_ANNOTATION]).toBe(`retry:${RUN}`);
  expect(JSON.parse(after[LAST_STEERING_ANNOTATION])).toMatchObject({ verb: 'retry-analysis', user: 'alice', reason: 'Prometheus was down' });

  await env.client('grpc', env.tokens.alice).rayServices.skipAnalysisRayService({ namespace: TEAM_A, name: 'held-skip', reason: 'known noisy metric' });
  const skipped = await annotations('held-skip');
  expect(skipped[ANALYSIS_OVERRIDE_ANNOTATION]).toBe(`skip:${RUN}`);
  expect(JSON.parse(skipped[LAST_STEERING_ANNOTATION])).toMatchObject({ verb: 'skip-analysis', user: 'alice' });
});

test('a caller without the subresource is PERMISSION_DENIED, even with patch on the service, and nothing is written', async () => {
  await waitFor(async () => (await env.rest('GET', `${base}/held-denied/steeringAccess`, undefined, { token: env.tokens.bob })).body.allowedVerbs?.includes('resume'), 'bob to resume in team-a', 30_000, 200);
  expect((await env.rest('GET', `${base}/held-denied/steeringAccess`, undefined, { token: env.tokens.bob })).body.allowedVerbs).toEqual(['resume']);
  const before = (await env.admin.get(RAYSHIFT_RAYSERVICE, 'held-denied', TEAM_A)).metadata.resourceVersion;
  for (const verb of ['retryAnalysis', 'skipAnalysis']) {
    const r = await env.rest('POST', `${base}/held-denied:${verb}`, { reason: 'try' }, { token: env.tokens.bob });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe(Code.PermissionDenied);
  }
  const bob = env.client('grpc', env.tokens.bob).rayServices;
  await expect(bob.retryAnalysisRayService({ namespace: TEAM_A, name: 'held-denied' })).rejects.toMatchObject({ code: Code.PermissionDenied });
  await expect(bob.skipAnalysisRayService({ namespace: TEAM_A, name: 'held-denied' })).rejects.toMatchObject({ code: Code.PermissionDenied });
  expect((await env.admin.get(RAYSHIFT_RAYSERVICE, 'held-denied', TEAM_A)).metadata.resourceVersion).toBe(before);
});

test('with no failed run holding the upgrade, both verbs are FAILED_PRECONDITION and write nothing', async () => {
  for (const name of ['migrating', 'paused']) {
    const before = (await env.admin.get(RAYSHIFT_RAYSERVICE, name, TEAM_A)).metadata.resourceVersion;
    for (const verb of ['retryAnalysis', 'skipAnalysis']) {
      const r = await env.rest('POST', `${base}/${name}:${verb}`, {});
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(Code.FailedPrecondition);
      expect(r.body.message).toMatch(/^no failed analysis run holds the upgrade: only a run that failed and paused it \(onFailure: pause\) can be (retried|skipped) \(phase (Upgrading|Paused)\)$/);
    }
    const grpc = env.client('grpc', env.tokens.alice).rayServices.retryAnalysisRayService({ namespace: TEAM_A, name });
    await expect(grpc).rejects.toMatchObject({ code: Code.FailedPrecondition });
    expect((await env.admin.get(RAYSHIFT_RAYSERVICE, name, TEAM_A)).metadata.resourceVersion).toBe(before);
  }
});

test('rayshift retry-analysis and skip-analysis --api-server call the RPCs as the caller', async () => {
  const api = (token: string) => ['-n', TEAM_A, '--api-server', env.api.url, '--ca-file', env.cp.caFile, '--token', token];
  expect(await rayshiftIn(['skip-analysis', 'held-denied', ...api(env.tokens.bob)])).toEqual({ code: 1, stdout: '', stderr: `error: permission denied: you may not skip-analysis RayService ${TEAM_A}/held-denied\n` });
  expect(await rayshiftIn(['retry-analysis', 'held-cli', ...api(env.tokens.alice)])).toEqual({
    code: 0,
    stdout: `RayService ${TEAM_A}/held-cli retrying analysis: the failed run is measured again from now\n`,
    stderr: '',
  });
  expect((await annotations('held-cli'))[ANALYSIS_OVERRIDE_ANNOTATION]).toBe(`retry:${RUN}`);
  expect(await rayshiftIn(['skip-analysis', 'migrating', ...api(env.tokens.alice)])).toMatchObject({ code: 1, stderr: expect.stringContaining('no failed analysis run holds the upgrade') });
});
