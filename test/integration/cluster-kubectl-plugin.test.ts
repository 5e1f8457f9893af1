/**
 * `kubectl rayshift` through a real kubectl (built from the control plane's Kubernetes release,
 * `npm run kubectl:build`) with the package's `bin/` on PATH, as a user's shell has it: kubectl
 * discovers the plugin (`kubectl plugin list`), hands it its words and flags, and the plugin reads
 * the user's kubeconfig from $KUBECONFIG with `--context` and `-n`. The RayService is upgraded by the
 * in-process operator on the test cluster (real KubeRay; TEST-ONLY Gateway status writer and Serve
 * dashboards), held mid-upgrade by a long interval, so `get rayservices` shows the split. Needs
 * `npm run build`.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { projectRoot } from '../../lib/crds/resolve';
import { requireFreshBuild } from '../cli/built';
import { kubectlPath, pluginShellEnv } from '../support/kubectl';
import { OperatorHarness, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, startOperatorHarness, waitFor } from '../support/operator-env';

const NS = 'plugin';
let harness: OperatorHarness;
let home: string;
let env: NodeJS.ProcessEnv;
let kubectl: string;

/**
 * The user's kubeconfig: its current context points at nothing (so only `--context` reaches the
 * cluster), `rayshift-test` is the cluster with namespace `default`, `team` the same cluster with
 * namespace `plugin`.
 */
function writeUserKubeconfig(adminKubeconfig: string, file: string): void {
  const kc = parse(fs.readFileSync(adminKubeconfig, 'utf8')) as { clusters: unknown[]; contexts: { name: string; context: { user: string } }[]; users: unknown[] };
  const user = kc.contexts[0].context.user;
  fs.writeFileSync(
    file,
    stringify({
      ...kc,
      clusters: [...kc.clusters, { name: 'nowhere', cluster: { server: 'https://127.0.0.1:9' } }],
      contexts: [...kc.contexts, { name: 'team', context: { cluster: 'rayshift-test', user, namespace: NS } }, { name: 'elsewhere', context: { cluster: 'nowhere', user } }],
      'current-context': 'elsewhere',
    }),
    { mode: 0o600 },
  );
}

beforeAll(async () => {
  requireFreshBuild();
  kubectl = kubectlPath();
  harness = await startOperatorHarness();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-kubectl-'));
  const kubeconfig = path.join(home, 'config');
  writeUserKubeconfig(harness.env.cp.kubeconfigPath, kubeconfig);
  env = pluginShellEnv(home, kubeconfig);
}, 300_000);

afterAll(async () => {
  await harness?.stop();
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

/** `kubectl ARGS…` in the user's shell environment (asynchronous: the operator runs in this process). */
function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(kubectl, args, { cwd: home, env, encoding: 'utf8' }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
    });
  });
}

/** The rows of a kubectl-style table, each split on runs of two or more spaces. */
function rows(table: string): string[][] {
  return table.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
}

/** The engine state's progress fields, for a wait's message. */
function progressOf(e: Record<string, any>): string {
  return `${e.phase}/${e.reason} weights ${e.activeWeight}/${e.pendingWeight} capacities ${e.activeTargetCapacity}/${e.pendingTargetCapacity} confirmed ${e.trafficConfirmed}`;
}

async function engineOf(name: string): Promise<Record<string, any>> {
  return engineState(await harness.env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, NS));
}

test('kubectl discovers the plugin in the package bin/ on PATH', async () => {
  const list = await run('plugin', 'list');
  expect(list.err).toBe('');
  expect(list.out).toContain(path.join(projectRoot(), 'bin', 'kubectl-rayshift'));
  const help = await run('rayshift', '--help');
  expect(help.code).toBe(0);
  expect(help.out).toMatch(/^Usage: kubectl rayshift \[options\] \[command\]/);
  expect(help.out).toMatch(/\n\s+get \[options\] <resource>/);
});

test('get rayservices shows the split mid-upgrade with --context and -n; steering verbs go through kubectl too', async () => {
  await createNamespace(harness.env.admin, NS);
  await harness.env.admin.create(rayService(NS, 'fruit', { maxSurge: 50, step: 25, interval: 3600 }));
  await waitFor(async () => (await engineOf('fruit')).phase === 'Running', 'the first cluster to serve', 120_000);
  const first = await engineOf('fruit');
  const active = first.activeClusterName as string;

  // Before the upgrade: no pending side.
  const before = await run('rayshift', 'get', 'rayservices', '-n', NS, '--context', 'rayshift-test');
  expect(before).toMatchObject({ code: 0, err: '' });
  expect(rows(before.out)).toEqual([
    ['NAME', 'PHASE/REASON', 'ACTIVE', 'PENDING', 'WEIGHTS', 'CAPACITIES', 'NEXT STEP'],
    ['fruit', `Running/${first.reason}`, active, '-', '100/-', '100/-', '-'],
  ]);

  // The upgrade: the service's first traffic step (25 %) is immediate, the next one an hour later,
  // so the upgrade stays at 75/25 while we look.
  await harness.env.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'fruit', NS, { spec: { rayClusterConfig: rayClusterConfig('2') } });
  await waitFor(async () => {
    const e = await engineOf('fruit');
    return (e.phase === 'Upgrading' && e.pendingWeight === 25) || progressOf(e);
  }, 'the first traffic step', 120_000);
  const s = await engineOf('fruit');
  const asked = Date.now();
  const mid = await run('rayshift', 'get', 'rayservices', '-n', NS, '--context', 'rayshift-test');
  const answered = Date.now();
  expect(mid).toMatchObject({ code: 0, err: '' });
  const [header, row] = rows(mid.out);
  expect(header).toEqual(['NAME', 'PHASE/REASON', 'ACTIVE', 'PENDING', 'WEIGHTS', 'CAPACITIES', 'NEXT STEP']);
  expect(row.slice(0, 6)).toEqual(['fruit', `Upgrading/${s.reason}`, active, s.pendingClusterName, '75/25', `${s.activeTargetCapacity}/${s.pendingTargetCapacity}`]);
  expect(s.pendingTargetCapacity).toBeGreaterThanOrEqual(25);
  // The countdown: an interval after the last weight change (its decision while the route is unconfirmed).
  const due = (s.trafficConfirmed ? s.lastTrafficMigratedTime : s.lastProgressTime) + 3600_000;
  const m = /^traffic step in (?:(\d+)h)?(\d+)m(\d\d)s$/.exec(row[6]);
  expect(m).not.toBeNull();
  const left = Number(m![1] ?? 0) * 3600 + Number(m![2]) * 60 + Number(m![3]);
  expect(left).toBeGreaterThanOrEqual(Math.floor((due - answered) / 1000));
  expect(left).toBeLessThanOrEqual(Math.ceil((due - asked) / 1000));

  // The context's namespace is the default; -A lists every namespace; the current context (nowhere) fails.
  expect(rows((await run('rayshift', 'get', 'rayservices', '--context', 'team')).out)[1].slice(0, 6)).toEqual(row.slice(0, 6));
  const all = rows((await run('rayshift', 'get', 'rayservices', '-A', '--context', 'rayshift-test')).out);
  expect(all[0][0]).toBe('NAMESPACE');
  expect(all.find((r) => r[1] === 'fruit')!.slice(0, 7)).toEqual([NS, ...row.slice(0, 6)]);
  const nowhere = await run('rayshift', 'get', 'rayservices', '-n', NS);
  expect(nowhere.code).toBe(1);
  expect(nowhere.err).toMatch(/^error: .*127\.0\.0\.1:9/);
  const unknown = await run('rayshift', 'get', 'rayservices', '--context', 'missing');
  expect(unknown).toEqual({ code: 1, out: '', err: 'error: kubeconfig has no context "missing"\n' });

  // status and the steering verbs, with the context's namespace.
  const status = await run('rayshift', 'status', 'fruit', '--context', 'team');
  expect(status.code).toBe(0);
  expect(status.out).toMatch(new RegExp(`pending\\s+${s.pendingClusterName}\\s+traffic [█░]+\\s+25%`));
  expect(await run('rayshift', 'pause', 'fruit', '--context', 'team')).toEqual({ code: 0, out: `RayService ${NS}/fruit paused: no further step until resumed\n`, err: '' });
  await waitFor(async () => (await engineOf('fruit')).phase === 'Paused', 'the pause to hold the upgrade');
  expect(rows((await run('rayshift', 'get', 'rayservices', '--context', 'team')).out)[1].slice(1, 6)).toEqual(['Paused/Paused', active, s.pendingClusterName, '75/25', `${s.activeTargetCapacity}/${s.pendingTargetCapacity}`]);
  expect(await run('rayshift', 'resume', 'fruit', '--context', 'team')).toEqual({ code: 0, out: `RayService ${NS}/fruit resumed\n`, err: '' });
  await waitFor(async () => (await engineOf('fruit')).phase === 'Upgrading', 'the upgrade to resume');
  expect(await run('rayshift', 'promote', 'fruit', '-n', NS, '--context', 'rayshift-test')).toEqual({ code: 0, out: `RayService ${NS}/fruit promoting: the upgrade finishes without waiting for intervals\n`, err: '' });
  await waitFor(async () => {
    const e = await engineOf('fruit');
    return e.phase === 'Running' && e.pendingClusterName === undefined && e.activeClusterName === s.pendingClusterName;
  }, 'the promoted upgrade to finish', 120_000);
  const promoted = await engineOf('fruit');
  expect(rows((await run('rayshift', 'get', 'rayservices', '--context', 'team')).out)[1]).toEqual(['fruit', `Running/${promoted.reason}`, s.pendingClusterName, '-', '100/-', '100/-', '-']);

  // abort rolls a held upgrade back to the serving cluster (with 1 s intervals, so that the rollback's
  // steps do not wait an hour); rollback needs the API server.
  expect((await run('rayshift', 'pause', 'fruit', '--context', 'team')).code).toBe(0);
  await harness.env.admin.patchMerge(RAYSHIFT_RAYSERVICE, 'fruit', NS, { spec: { rayClusterConfig: rayClusterConfig('3'), upgradeStrategy: { clusterUpgradeOptions: { intervalSeconds: 1 } } } });
  await waitFor(async () => {
    const e = await engineOf('fruit');
    return (e.pendingClusterName !== undefined && e.phase === 'Paused') || progressOf(e);
  }, 'the next upgrade to start, held', 120_000);
  expect(await run('rayshift', 'abort', 'fruit', '--context', 'team')).toEqual({ code: 0, out: `RayService ${NS}/fruit aborting: traffic and capacity return to the active cluster\n`, err: '' });
  await waitFor(async () => {
    const e = await engineOf('fruit');
    return (e.pendingClusterName === undefined && e.activeClusterName === s.pendingClusterName && e.activeWeight === 100) || progressOf(e);
  }, 'the aborted upgrade to roll back', 120_000);
  const rollback = await run('rayshift', 'rollback', 'fruit', '--context', 'team');
  expect(rollback).toEqual({ code: 2, out: '', err: "error: rollback goes through the API server, which recovers the serving cluster's spec: give --api-server\n" });
}, 600_000);

test('plan reads files as `rayshift plan` does', async () => {
  const file = path.join(home, 'svc.yaml');
  fs.writeFileSync(file, stringify(rayService(NS, 'planned', { maxSurge: 50, step: 25, interval: 60 })));
  const plan = await run('rayshift', 'plan', file);
  expect(plan.code).toBe(0);
  expect(plan.out).toContain('planned');
});
