/**
 * `rayshift status --watch` and the steering verbs, run as the built binary against the operator on
 * a real kube-apiserver (TEST-ONLY simulated KubeRay, Gateway controller and Serve dashboards):
 * through a pipe it prints one line per change, under a terminal (tmux) it redraws one screen in
 * place, and `pause` / `resume` hold and release the next step. Needs `npm run build`.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as path from 'node:path';
import { OperatorEnv, OperatorHarness, RAYSHIFT_RAYSERVICE, createNamespace, engineState, rayClusterConfig, rayService, startOperatorHarness, waitFor } from '../support/operator-env';

const root = path.resolve(__dirname, '../..');
const bin = path.join(root, 'bin/rayshift.js');
let harness: OperatorHarness;
let env: OperatorEnv;

beforeAll(async () => {
  harness = await startOperatorHarness();
  env = harness.env;
}, 300_000);

afterAll(async () => {
  await harness?.stop();
});

async function runningService(ns: string, name: string, interval: number): Promise<string> {
  await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, name, { maxSurge: 50, step: 25, interval }));
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns)).phase === 'Running', 'the first cluster to serve');
  return engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns)).activeClusterName as string;
}

async function startUpgrade(ns: string, name: string): Promise<void> {
  await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, name, ns, { spec: { rayClusterConfig: rayClusterConfig('2') } });
}

function cli(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [bin, ...args, '--kubeconfig', env.cp.kubeconfigPath], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } }) };
  } catch (err) {
    const e = err as { status: number; stdout: string };
    return { code: e.status, out: e.stdout };
  }
}

test('through a pipe, --watch --until-done prints one line per change, weights only grow, and exits 0 when promoted', async () => {
  const ns = 'cli-pipe';
  await runningService(ns, 'fruit', 1);
  // Held by a pause so that the watcher (a Node process starting on a busy machine) sees every step.
  expect(cli(['pause', 'fruit', '-n', ns]).code).toBe(0);
  await startUpgrade(ns, 'fruit');
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).phase === 'Paused', 'the upgrade to be held');
  const child: ChildProcess = spawn(process.execPath, [bin, 'status', 'fruit', '-n', ns, '--kubeconfig', env.cp.kubeconfigPath, '--watch', '--until-done'], { cwd: root, env: { ...process.env, NO_COLOR: '1' } });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(() => out.includes('Paused/'), 'the watcher to print the held upgrade');
  expect(cli(['resume', 'fruit', '-n', ns]).code).toBe(0);
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<string>((r) => (timer = setTimeout(() => r('timeout'), 90_000)))]);
  clearTimeout(timer);
  if (code === 'timeout') child.kill();
  expect(code).toBe(0);
  const lines = out.trim().split('\n');
  for (const l of lines) expect(l).toMatch(/^\d\d:\d\d:\d\d\.\d{3} cli-pipe\/fruit (Running|Upgrading|Paused)\/\w+ active /);
  expect(new Set(lines.map((l) => l.slice(13))).size).toBe(lines.length); // each line is a change
  const pending = lines.map((l) => /\| pending \S+ w(\d+)/.exec(l)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1]));
  expect(pending).toEqual([...pending].sort((a, b) => a - b));
  expect(pending).toEqual(expect.arrayContaining([25, 50, 75, 100]));
  expect(lines[lines.length - 1]).toMatch(/Running\/\w+ active \S+ w100 cap100$/);
}, 150_000);

test('under a terminal, --watch redraws one screen in place with the live countdown', async () => {
  const ns = 'cli-tty';
  await runningService(ns, 'fruit', 20);
  await startUpgrade(ns, 'fruit');
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).pendingWeight === 25, 'the first traffic step', 60_000);
  const session = `rayshift-status-${process.pid}`;
  const command = [process.execPath, bin, 'status', 'fruit', '-n', ns, '--kubeconfig', env.cp.kubeconfigPath, '--watch'].map((a) => `'${a}'`).join(' ');
  execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '160', '-y', '30', `NO_COLOR=1 ${command}`]);
  try {
    const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' });
    await waitFor(() => /next traffic step in \d+\.\ds/.test(screen()), 'the countdown', 30_000, 200);
    const first = /next traffic step in (\d+\.\d)s/.exec(screen())![1];
    await waitFor(() => {
      const m = /next traffic step in (\d+\.\d)s/.exec(screen());
      return m !== null && Number(m[1]) < Number(first);
    }, 'the countdown to move', 10_000, 200);
    const s = screen();
    expect(s.match(/RayService cli-tty\/fruit/g)).toHaveLength(1); // redrawn in place, not scrolled
    expect(s).toMatch(/active\s+fruit-\w{5}\s+traffic [█░]+\s+75%\s+capacity [█░]+\s+100%/);
    expect(s).toMatch(/pending\s+fruit-\w{5}\s+traffic [█░]+\s+25%\s+capacity [█░]+\s+50%/);
  } finally {
    execFileSync('tmux', ['kill-session', '-t', session]);
  }
}, 150_000);

test('pause holds the next step and resume releases it; a missing service is an error', async () => {
  const ns = 'cli-steer';
  await runningService(ns, 'fruit', 1);
  const paused = cli(['pause', 'fruit', '-n', ns]);
  expect(paused).toEqual({ code: 0, out: `RayService ${ns}/fruit paused: no further step until resumed\n` });
  await startUpgrade(ns, 'fruit');
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).phase === 'Paused', 'the pause to hold the upgrade', 60_000);
  await new Promise((r) => setTimeout(r, 2500)); // more than two intervals
  expect(engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).pendingWeight).toBe(0);
  expect(cli(['status', 'fruit', '-n', ns]).out).toContain('Paused (Paused)');
  expect(cli(['resume', 'fruit', '-n', ns]).code).toBe(0);
  await waitFor(async () => {
    const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns));
    return s.phase === 'Running' && s.pendingClusterName === undefined;
  }, 'the upgrade to finish after resume', 60_000);
  expect(cli(['promote', 'nothing', '-n', ns]).code).toBe(1);
}, 150_000);
