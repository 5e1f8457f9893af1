/**
 * Child processes of the test harness (the control plane in `controlplane.ts`, the cluster's
 * controllers in `cluster.ts`): each runs in its own process group with its output appended to a log
 * file, is killed with its whole group, and is reaped by a watchdog if this process dies first.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { waitAtMost, waitFor } from './wait-at-most';

/** A launched process. */
export interface Proc {
  /** Short name for messages, e.g. `kube-apiserver`. */
  readonly name: string;
  readonly child: ChildProcess;
  /** The file its stdout and stderr are appended to. */
  readonly log: string;
  /** Resolves with a description of how the process ended. */
  readonly exited: Promise<string>;
  /** True once it has exited (or failed to start). */
  done: boolean;
}

/** Options of `Supervisor.launch`. */
export interface LaunchOptions {
  /** Working directory; default the supervisor's folder. */
  readonly cwd?: string;
  /** Environment; default this process's. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Supervisors not yet released, whose groups are killed synchronously if this process exits. */
const live = new Set<Supervisor>();
let exitHookInstalled = false;

/**
 * Launches and kills the processes of one harness that owns the folder `dir`. A detached bash
 * watchdog reads a pipe from this process: it learns each process group and, when the pipe closes
 * without `release()` (this process died, e.g. Jest was killed), kills those groups and removes `dir`.
 * `dir` is kept in both cases when the environment variable named `keepVar` is `1`.
 */
export class Supervisor {
  private readonly watchdog: ChildProcess;
  private readonly procs: Proc[] = [];
  private released = false;

  constructor(
    readonly dir: string,
    private readonly keepVar: string,
  ) {
    const script = [
      'dir=$1; keep=$2; groups=()',
      'while IFS= read -r line; do',
      '  case $line in',
      '    "pgid "*) groups+=("${line#pgid }") ;;',
      '    release) exit 0 ;;',
      '  esac',
      'done',
      'for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done',
      '[ "$keep" = 1 ] || rm -rf -- "$dir"',
    ].join('\n');
    const wd = spawn('bash', ['-c', script, 'rayshift-test-watchdog', dir, this.keep() ? '1' : '0'], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    wd.on('error', () => undefined);
    wd.stdin?.on('error', () => undefined);
    wd.unref();
    (wd.stdin as unknown as net.Socket | null)?.unref?.();
    this.watchdog = wd;
    live.add(this);
    installExitHook();
  }

  /** Starts `file` with `args` in a new process group, stdout and stderr appended to `log`. */
  launch(name: string, file: string, args: readonly string[], log: string, opts: LaunchOptions = {}): Proc {
    fs.appendFileSync(log, `--- ${new Date().toISOString()} starting ${name} ${args.join(' ')}\n`);
    const fd = fs.openSync(log, 'a');
    let child: ChildProcess;
    try {
      child = spawn(file, [...args], { detached: true, stdio: ['ignore', fd, fd], cwd: opts.cwd ?? this.dir, env: opts.env });
    } finally {
      fs.closeSync(fd);
    }
    child.unref();
    const proc: Proc = {
      name,
      child,
      log,
      done: false,
      exited: new Promise<string>((resolve) => {
        child.once('error', (e) => {
          proc.done = true;
          resolve(`failed to start: ${e.message}`);
        });
        child.once('exit', (code, signal) => {
          proc.done = true;
          resolve(signal ? `killed by ${signal}` : `exited with code ${code}`);
        });
      }),
    };
    if (child.pid) this.watchdog.stdin?.write(`pgid ${child.pid}\n`);
    this.procs.push(proc);
    return proc;
  }

  /** Sends `signal` to the process group, SIGKILL after `graceMs`, and waits for the exit. */
  async kill(p: Proc, signal: NodeJS.Signals, graceMs: number): Promise<void> {
    if (p.done || !p.child.pid) return;
    tryKillGroup(p.child.pid, signal);
    // A referenced timer: the children are unref'd, so without it nothing would keep the event loop
    // alive until their 'exit' events arrive.
    if (!(await waitAtMost(p.exited, graceMs))) {
      tryKillGroup(p.child.pid, 'SIGKILL');
      await waitAtMost(p.exited, 5_000);
    }
    // The group may still hold children of the leader; make sure none survive.
    tryKillGroup(p.child.pid, 'SIGKILL');
  }

  /**
   * Call once every process is stopped: removes `dir` (unless kept) and lets the watchdog exit
   * without acting. Idempotent.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (!this.keep()) fs.rmSync(this.dir, { recursive: true, force: true });
    live.delete(this);
    if (this.watchdog.stdin && !this.watchdog.stdin.destroyed) this.watchdog.stdin.end('release\n');
  }

  /** Synchronous last resort on process exit: SIGKILLs every group, removes `dir` (unless kept). */
  killNow(): void {
    for (const p of this.procs) if (!p.done && p.child.pid) tryKillGroup(p.child.pid, 'SIGKILL');
    if (!this.keep()) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private keep(): boolean {
    return process.env[this.keepVar] === '1';
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const s of live) s.killNow();
  });
}

/** Options of `pollUntil`. */
export interface PollOptions {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Fail at once when one of these exits. */
  readonly procs?: readonly Proc[];
  /** Logs whose last lines a failure quotes, with how many lines of each. */
  readonly logs?: ReadonlyArray<{ readonly file: string; readonly lines: number }>;
  /** Pause between checks; default 200 ms. */
  readonly intervalMs?: number;
}

/**
 * Polls `check` (undefined = done, else the reason it is not) until it passes; throws naming `what`,
 * the last reason and the tails of `opts.logs` when the timeout passes or one of `opts.procs` exits.
 */
export async function pollUntil(what: string, check: () => Promise<string | undefined>, opts: PollOptions): Promise<void> {
  const tails = () => (opts.logs ?? []).map((l) => `--- last lines of ${l.file}:\n${logTail(l.file, l.lines)}`).join('\n');
  let dead: Proc | undefined;
  await waitFor(async () => (await check()) ?? true, what, {
    timeoutMs: opts.timeoutMs,
    everyMs: opts.intervalMs ?? 200,
    retryErrors: true,
    abortIf: () => {
      dead = (opts.procs ?? []).find((p) => p.done);
      return dead && `${dead.name} exited`;
    },
    explain: tails,
  }).catch(async (e: Error) => {
    // A dead process' exit status says more than "exited".
    throw dead ? new Error(`${dead.name} ${await dead.exited} while waiting for ${what}.\n${tails()}`) : e;
  });
}

/** The last `n` lines of a text file, or `(no log)`. */
export function logTail(file: string, n: number): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Sends `signal` to process group `pgid`, ignoring a group that is already gone. */
export function tryKillGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/** True when `file` is a regular file this process may execute. */
export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Distinct free loopback ports (bound at once with port 0, then released). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/**
 * One GET with a 5 s timeout, for health probes on loopback. An `https:` URL is not verified: the
 * components probed serve self-signed certificates they make at start-up.
 */
export function httpGet(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const req = url.startsWith('https:')
      ? https.get(url, { timeout: 5_000, agent: false, rejectUnauthorized: false }, onResponse)
      : http.get(url, { timeout: 5_000, agent: false }, onResponse);
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no response within 5 s`)));
    req.on('error', reject);
  });
}

/**
 * What one of the project's bin-dir scripts (`scripts/*-bin-dir.sh`, `test/traefik/bin-dir.sh`)
 * prints for `args`: a build's cache folder, the override it honours, or a pinned version.
 */
export function runBinDirScript(script: string, args: readonly string[] = []): string {
  try {
    return execFileSync('bash', [script, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    throw new Error(`${script} failed: ${String((e as { stderr?: string }).stderr ?? e).trim()}`);
  }
}
