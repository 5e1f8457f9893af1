/**
 * `rayshift status --watch` and the steering verbs, run as the built binary against the operator on
 * the test cluster (real KubeRay; TEST-ONLY Gateway status writer and Serve dashboards):
 * through a pipe it prints one line per change, under a terminal (tmux) it redraws one screen in
 * place, and `pause` / `resume` hold and release the next step. With `--api-server` the same verbs
 * go through the rayshift API server as a token's user and print what the kubeconfig path prints;
 * a user without rights is told which verb on which object was denied. Needs `npm run build`.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApiEnv, TEAM_A, startApiEnv } from '../apiserver/support/api-env';
import { RAYCLUSTER, RAYSHIFT_RAYSERVICE, createNamespace, engineState, operatorPassNow, rayClusterConfig, rayService, waitFor } from '../support/operator-env';

const root = path.resolve(__dirname, '../..');
const bin = path.join(root, 'bin/rayshift.js');
let env: ApiEnv;

beforeAll(async () => {
  env = await startApiEnv({ operator: true });
}, 300_000);

afterAll(async () => {
  await env?.stop();
});

async function runningService(ns: string, name: string, interval: number): Promise<string> {
  if (!(await env.admin.tryGet({ apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false }, ns))) await createNamespace(env.admin, ns);
  await env.admin.create(rayService(ns, name, { maxSurge: 50, step: 25, interval }));
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns)).phase === 'Running', 'the first cluster to serve');
  return engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns)).activeClusterName as string;
}

async function startUpgrade(ns: string, name: string): Promise<void> {
  await env.admin.patchMerge(RAYSHIFT_RAYSERVICE, name, ns, { spec: { rayClusterConfig: rayClusterConfig('2') } });
}

/**
 * Runs the CLI with `connection` (default: the admin's kubeconfig) and extra environment variables;
 * `err` is standard error when it fails. Asynchronous: the API server and the operator run in this
 * process and must keep answering meanwhile.
 */
function run(args: string[], connection = ['--kubeconfig', env.cp.kubeconfigPath], extraEnv: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args, ...connection], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...extraEnv } }, (error, out, err) => {
      resolve(error ? { code: typeof error.code === 'number' ? error.code : -1, out, err } : { code: 0, out, err: '' });
    });
  });
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const { code, out } = await run(args);
  return { code, out };
}

/** `--api-server` options reaching the test's API server (TLS checked against the control plane's CA) with a token file. */
function viaApi(tokenFile: string): string[] {
  return ['--api-server', env.api.url, '--ca-file', env.cp.caFile, '--token-file', tokenFile];
}

function writeToken(name: string, token: string): string {
  const file = path.join(env.cp.dir, `${name}.token`);
  fs.writeFileSync(file, token, { mode: 0o600 });
  return file;
}

/**
 * Follows the held upgrade of `ns/fruit` with `status --watch --until-done` through a pipe (reaching
 * the service with `connection`), lets `resume` release it, and checks that the watcher exits 0
 * having printed one line per change, the last with the new cluster serving everything; resolves to the lines.
 */
async function watchHeldUpgrade(ns: string, connection: string[], resume: () => Promise<void>): Promise<string[]> {
  const child = spawn(process.execPath, [bin, 'status', 'fruit', '-n', ns, ...connection, '--watch', '--until-done'], { cwd: root, env: { ...process.env, NO_COLOR: '1' } });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(() => out.includes('Paused/'), 'the watcher to print the held upgrade');
  await resume();
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<string>((r) => (timer = setTimeout(() => r('timeout'), 90_000)))]);
  clearTimeout(timer);
  if (code === 'timeout') child.kill();
  expect(code).toBe(0);
  const lines = out.trim().split('\n');
  for (const l of lines) expect(l).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} ${ns}/fruit (Running|Upgrading|Paused)/\\w+ active `));
  expect(new Set(lines.map((l) => l.slice(13))).size).toBe(lines.length); // each line is a change
  expect(lines[lines.length - 1]).toMatch(/Running\/\w+ active \S+ w100 cap100$/);
  return lines;
}

/**
 * Proves the pause held `ns/name` at a pass that would have stepped without it: once the pending
 * cluster's head is ready and an interval has passed since traffic last moved, if it ever did (an
 * unpaused engine raises the pending capacity at once, then moves traffic), the operator is made to run a pass,
 * whose engine state must still hold no pending capacity and no pending traffic.
 */
async function expectHeldAfterDue(ns: string, name: string): Promise<void> {
  const pending = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns)).pendingClusterName as string;
  expect(pending).toBeDefined();
  await waitFor(async () => {
    const cluster = await env.admin.tryGet(RAYCLUSTER, pending, ns);
    const conditions = (cluster?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns));
    return conditions.some((c) => c.type === 'HeadPodReady' && c.status === 'True') && (s.lastTrafficMigratedTime === undefined || Date.now() > s.lastTrafficMigratedTime + 1000);
  }, 'the pending head to be ready and the next step due', 60_000);
  const s = await operatorPassNow(env.admin, ns, name);
  expect({ phase: s.phase, pendingTargetCapacity: s.pendingTargetCapacity, pendingWeight: s.pendingWeight }).toEqual({ phase: 'Paused', pendingTargetCapacity: 0, pendingWeight: 0 });
}

test('through a pipe, --watch --until-done prints one line per change, weights only grow, and exits 0 when promoted', async () => {
  const ns = 'cli-pipe';
  await runningService(ns, 'fruit', 1);
  // Held by a pause so that the watcher (a Node process starting on a busy machine) sees every step.
  expect((await cli(['pause', 'fruit', '-n', ns])).code).toBe(0);
  await startUpgrade(ns, 'fruit');
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).phase === 'Paused', 'the upgrade to be held');
  const lines = await watchHeldUpgrade(ns, ['--kubeconfig', env.cp.kubeconfigPath], async () => expect((await cli(['resume', 'fruit', '-n', ns])).code).toBe(0));
  const pending = lines.map((l) => /\| pending \S+ w(\d+)/.exec(l)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1]));
  expect(pending).toEqual([...pending].sort((a, b) => a - b));
  expect(pending).toEqual(expect.arrayContaining([25, 50, 75, 100]));
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
  const paused = await cli(['pause', 'fruit', '-n', ns]);
  expect(paused).toEqual({ code: 0, out: `RayService ${ns}/fruit paused: no further step until resumed\n` });
  await startUpgrade(ns, 'fruit');
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).phase === 'Paused', 'the pause to hold the upgrade', 60_000);
  await expectHeldAfterDue(ns, 'fruit');
  expect((await cli(['status', 'fruit', '-n', ns])).out).toContain('Paused (Paused)');
  expect((await cli(['resume', 'fruit', '-n', ns])).code).toBe(0);
  await waitFor(async () => {
    const s = engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns));
    return s.phase === 'Running' && s.pendingClusterName === undefined;
  }, 'the upgrade to finish after resume', 60_000);
  expect((await cli(['promote', 'nothing', '-n', ns])).code).toBe(1);
}, 150_000);

test('through --api-server, status and pause/resume print what the kubeconfig path prints, and --watch follows the upgrade', async () => {
  const ns = TEAM_A;
  await runningService(ns, 'fruit', 1);
  const alice = viaApi(writeToken('alice', env.tokens.alice));
  const direct = await run(['status', 'fruit', '-n', ns]);
  expect(direct.code).toBe(0);
  expect(await run(['status', 'fruit', '-n', ns], alice)).toEqual(direct);
  expect(await run(['status', 'fruit', '-n', ns, '--json'], alice)).toEqual(await run(['status', 'fruit', '-n', ns, '--json']));

  // The token may come from $RAYSHIFT_TOKEN too.
  const paused = await run(['pause', 'fruit', '-n', ns], ['--api-server', env.api.url, '--ca-file', env.cp.caFile], { RAYSHIFT_TOKEN: env.tokens.alice });
  expect(paused).toEqual({ code: 0, out: `RayService ${ns}/fruit paused: no further step until resumed\n`, err: '' });
  const again = await run(['pause', 'fruit', '-n', ns], alice);
  expect(again).toEqual({ code: 1, out: '', err: `error: cannot pause RayService ${ns}/fruit: the upgrade is already paused (phase Running)\n` });
  // The kubeconfig path applies the same rules and says the same.
  expect(await run(['pause', 'fruit', '-n', ns])).toEqual(again);

  await startUpgrade(ns, 'fruit');
  await waitFor(async () => engineState(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns)).phase === 'Paused', 'the pause to hold the upgrade', 60_000);
  const held = await run(['status', 'fruit', '-n', ns], alice);
  expect(held.out).toContain('Paused (Paused)');
  expect(held).toEqual(await run(['status', 'fruit', '-n', ns]));

  await watchHeldUpgrade(ns, alice, async () => expect(await run(['resume', 'fruit', '-n', ns], alice)).toEqual({ code: 0, out: `RayService ${ns}/fruit resumed\n`, err: '' }));
}, 180_000);

test('through --api-server, a user without rights is told which verb on which object was denied (exit 1); no token is not authenticated', async () => {
  const ns = TEAM_A;
  if (!(await env.admin.tryGet(RAYSHIFT_RAYSERVICE, 'fruit', ns))) await runningService(ns, 'fruit', 1);
  const bob = viaApi(writeToken('bob', env.tokens.bob));
  expect(await run(['status', 'fruit', '-n', ns], bob)).toEqual({ code: 1, out: '', err: `error: permission denied: you may not read RayService ${ns}/fruit\n` });
  expect(await run(['pause', 'fruit', '-n', ns], bob)).toEqual({ code: 1, out: '', err: `error: permission denied: you may not pause RayService ${ns}/fruit\n` });
  const anonymous = await run(['status', 'fruit', '-n', ns], ['--api-server', env.api.url, '--ca-file', env.cp.caFile], { RAYSHIFT_TOKEN: '' });
  expect(anonymous).toEqual({ code: 1, out: '', err: `error: not authenticated by the API server ${env.api.url}: no token given (use --token, --token-file or $RAYSHIFT_TOKEN)\n` });
  const wrong = await run(['status', 'fruit', '-n', ns, '--token', 'not-a-token'], ['--api-server', env.api.url, '--ca-file', env.cp.caFile]);
  expect(wrong.code).toBe(1);
  expect(wrong.err).toContain('the token was rejected');
  expect(wrong.err).not.toContain('not-a-token');
  const aliceFile = writeToken('alice', env.tokens.alice);
  expect(await run(['status', 'missing', '-n', ns], viaApi(aliceFile))).toEqual({ code: 1, out: '', err: `error: RayService (rayshift.dev/v1alpha1) ${ns}/missing not found\n` });
  // The API server's certificate is checked against --ca-file (the system's CAs do not know the test CA) unless told not to.
  const untrusted = await run(['status', 'fruit', '-n', ns], ['--api-server', env.api.url, '--token-file', aliceFile]);
  expect(untrusted.code).toBe(1);
  expect(untrusted.err).toMatch(/^error: the certificate of the API server .* is not trusted: .*\(give its CA with --ca-file\)\n$/);
  expect(await run(['status', 'fruit', '-n', ns], ['--api-server', env.api.url, '--token-file', aliceFile, '--insecure-skip-tls-verify'])).toEqual(await run(['status', 'fruit', '-n', ns], viaApi(aliceFile)));
}, 120_000);
