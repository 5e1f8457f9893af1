/**
 * The Pulumi executor's provider operations run in this process (no Pulumi CLI) on the test
 * cluster (test/support/operator-env.ts: the real KubeRay runs the RayClusters they create;
 * Serve and the Gateway status stay TEST-ONLY simulations), and no operator: create brings a service up, update runs a full incremental upgrade whose watched route
 * weights follow the engine's plan, an unchanged update does nothing, read refreshes, the deadline
 * rolls back, and delete tears everything down.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KnownTypes } from '../../lib/runtime/kube/types';
import * as migration from '../../lib/pulumi/migration-operations';
import { MigrationInputs, MigrationOutputs } from '../../lib/pulumi/migration-inputs';
import { recordName } from '../../lib/pulumi/record-name';
import { RayServiceSpec } from '../../lib/spec/rayservice';
import { OperatorEnv, startOperatorEnv, HTTPROUTE, RAYCLUSTER, createNamespace, rayClusterConfig, rayService, recordRouteWeights, waitFor, recordedPendingWeights } from '../support/operator-env';
import { routeBackends } from '../support/route-weights';

let env: OperatorEnv;
let kubeconfig: string;
const lines: string[] = [];
/** The weights and capacities of each step line of the uninterrupted upgrade (first test). */
let uninterrupted: string[] = [];

/** A step line without its time and with cluster names replaced by their role (old, new). */
function stateOf(line: string, old: string, next: string): string {
  return line.replace(/^\d\d:\d\d:\d\d \S+ [^:]+: /, '').split(old).join('OLD').split(next).join('NEW');
}

beforeAll(async () => {
  env = await startOperatorEnv();
  kubeconfig = fs.readFileSync(env.cp.kubeconfigPath, 'utf8');
}, 300_000);

afterAll(async () => {
  await env?.stop();
});

beforeEach(() => {
  lines.length = 0;
  jest.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
});

afterEach(() => jest.restoreAllMocks());

/** The migration's inputs for a service whose workers request `cpu`, with traffic steps `intervalSeconds` apart. */
function inputs(ns: string, name: string, cpu: string, extra: Partial<MigrationInputs> = {}, intervalSeconds = 1): MigrationInputs {
  const spec = { ...(rayService(ns, name, { maxSurge: 50, step: 25, interval: intervalSeconds }).spec as object), rayClusterConfig: rayClusterConfig(cpu) } as RayServiceSpec;
  return { name, namespace: ns, spec, labels: { team: 'ml' }, kubeconfig, dashboardAddressTemplate: env.fleet.template, deadlineSeconds: 120, onDeadline: 'rollback', capacityPollMs: 50, ...extra };
}

test('create, upgrade along the plan, no-op update, read, delete', async () => {
  const ns = 'pulumi-ops';
  await createNamespace(env.admin, ns);
  const created = await migration.create({}, inputs(ns, 'fruit', '1'));
  expect(created.id).toBe(`${ns}/fruit`);
  const first = created.outs!.activeClusterName!;
  expect(created.outs).toMatchObject({ recordName: 'fruit-rayshift', phase: 'Running', activeWeight: 100, activeTargetCapacity: 100 });
  expect(created.outs).not.toHaveProperty('kubeconfig');
  const cluster = await env.admin.get(RAYCLUSTER, first, ns);
  expect(cluster.metadata.ownerReferences).toEqual([expect.objectContaining({ apiVersion: 'v1', kind: 'ConfigMap', name: recordName('fruit'), controller: true })]);
  expect(cluster.metadata.labels).toMatchObject({ team: 'ml' });
  expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d fruit createPendingCluster: weights - 100 \/ fruit-\w{5} 0, capacity 0% \/ 100%$/);

  const recorder = await recordRouteWeights(env.admin, ns, 'fruit-httproute');
  const upgraded = inputs(ns, 'fruit', '2');
  expect(migration.diff(created.outs!, upgraded)).toEqual({ changes: true });
  expect(lines[lines.length - 1]).toBe('fruit: cluster spec changed: NewClusterWithIncrementalUpgrade upgrade to a new RayCluster');
  lines.length = 0;
  const updated = await migration.update({}, upgraded);
  recorder.stop();
  const second = updated.outs!.activeClusterName!;
  expect(second).not.toBe(first);
  expect(updated.outs).toMatchObject({ phase: 'Running', activeWeight: 100 });
  expect(lines).toHaveLength(updated.outs!.stepsLastRun);
  uninterrupted = lines.map((l) => stateOf(l, first, second));
  // Written from the rules, not from the planner under test: the pending cluster takes maxSurge (50 %)
  // capacity, traffic moves to it in steps of 25 up to that capacity, the old cluster gives up its half,
  // and traffic moves on in steps of 25.
  expect(recordedPendingWeights(recorder.history, second)).toEqual([0, 25, 50, 75, 100]);
  expect(recorder.history[recorder.history.length - 1].weights).toEqual([{ name: `${second}-serve-svc`, weight: 100 }]);
  expect(await env.admin.tryGet(RAYCLUSTER, first, ns)).toBeUndefined();

  expect(migration.diff(updated.outs!, { ...upgraded, kubeconfig: 'another kubeconfig' })).toEqual({ changes: false });
  lines.length = 0;
  const again = await migration.update({}, upgraded);
  expect(again.outs).toMatchObject({ activeClusterName: second, stepsLastRun: 0 });
  expect(lines).toEqual([]);

  const read = await migration.read({ kubeconfig }, `${ns}/fruit`, again.outs!);
  expect(read).toEqual({ id: `${ns}/fruit`, props: { ...again.outs } });

  await migration.delete({ kubeconfig }, again.outs!);
  expect((await env.admin.list(RAYCLUSTER, { namespace: ns })).items).toEqual([]);
  expect(await env.admin.tryGet(HTTPROUTE, 'fruit-httproute', ns)).toBeUndefined();
  expect(await env.admin.tryGet(KnownTypes.ConfigMap, recordName('fruit'), ns)).toBeUndefined();
  expect((await env.admin.list(KnownTypes.Service, { namespace: ns })).items.map((s) => s.metadata.name)).toEqual([]);
  expect(await migration.read({ kubeconfig }, `${ns}/fruit`, again.outs!)).toEqual({ id: '', props: {} });
}, 180_000);

test('a Serve-config-only change is applied in place: no new cluster', async () => {
  const ns = 'pulumi-serve';
  await createNamespace(env.admin, ns);
  const created = await migration.create({}, inputs(ns, 'fruit', '1'));
  const changed = inputs(ns, 'fruit', '1');
  const spec = { ...changed.spec, serveConfigV2: String(changed.spec.serveConfigV2).replace('num_replicas: 4', 'num_replicas: 2') };
  expect(migration.diff(created.outs!, { ...changed, spec })).toEqual({ changes: true });
  expect(lines[lines.length - 1]).toBe('fruit: Serve config changed: applied in place to the serving cluster');
  const updated = await migration.update({}, { ...changed, spec });
  expect(updated.outs!.activeClusterName).toBe(created.outs!.activeClusterName);
  expect((await env.admin.list(RAYCLUSTER, { namespace: ns })).items).toHaveLength(1);
  await migration.delete({ kubeconfig }, updated.outs!);
}, 120_000);

test('the deadline rolls an upgrade back and fails with the reason', async () => {
  const ns = 'pulumi-deadline';
  await createNamespace(env.admin, ns);
  const created = await migration.create({}, inputs(ns, 'fruit', '1'));
  const first = created.outs!.activeClusterName!;
  const slow = inputs(ns, 'fruit', '2', { deadlineSeconds: 2 }, 10);
  await expect(migration.update({}, slow)).rejects.toThrow(/RayService pulumi-deadline\/fruit: the deadline passed at .*; rolled back: .*fruit-\w{5} @100%/);
  expect(lines.some((l) => /deadline passed: rolling back/.test(l))).toBe(true);
  const route = await env.admin.get(HTTPROUTE, 'fruit-httproute', ns);
  expect(routeBackends(route)).toEqual([{ name: `${first}-serve-svc`, weight: 100 }]);
  await migration.delete({ kubeconfig }, created.outs as MigrationOutputs);
}, 120_000);

test('onDeadline pause holds the upgrade at its step and fails; the next run lifts the hold and finishes', async () => {
  const ns = 'pulumi-pause';
  await createNamespace(env.admin, ns);
  const created = await migration.create({}, inputs(ns, 'fruit', '1'));
  const first = created.outs!.activeClusterName!;
  const slow = inputs(ns, 'fruit', '2', { deadlineSeconds: 2, onDeadline: 'pause' }, 4);
  await expect(migration.update({}, slow)).rejects.toThrow(/the deadline passed at .*; held at Paused\/Paused: .* \(the next pulumi up resumes\)/);
  const record = await env.admin.get(KnownTypes.ConfigMap, recordName('fruit'), ns);
  expect(record.metadata.annotations).toMatchObject({ 'rayshift.dev/paused': 'true' });
  const held = await env.admin.get(HTTPROUTE, 'fruit-httproute', ns);
  expect(routeBackends(held)).toHaveLength(2); // both clusters serve, as the step left them
  const resumed = await migration.update({}, { ...slow, deadlineSeconds: 120 });
  expect(resumed.outs!.activeClusterName).not.toBe(first);
  expect((await env.admin.get(KnownTypes.ConfigMap, recordName('fruit'), ns)).metadata.annotations ?? {}).not.toHaveProperty(['rayshift.dev/paused']);
  await migration.delete({ kubeconfig }, resumed.outs!);
}, 120_000);

test('an update killed mid-migration resumes from the record without a skipped or repeated step', async () => {
  expect(uninterrupted.length).toBeGreaterThan(0); // from the first test
  const ns = 'pulumi-resume';
  await createNamespace(env.admin, ns);
  const created = await migration.create({}, inputs(ns, 'fruit', '1'));
  const first = created.outs!.activeClusterName!;
  const recorder = await recordRouteWeights(env.admin, ns, 'fruit-httproute');
  const upgraded = inputs(ns, 'fruit', '2');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-resume-'));
  fs.writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify(upgraded));
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, '..', 'pulumi', 'migration-child.ts'), path.join(dir, 'inputs.json')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let childOut = '';
  child.stdout.on('data', (d: Buffer) => (childOut += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Kill it once traffic is split 50/50: mid-migration, between two steps.
  await waitFor(() => recorder.history.some((h) => h.weights.length === 2 && h.weights.every((w) => w.weight === 50)), 'the child to reach a 50/50 split', 60_000);
  child.kill('SIGKILL');
  expect(await exited).toBeNull();
  fs.rmSync(dir, { recursive: true, force: true });

  lines.length = 0;
  const resumed = await migration.update({}, upgraded);
  recorder.stop();
  const second = resumed.outs!.activeClusterName!;
  expect(recordedPendingWeights(recorder.history, second)).toEqual([0, 25, 50, 75, 100]); // the same rules as above
  const childLines = childOut.split('\n').filter((l) => l !== '');
  expect(childLines.length).toBeGreaterThan(0);
  expect(lines.length).toBeGreaterThan(0);
  // Every step printed matches the uninterrupted run in order, none twice; the one step the killed
  // process may have carried out just before dying is not printed (its line died with it).
  const seen = [...childLines, ...lines].map((l) => stateOf(l, first, second));
  const lost = uninterrupted.length - seen.length;
  expect([0, 1]).toContain(lost);
  expect([...seen.slice(0, childLines.length), ...uninterrupted.slice(childLines.length, childLines.length + lost), ...seen.slice(childLines.length)]).toEqual(uninterrupted);
  await migration.delete({ kubeconfig }, resumed.outs!);
}, 180_000);
