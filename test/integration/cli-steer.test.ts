/**
 * The steering verbs through a kubeconfig, run in process against a real kube-apiserver with the
 * rayshift CRD (no operator: each service's status is written as the operator would leave it). They
 * apply the same rules and patches as the API server (lib/engine/steering.ts): `resume` clears
 * `spec.rayshift.paused` too, a verb that does not apply is refused naming the phase and writes
 * nothing, `retry-analysis` and `skip-analysis` name the failed analysis run that holds an upgrade,
 * and each write records the last steering as the user the cluster authenticated.
 * Needs `npm run controlplane:build`.
 */
import { KubeClient } from '../../lib/runtime/kube/client';
import type { KubeObject } from '../../lib/runtime/kube/types';
import { rayshiftIn } from '../cli/cli-io';
import { ControlPlane, startControlPlane } from '../support/controlplane';
import { RAYSHIFT_RAYSERVICE, createNamespace, installRayshiftCrd, rayService } from '../support/operator-env';

const NS = 'cli-steer-rules';
let cp: ControlPlane;
let admin: KubeClient;

beforeAll(async () => {
  cp = await startControlPlane({});
  admin = KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installRayshiftCrd(cp);
  await createNamespace(admin, NS);
}, 300_000);

afterAll(async () => {
  admin?.close();
  await cp?.stop();
});

const UPGRADING = { phase: 'Upgrading', reason: 'Migrating', activeClusterName: 'svc-a', pendingClusterName: 'svc-b', upgradeStrategy: 'NewClusterWithIncrementalUpgrade' };
const RUNNING = { phase: 'Running', reason: 'UpToDate', activeClusterName: 'svc-a' };

/** Creates `name` with `extensions` and `annotations`, and writes the status the operator would write for `engineState`. */
async function service(name: string, engineState: Record<string, unknown>, extra: { extensions?: Record<string, unknown>; annotations?: Record<string, string>; strategy?: string } = {}): Promise<KubeObject> {
  const svc = rayService(NS, name, { extensions: extra.extensions, strategy: extra.strategy });
  const created = await admin.create({ ...svc, metadata: { ...svc.metadata, annotations: extra.annotations } });
  return admin.updateStatus({ ...created, status: { phase: engineState.phase, reason: engineState.reason, engineState } });
}

function steer(verb: string, name: string) {
  return rayshiftIn([verb, name, '-n', NS, '--kubeconfig', cp.kubeconfigPath]);
}

test('resume clears spec.rayshift.paused as well as the pause annotation, as the API server does', async () => {
  await service('held', { ...UPGRADING, phase: 'Paused', reason: 'Paused' }, { extensions: { paused: true }, annotations: { 'rayshift.dev/paused': 'true' } });
  expect(await steer('resume', 'held')).toEqual({ code: 0, stdout: `RayService ${NS}/held resumed\n`, stderr: '' });
  const after = await admin.get(RAYSHIFT_RAYSERVICE, 'held', NS);
  expect((after.spec as { rayshift?: { paused?: boolean } }).rayshift?.paused).toBe(false);
  expect(after.metadata.annotations?.['rayshift.dev/paused']).toBeUndefined();
  // The record names the user the cluster authenticated the kubeconfig as.
  expect(JSON.parse(after.metadata.annotations!['rayshift.dev/last-steering'])).toMatchObject({ verb: 'resume', user: 'rayshift-admin' });
});

test('a verb that does not apply is refused naming the phase, and nothing is written', async () => {
  const before = await service('idle', RUNNING);
  expect(await steer('promote', 'idle')).toEqual({
    code: 1,
    stdout: '',
    stderr: `error: cannot promote RayService ${NS}/idle: nothing to promote: no upgrade is in flight (phase Running)\n`,
  });
  expect(await steer('resume', 'idle')).toMatchObject({ code: 1, stderr: `error: cannot resume RayService ${NS}/idle: the upgrade is not paused (phase Running)\n` });
  expect((await admin.get(RAYSHIFT_RAYSERVICE, 'idle', NS)).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
});

test('a NewCluster upgrade may be paused (the engine holds its switch) but not promoted', async () => {
  await service('blue-green', { ...UPGRADING, upgradeStrategy: 'NewCluster' }, { strategy: 'NewCluster' });
  expect(await steer('promote', 'blue-green')).toMatchObject({ code: 1, stderr: expect.stringContaining('a NewCluster upgrade switches as soon as the new cluster serves') });
  expect(await steer('pause', 'blue-green')).toEqual({ code: 0, stdout: `RayService ${NS}/blue-green paused: no further step until resumed\n`, stderr: '' });
  expect((await admin.get(RAYSHIFT_RAYSERVICE, 'blue-green', NS)).metadata.annotations?.['rayshift.dev/paused']).toBe('true');
  expect(await steer('pause', 'blue-green')).toMatchObject({ code: 1, stderr: expect.stringContaining('the upgrade is already paused (phase Upgrading)') });
});

test('retry-analysis and skip-analysis name the failed run that paused the upgrade, and are refused when none does', async () => {
  const run = 'step/svc-b/25/1000';
  const held = { ...UPGRADING, phase: 'Paused', reason: 'AnalysisFailed', analysis: { step: { id: run, phase: 'Failed' }, verdicts: [] } };
  await service('held-retry', held);
  await service('held-skip', held);
  expect(await steer('retry-analysis', 'held-retry')).toEqual({ code: 0, stdout: `RayService ${NS}/held-retry retrying analysis: the failed run is measured again from now\n`, stderr: '' });
  expect((await admin.get(RAYSHIFT_RAYSERVICE, 'held-retry', NS)).metadata.annotations?.['rayshift.dev/analysis-override']).toBe(`retry:${run}`);
  expect(await steer('skip-analysis', 'held-skip')).toEqual({ code: 0, stdout: `RayService ${NS}/held-skip skipping analysis: the failed run counts as passed\n`, stderr: '' });
  const skipped = await admin.get(RAYSHIFT_RAYSERVICE, 'held-skip', NS);
  expect(skipped.metadata.annotations?.['rayshift.dev/analysis-override']).toBe(`skip:${run}`);
  expect(JSON.parse(skipped.metadata.annotations!['rayshift.dev/last-steering'])).toMatchObject({ verb: 'skip-analysis', user: 'rayshift-admin' });

  const before = await service('moving', UPGRADING);
  expect(await steer('skip-analysis', 'moving')).toEqual({
    code: 1,
    stdout: '',
    stderr: `error: cannot skip-analysis RayService ${NS}/moving: no failed analysis run holds the upgrade: only a run that failed and paused it (onFailure: pause) can be skipped (phase Upgrading)\n`,
  });
  expect((await admin.get(RAYSHIFT_RAYSERVICE, 'moving', NS)).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
});
