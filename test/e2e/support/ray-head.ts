/**
 * Real Ray heads for the end-to-end tests: `ray start --head --block` from the pinned virtualenv
 * (scripts/install-ray.sh), with usage stats off and an explicit `RAY_AUTH_MODE`, each in its own
 * network namespace (netns.ts: default Ray ports, an ordinary IPv4 address), where the simulated pod
 * network (pod-network.ts) adds a Pod's IP. Each head is stopped by SIGKILL to its own process group,
 * then awaited until no process of its session is left, never `ray stop`, which would kill every Ray
 * process on the machine.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { projectRoot } from '../../../lib/crds/resolve';
import { RAY_AUTH_HEADER } from '../../../lib/runtime/serve/client';
import { waitAtMost, waitFor } from '../../support/wait-at-most';
import { NetnsHost, createNetnsHost } from './netns';

/** Dashboard auth of a head: none, or `RAY_AUTH_MODE=token` with this token. */
export type RayAuth = { readonly mode: 'disabled' } | { readonly mode: 'token'; readonly token: string };

/** Options of `startRayHead`. */
export interface RayHeadOptions {
  /** Short name, 1-6 lowercase letters or digits (`a`, `b`); names the namespace and temp dir. */
  readonly label: string;
  /** 1-based index: the namespace subnet `10.213.<index>.0/24`. */
  readonly index: number;
  /** @default { mode: 'disabled' } */
  readonly auth?: RayAuth;
  /** Logical CPUs Ray schedules on (each test replica asks 0.1). @default 2 */
  readonly numCpus?: number;
  /** How long to wait for the head's GCS health, ms. @default 240000 */
  readonly readyTimeoutMs?: number;
}

/** A running Ray head. */
export interface RayHead {
  readonly label: string;
  /** `http://host:port` of the dashboard (the Serve REST API). */
  readonly dashboardUrl: string;
  /** Host that reaches the head's Serve proxies from the root namespace. */
  readonly host: string;
  /** Serve HTTP proxy port. */
  readonly servePort: number;
  /** Serve gRPC proxy port. */
  readonly grpcPort: number;
  /** `host:port` of the head's Prometheus metrics (Ray's metrics agent; Serve's metrics among them), for a scrape target. */
  readonly metricsTarget: string;
  /** `http_options`/`grpc_options` host and ports this head's Serve must use (a Serve config fragment). */
  readonly serveNetworkOptions: { http_options: Record<string, unknown>; grpc_options: { port: number } };
  /** The auth mode the head was started with. */
  readonly auth: RayAuth;
  /** File with the output of `ray start`. */
  readonly logFile: string;
  /** `--temp-dir` (session logs under session_latest/logs). */
  readonly tempDir: string;
  /** Stops the head's process group (SIGTERM, SIGKILL after 35 s) and its namespace. Idempotent. */
  stop(): Promise<void>;
}

/** The virtualenv bin folder of the tests' Ray: `$RAYSHIFT_RAY_VENV/bin`, else `<repo>/.venv-ray/bin`. */
export function rayVenvBin(): string {
  return path.join(process.env.RAYSHIFT_RAY_VENV ?? path.join(projectRoot(), '.venv-ray'), 'bin');
}

/** Folders the heads put on PYTHONPATH: the test app and its generated gRPC stubs. */
export function rayAppPythonPath(): string {
  const venv = path.dirname(rayVenvBin());
  return [path.join(projectRoot(), 'test', 'e2e', 'rayapp'), path.join(venv, 'rayshift-gen')].join(path.delimiter);
}

/** Throws with the fix when the virtualenv is missing. */
export function assertRayInstalled(): void {
  const ray = path.join(rayVenvBin(), 'ray');
  if (!fs.existsSync(ray)) throw new Error(`${ray} is missing: run \`npm run e2e:setup\` (scripts/install-ray.sh) first`);
}

/** One GET; resolves with status and body, or rejects on a connection error or after `timeoutMs`. */
export function httpGet(url: string, timeoutMs = 5000, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs, headers: { 'user-agent': 'rayshift-e2e', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** `ray start` exited before its head was ready (e.g. Ray's fixed 30 s raylet registration wait ran out on a loaded machine). */
class HeadExitedEarly extends Error {}

/**
 * Starts a head and waits until it is ready: `ray start` printed "Ray runtime started." (the raylet
 * registered with the GCS) and the GCS answers healthy through the dashboard. When `ray start`
 * gives up before that — it waits a fixed 30 s for the raylet to register, which a loaded 2-core
 * machine can exceed ("The current node timed out during startup") — the head is stopped and
 * started again, `attempts` times in all (default 3).
 */
export async function startRayHead(options: RayHeadOptions & { readonly attempts?: number }): Promise<RayHead> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRayHeadOnce(options);
    } catch (err) {
      if (!(err instanceof HeadExitedEarly) || attempt >= attempts) throw err;
      const why = (err.message.split('\n').filter((l) => /Exception|Error/.test(l)).pop() ?? 'see its log').trim();
      process.stdout.write(`[e2e] Ray head ${options.label}: ray start gave up (${why}); starting it again (attempt ${attempt + 1} of ${attempts})\n`);
    }
  }
}

async function startRayHeadOnce(options: RayHeadOptions): Promise<RayHead> {
  assertRayInstalled();
  const { label, index } = options;
  const auth = options.auth ?? { mode: 'disabled' };
  const tempDir = `/tmp/rs-e2e-${label}`;
  fs.rmSync(tempDir, { recursive: true, force: true });
  fs.mkdirSync(tempDir, { recursive: true });
  const logFile = path.join(tempDir, 'ray-start.log');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PATH: `${rayVenvBin()}${path.delimiter}${process.env.PATH ?? ''}`,
    PYTHONPATH: rayAppPythonPath(),
    RAY_USAGE_STATS_ENABLED: '0',
    PYTHONDONTWRITEBYTECODE: '1', // no __pycache__ in the repository's test/e2e/rayapp
    RAY_AUTH_MODE: auth.mode,
    RAYSHIFT_CLUSTER: `ray-${label}`,
    // Ray's processes report their metrics (Serve's request counters among them) to the metrics
    // agent every 10 s by default; the analysis suite measures windows of a few seconds.
    RAY_metrics_report_interval_ms: '1000',
  };
  delete env.RAY_AUTH_TOKEN;
  delete env.RAY_AUTH_TOKEN_PATH;
  if (auth.mode === 'token') env.RAY_AUTH_TOKEN = auth.token;
  const common = [
    'start', '--head', '--block', `--temp-dir=${tempDir}`, '--include-dashboard=true', `--num-cpus=${options.numCpus ?? 2}`,
    '--object-store-memory=200000000', '--disable-usage-stats',
  ];
  const netns: NetnsHost = createNetnsHost(label, index);
  const host = netns.address;
  const [dashboardPort, servePort, grpcPort, metricsPort] = [8265, 8000, 9000, 8080];
  const command = 'ip';
  const args = ['netns', 'exec', netns.name, path.join(rayVenvBin(), 'ray'), ...common, `--node-ip-address=${host}`, '--dashboard-host=0.0.0.0', `--metrics-export-port=${metricsPort}`];
  const log = fs.openSync(logFile, 'a');
  const child: ChildProcess = spawn(command, args, { env, detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let exited: number | null | undefined;
  const exit = new Promise<void>((resolve) => child.once('exit', (code, signal) => {
    exited = code ?? (signal ? -1 : null);
    resolve();
  }));
  const pid = child.pid!;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const group = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pid, sig);
      } catch {
        // group gone
      }
    };
    // SIGKILL at once: on SIGTERM Ray drained for 34 s (measured, every head of every end-to-end
    // file, at teardown where nothing reads it). Ray's processes share the head's process group but
    // its workers (Serve's controller, proxy and replicas) each have one of their own in the head's
    // session; they exit once their raylet is gone, which is awaited so that none outlives the head.
    group('SIGKILL');
    await waitAtMost(exit, 10_000);
    const left = () => {
      const members = sessionMembers(pid);
      return members.length === 0 || `still running: ${members.join(', ')}`;
    };
    await waitFor(left, `the processes of Ray head ${label} to exit`, { timeoutMs: 30_000, everyMs: 100 }).catch((e: Error) => process.stderr.write(`[ray-head] ${e.message}\n`));
    netns.remove();
  };

  const dashboardUrl = `http://${host}:${dashboardPort}`;
  try {
    await waitFor(async () => {
      if (!fs.readFileSync(logFile, 'utf8').includes('Ray runtime started.')) return 'ray start has not logged "Ray runtime started."';
      const health = await httpGet(`${dashboardUrl}/api/gcs_healthz`, 3000).catch((e: Error) => e.message);
      return typeof health === 'string' ? health : health.status === 200 || `/api/gcs_healthz answered ${health.status}`;
    }, `Ray head ${label} to be healthy at ${dashboardUrl}`, {
      timeoutMs: options.readyTimeoutMs ?? 240_000,
      everyMs: 1000,
      retryErrors: true,
      abortIf: () => (exited !== undefined ? `ray start for head ${label} exited (${exited})` : undefined),
      explain: () => `${logFile}:\n${tail(logFile)}`,
    });
  } catch (e) {
    await stop();
    throw exited !== undefined ? new HeadExitedEarly(`ray start for head ${label} exited (${exited}) before it was ready; ${logFile}:\n${tail(logFile)}`) : e;
  }
  return {
    label,
    dashboardUrl,
    host,
    servePort,
    grpcPort,
    metricsTarget: `${host}:${metricsPort}`,
    serveNetworkOptions: { http_options: { host: '0.0.0.0', port: servePort }, grpc_options: { port: grpcPort } },
    auth,
    logFile,
    tempDir,
    stop,
  };
}

function authHeaders(head: RayHead): Record<string, string> {
  // Both the standard header and the one rayshift's client (and KubeRay) send.
  return head.auth.mode === 'token' ? { authorization: `Bearer ${head.auth.token}`, [RAY_AUTH_HEADER]: `Bearer ${head.auth.token}` } : {};
}

function httpDelete(url: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'DELETE', timeout: timeoutMs, headers: { 'user-agent': 'rayshift-e2e', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`DELETE ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Shuts Serve down on a head and waits until no application, controller or proxy is left: what a
 * deleted Pod's stopped containers leave behind, so the head can serve the next Pod clean.
 */
export async function resetServe(head: RayHead, timeoutMs = 120_000): Promise<void> {
  await waitFor(async () => {
    const status = await httpDelete(`${head.dashboardUrl}/api/serve/applications/`, authHeaders(head), 60_000);
    if (status !== 200) return `DELETE answered ${status}`;
    const got = await httpGet(`${head.dashboardUrl}/api/serve/applications/`, 10_000, authHeaders(head));
    const body = JSON.parse(got.body) as { applications?: object; proxies?: object; controller_info?: object };
    const empty = (o: object | undefined) => o === undefined || o === null || Object.keys(o).length === 0;
    return (got.status === 200 && empty(body.applications) && empty(body.proxies) && empty(body.controller_info)) || `still running: ${got.body.slice(0, 200)}`;
  }, `Serve to be reset on head ${head.label}`, { timeoutMs, everyMs: 1000, retryErrors: true });
}

/** The live processes of session `sid` (`pid comm`), from /proc: a zombie has exited and is not one. */
function sessionMembers(sid: number): string[] {
  const members: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while listed
    }
    // pid (comm) state ppid pgrp session …: comm may hold spaces and parentheses, so split after its last ')'.
    const close = stat.lastIndexOf(')');
    const [state, , , session] = stat.slice(close + 2).split(' ');
    if (Number(session) === sid && state !== 'Z') members.push(`${entry} ${stat.slice(stat.indexOf('(') + 1, close)}`);
  }
  return members;
}
