/**
 * The `RayService` component through the Automation API with the real Pulumi CLI (built from Go
 * modules, offline) on the test cluster (test/support/operator-env.ts): the real KubeRay
 * operator turns the RayClusters Pulumi's migration creates into Pods on kwok's Nodes and reports
 * their heads, and kube-controller-manager collects what their owners leave, so the programs keep
 * `@pulumi/kubernetes`' default foreground deletion. Serve and the Gateway status stay TEST-ONLY
 * simulations (no Ray process or Gateway data plane runs here).
 *
 * Executor `pulumi`: `up` creates the service; a second `up` with a changed cluster spec runs a full
 * incremental upgrade whose route weights, watched from here, follow the sequence written from the upgrade rules; a third `up`
 * is a no-op; `refresh` reads it back; an `up` killed mid-migration (CLI and provider process
 * SIGKILLed), cancelled (`pulumi cancel` releases the stack's lock) and run again finishes
 * without a skipped or repeated step; `destroy` removes everything. The same creation and upgrade
 * again from a Python program (test/python/pulumi/program.py) through the plugin package's
 * generated SDK and provider (test/support/pulumi-plugin.ts).
 *
 * Executor `operator` (an in-process rayshift operator started for that block only): `up` waits
 * until the operator serves the service, and an `up` with a changed cluster spec follows the
 * operator's upgrade to its end.
 *
 * Executor `kuberay` needs KubeRay to see Serve become ready, so it runs where real Ray heads do:
 * test/e2e/kuberay-pulumi.e2e.ts.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@pulumi/kubernetes';
import { OpMap } from '@pulumi/pulumi/automation';
import { RayService, RayServiceArgs } from '../../lib/pulumi';
import { recordName } from '../../lib/pulumi/record-name';
import { KnownTypes } from '../../lib/runtime/kube/types';
import { RayClusterConfig } from '../../lib/spec/raycluster';
import { Operator } from '../../operator/operator';
import { templateDashboardResolver } from '../../lib/runtime/serve/resolver';
import { OperatorEnv, startOperatorEnv, HTTPROUTE, RAYSHIFT_RAYSERVICE, engineState, RAYCLUSTER, createNamespace, rayClusterConfig, recordRouteWeights, serveConfig, waitFor, recordedPendingWeights } from '../support/operator-env';
import { PulumiTestStack, startPulumiStack } from '../support/pulumi';
import { PluginPython, startPluginPython } from '../support/pulumi-plugin';
import { routeBackends } from '../support/route-weights';

const NS = 'pulumi-e2e';
/**
 * The new cluster's route weights INCREMENTAL's maxSurge 50, step 25 lead to, written from the rules
 * rather than by the planner under test: 0 when its backend joins, 25 and 50 onto its 50 % capacity,
 * then 75 and 100 once the old cluster gave up its half.
 */
const EXPECTED_PENDING_WEIGHTS = [0, 25, 50, 75, 100];
const INCREMENTAL = { type: 'NewClusterWithIncrementalUpgrade' as const, clusterUpgradeOptions: { maxSurgePercent: 50, stepSizePercent: 25, intervalSeconds: 1, gatewayClassName: 'simulated' } };

let env: OperatorEnv;
let kubeconfig: string;
const stacks: PulumiTestStack[] = [];
const cliOutput: string[] = [];
const onOutput = (line: string) => void cliOutput.push(line);

beforeAll(async () => {
  env = await startOperatorEnv();
  kubeconfig = fs.readFileSync(env.cp.kubeconfigPath, 'utf8');
  await createNamespace(env.admin, NS);
}, 300_000);

afterAll(async () => {
  for (const s of stacks) await s.dispose();
  await env?.stop();
});

/** Changes other than `same` in an operation summary (`{}` when nothing changed). */
function changes(summary: OpMap | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(summary ?? {}).filter(([op, n]) => op !== 'same' && (n ?? 0) > 0));
}

/** Process ids of every descendant of `root` (children first-level, then theirs), from `ps`. */
function descendants(root: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number));
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of rows) {
      if (parent === pid) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

describe('executor pulumi', () => {
  let cpu = '1';
  let stack: PulumiTestStack;
  const args = (): RayServiceArgs => ({
    executor: 'pulumi',
    metadata: { name: 'fruit', namespace: NS },
    rayClusterConfig: rayClusterConfig(cpu) as unknown as RayClusterConfig,
    serveConfig: serveConfig(),
    upgradeStrategy: INCREMENTAL,
    rayClusterDeletionDelaySeconds: 0,
    kubeconfig,
    dashboardAddressTemplate: env.fleet.template,
    capacityPollMs: 50,
    deadlineSeconds: 300,
  });
  const active = async () => {
    const record = await env.admin.get(KnownTypes.ConfigMap, recordName('fruit'), NS);
    return JSON.parse((record.data as Record<string, string>).status).engineState.activeClusterName as string;
  };

  beforeAll(async () => {
    stack = await startPulumiStack({
      projectName: 'rayshift-e2e',
      stackName: 'pulumi-executor',
      kubeconfig: env.cp.kubeconfigPath,
      program: async () => {
        const service = new RayService('fruit', args());
        return { active: service.activeClusterName };
      },
    });
    stacks.push(stack);
  }, 300_000);

  test('up creates the service: first RayCluster, Services, Gateway and route, owned by its record', async () => {
    const result = await stack.stack.up({ onOutput });
    expect({ result: result.summary.result, output: cliOutput.join('') }).toMatchObject({ result: 'succeeded' });
    expect(changes(result.summary.resourceChanges)).toEqual({ create: 3 }); // stack, component, migration
    const first = result.outputs.active.value as string;
    expect(first).toMatch(/^fruit-\w{5}$/);
    expect(await active()).toBe(first);
    const route = await env.admin.get(HTTPROUTE, 'fruit-httproute', NS);
    expect(routeBackends(route)).toEqual([{ name: `${first}-serve-svc`, weight: 100 }]);
    expect(cliOutput.join('')).toContain('fruit createPendingCluster');
    // The kubeconfig input is kept encrypted in the state file, and is no output.
    expect(kubeconfig).toContain(env.cp.adminToken);
    const stateFiles = execFileSync('find', [path.join(stack.workDir, 'state'), '-name', '*.json', '-path', '*stacks*'], { encoding: 'utf8' }).trim().split('\n').filter((f) => f !== '');
    expect(stateFiles.length).toBeGreaterThan(0);
    for (const file of stateFiles) expect(fs.readFileSync(file, 'utf8')).not.toContain(env.cp.adminToken);
    const migration = (await stack.stack.exportStack()).deployment.resources.find((r: { type: string }) => r.type === 'pulumi-nodejs:dynamic/rayshift:RayServiceMigration');
    expect(Object.keys(migration.outputs)).not.toContain('kubeconfig');
  }, 300_000);

  test('up with a changed cluster spec runs the full incremental upgrade along the plan', async () => {
    const recorder = await recordRouteWeights(env.admin, NS, 'fruit-httproute');
    await waitFor(() => recorder.history.length > 0, 'the route to be watched');
    cpu = '2';
    cliOutput.length = 0;
    const result = await stack.stack.up({ onOutput });
    recorder.stop();
    expect({ result: result.summary.result, output: cliOutput.join('') }).toMatchObject({ result: 'succeeded' });
    expect(changes(result.summary.resourceChanges)).toEqual({ update: 1 });
    const second = result.outputs.active.value as string;
    expect(recordedPendingWeights(recorder.history, second)).toEqual(EXPECTED_PENDING_WEIGHTS);
    expect(recorder.history[recorder.history.length - 1].weights).toEqual([{ name: `${second}-serve-svc`, weight: 100 }]);
    expect(cliOutput.join('')).toMatch(/fruit setTrafficWeights: weights fruit-\w{5} 75 \/ fruit-\w{5} 25, capacity \d+% \/ \d+%/);
    expect((await env.admin.list(RAYCLUSTER, { namespace: NS })).items.map((c) => c.metadata.name)).toEqual([second]);
  }, 300_000);

  test('a third up with no change is a no-op, and refresh reads the service back unchanged', async () => {
    const before = (await env.admin.get(KnownTypes.ConfigMap, recordName('fruit'), NS)).metadata.resourceVersion;
    const result = await stack.stack.up({ onOutput });
    expect(result.summary.result).toBe('succeeded');
    expect(changes(result.summary.resourceChanges)).toEqual({});
    expect((await env.admin.get(KnownTypes.ConfigMap, recordName('fruit'), NS)).metadata.resourceVersion).toBe(before);
    const refreshed = await stack.stack.refresh({ onOutput });
    expect(refreshed.summary.result).toBe('succeeded');
    expect(changes(refreshed.summary.resourceChanges)).toEqual({});
  }, 300_000);

  test('an up killed mid-migration and run again finishes without a skipped or repeated step', async () => {
    const first = await active();
    const recorder = await recordRouteWeights(env.admin, NS, 'fruit-httproute');
    cpu = '3';
    cliOutput.length = 0;
    const killed = stack.stack.up({ onOutput }).then(
      () => 'finished',
      () => 'failed',
    );
    await waitFor(() => recorder.history.some((h) => h.weights.length === 2 && h.weights.every((w) => w.weight === 50)), 'the migration to reach a 50/50 split', 120_000);
    const pids = descendants(process.pid).filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('pulumi');
      } catch {
        return false; // exited meanwhile
      }
    });
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone with its parent
      }
    }
    expect(await killed).toBe('failed');
    const split = recorder.history.length;
    await stack.stack.cancel(); // `pulumi cancel`: releases the lock the killed update held
    cliOutput.length = 0;
    const result = await stack.stack.up({ onOutput });
    recorder.stop();
    expect({ result: result.summary.result, output: cliOutput.join('') }).toMatchObject({ result: 'succeeded' });
    const third = result.outputs.active.value as string;
    expect(third).not.toBe(first);
    expect(recorder.history.length).toBeGreaterThan(split);
    expect(recordedPendingWeights(recorder.history, third)).toEqual(EXPECTED_PENDING_WEIGHTS);
    expect(recorder.history[recorder.history.length - 1].weights).toEqual([{ name: `${third}-serve-svc`, weight: 100 }]);
  }, 400_000);

  test('destroy removes the clusters, Services, Gateway, route and record', async () => {
    const result = await stack.stack.destroy({ onOutput });
    expect(result.summary.result).toBe('succeeded');
    expect((await env.admin.list(RAYCLUSTER, { namespace: NS })).items).toEqual([]);
    expect(await env.admin.tryGet(HTTPROUTE, 'fruit-httproute', NS)).toBeUndefined();
    expect(await env.admin.tryGet({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', plural: 'gateways', namespaced: true }, 'fruit-gateway', NS)).toBeUndefined();
    // KubeRay's head Services belong to their RayClusters: the garbage collector removes them.
    await waitFor(async () => (await env.admin.list(KnownTypes.Service, { namespace: NS })).items.length === 0, 'every Service to be gone');
    expect(await env.admin.tryGet(KnownTypes.ConfigMap, recordName('fruit'), NS)).toBeUndefined();
  }, 300_000);
});

describe('executor pulumi from a Python program, through the plugin package', () => {
  const PY_NS = 'pulumi-python';
  let work: string;
  let python: PluginPython;
  /** program.py's `service` settings: what the TypeScript block's `args()` sets, with the cluster's cpu. */
  const settings = (cpu: string) => ({ RAYSHIFT_SERVICE_SETTINGS: JSON.stringify({ namespace: PY_NS, cpu, serveConfig: serveConfig(), kubeconfig, dashboardAddressTemplate: env.fleet.template }) });

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-plugin-up-'));
    python = await startPluginPython(work);
    await createNamespace(env.admin, PY_NS);
  }, 300_000);

  afterAll(() => {
    python?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('up creates the service; an up with a changed cluster spec runs the incremental upgrade along the plan', async () => {
    const stackDir = path.join(work, 'stack');
    const created = await python.run(stackDir, 'up', 'service', settings('1'));
    expect(created.error).toBeUndefined();
    const first = created.outputs!.active as string;
    expect(first).toMatch(/^fruit-\w{5}$/);
    const recorder = await recordRouteWeights(env.admin, PY_NS, 'fruit-httproute');
    await waitFor(() => recorder.history.length > 0, 'the route to be watched');
    const upgraded = await python.run(stackDir, 'up', 'service', settings('2'));
    recorder.stop();
    expect(upgraded.error).toBeUndefined();
    const second = upgraded.outputs!.active as string;
    expect(second).not.toBe(first);
    expect(recordedPendingWeights(recorder.history, second)).toEqual(EXPECTED_PENDING_WEIGHTS);
    expect(recorder.history[recorder.history.length - 1].weights).toEqual([{ name: `${second}-serve-svc`, weight: 100 }]);
    expect((await env.admin.list(RAYCLUSTER, { namespace: PY_NS })).items.map((c) => c.metadata.name)).toEqual([second]);
    // The kubeconfig (a secret input in the schema) never reaches the state in clear.
    const stateFiles = execFileSync('find', [path.join(stackDir, 'state'), '-name', '*.json', '-path', '*stacks*'], { encoding: 'utf8' }).trim().split('\n').filter((f) => f !== '');
    expect(stateFiles.length).toBeGreaterThan(0);
    for (const file of stateFiles) expect(fs.readFileSync(file, 'utf8')).not.toContain(env.cp.adminToken);
  }, 600_000);
});

describe('executor operator', () => {
  let operator: Operator;
  const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

  beforeAll(async () => {
    operator = new Operator({ client: env.admin, resolver: templateDashboardResolver(env.fleet.template), log: silent, capacityPollMs: 50 });
    await operator.start();
  }, 60_000);

  afterAll(async () => {
    await operator?.stop();
  });

  /** Steps 5 s apart, so the upgrade is still running when the follower (a fresh provider process) starts. */
  const SLOW_INCREMENTAL = { ...INCREMENTAL, clusterUpgradeOptions: { ...INCREMENTAL.clusterUpgradeOptions, intervalSeconds: 5 } };

  test('up waits until the operator serves the service, and follows its upgrade to the end', async () => {
    let cpu = '1';
    const stack = await startPulumiStack({
      projectName: 'rayshift-e2e',
      stackName: 'operator-executor',
      kubeconfig: env.cp.kubeconfigPath,
      program: async () => {
        const provider = new k8s.Provider('k8s', { kubeconfig });
        const svc = new RayService(
          'op',
          { executor: 'operator', metadata: { name: 'op', namespace: NS }, rayClusterConfig: rayClusterConfig(cpu) as unknown as RayClusterConfig, serveConfig: serveConfig(), upgradeStrategy: SLOW_INCREMENTAL, rayClusterDeletionDelaySeconds: 0, kubeconfig, progressPollMs: 100, deadlineSeconds: 240 },
          { providers: { kubernetes: provider } },
        );
        return { active: svc.activeClusterName, moves: svc.progress!.movesSeen };
      },
    });
    stacks.push(stack);
    const created = await stack.stack.up({ onOutput });
    expect({ result: created.summary.result, output: cliOutput.join('') }).toMatchObject({ result: 'succeeded' });
    const first = created.outputs.active.value as string;
    expect(first).toBe(engineState(await env.admin.get(RAYSHIFT_RAYSERVICE, 'op', NS)).activeClusterName);

    cpu = '2';
    cliOutput.length = 0;
    const upgraded = await stack.stack.up({ onOutput });
    expect({ result: upgraded.summary.result, output: cliOutput.join('') }).toMatchObject({ result: 'succeeded' });
    const second = upgraded.outputs.active.value as string;
    expect(second).not.toBe(first);
    const state = engineState(await env.admin.get(RAYSHIFT_RAYSERVICE, 'op', NS));
    expect(state).toMatchObject({ activeClusterName: second, phase: 'Running' });
    expect(state.pendingClusterName).toBeUndefined();
    expect(upgraded.outputs.moves.value).toBeGreaterThan(0); // it saw the weights and capacities move
    expect(cliOutput.join('')).toMatch(/op upgrading: weights /);
    const destroyed = await stack.stack.destroy({ onOutput });
    expect(destroyed.summary.result).toBe('succeeded');
  }, 400_000);
});
