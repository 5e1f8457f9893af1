/**
 * Real Ray heads for the end-to-end tests: `ray start --head --block` from the pinned virtualenv
 * (scripts/install-ray.sh), with usage stats off and an explicit `RAY_AUTH_MODE`, each either in its
 * own network namespace (default Ray ports, an ordinary IPv4 address) or, where namespaces are not
 * available, in the root namespace on the reference's port plan (every fixed port +10 per head).
 * Each head is stopped through its own process group (SIGTERM, then SIGKILL), never `ray stop`,
 * which would kill every Ray process on the machine.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { projectRoot } from '../../../lib/crds/resolve';
import { waitAtMost } from '../../support/wait-at-most';
import { NetnsHost, createNetnsHost } from './netns';

/** Dashboard auth of a head: none, or `RAY_AUTH_MODE=token` with this token. */
export type RayAuth = { readonly mode: 'disabled' } | { readonly mode: 'token'; readonly token: string };

/** Where a head runs: its own network namespace, or the root namespace on a port plan. */
export type RayNetwork = 'netns' | 'root';

/** Options of `startRayHead`. */
export interface RayHeadOptions {
  /** Short name, 1-6 lowercase letters or digits (`a`, `b`); names the namespace and temp dir. */
  readonly label: string;
  /** 1-based index: the namespace subnet `10.213.<index>.0/24`, or the port-plan offset. */
  readonly index: number;
  /** @default netns */
  readonly network?: RayNetwork;
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
  readonly network: RayNetwork;
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
  /** The address an EndpointSlice carries for this head: IPv4 in a namespace, an FQDN in the root plan. */
  readonly endpoint: { readonly addressType: 'IPv4' | 'FQDN'; readonly address: string };
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

/** FQDN of a root-namespace head (`ray-<label>.rayshift.test`), mapped to 127.0.0.1 in /etc/hosts. */
export function rootPlanHostname(label: string): string {
  return `ray-${label}.rayshift.test`;
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
  const network = options.network ?? 'netns';
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
  let netns: NetnsHost | undefined;
  let host: string;
  let dashboardPort: number;
  let servePort: number;
  let grpcPort: number;
  let metricsPort: number;
  let args: string[];
  let command: string;
  if (network === 'netns') {
    netns = createNetnsHost(label, index);
    host = netns.address;
    dashboardPort = 8265;
    servePort = 8000;
    grpcPort = 9000;
    metricsPort = 8080;
    command = 'ip';
    args = ['netns', 'exec', netns.name, path.join(rayVenvBin(), 'ray'), ...common, `--node-ip-address=${host}`, '--dashboard-host=0.0.0.0', `--metrics-export-port=${metricsPort}`];
  } else {
    // The reference's root-namespace plan: head `index` shifts every fixed port by 10 × (index − 1).
    const o = 10 * (index - 1);
    host = '127.0.0.1';
    dashboardPort = 8265 + o;
    servePort = 8001 + index - 1;
    grpcPort = 9001 + index - 1;
    metricsPort = 52368 + o;
    command = path.join(rayVenvBin(), 'ray');
    args = [
      ...common, '--node-ip-address=127.0.0.1', '--dashboard-host=127.0.0.1', `--port=${6380 + o}`, `--dashboard-port=${dashboardPort}`,
      `--dashboard-agent-listen-port=${52365 + o}`, `--dashboard-agent-grpc-port=${52366 + o}`, `--runtime-env-agent-port=${52367 + o}`,
      `--metrics-export-port=${metricsPort}`, `--ray-client-server-port=${10001 + o}`,
      `--min-worker-port=${20000 + 100 * (index - 1)}`, `--max-worker-port=${20099 + 100 * (index - 1)}`,
    ];
  }
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
    if (exited === undefined) {
      // Ray drains for up to 30 s on SIGTERM before it stops its processes.
      group('SIGTERM');
      await waitAtMost(exit, 35_000);
    }
    group('SIGKILL');
    if (netns) netns.remove();
    else killProcessesUsing(tempDir);
  };

  const dashboardUrl = `http://${host}:${dashboardPort}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 240_000);
  for (;;) {
    if (exited !== undefined) {
      await stop();
      throw new HeadExitedEarly(`ray start for head ${label} exited (${exited}) before it was ready; ${logFile}:\n${tail(logFile)}`);
    }
    const started = fs.readFileSync(logFile, 'utf8').includes('Ray runtime started.');
    const health = started ? await httpGet(`${dashboardUrl}/api/gcs_healthz`, 3000).catch(() => undefined) : undefined;
    if (health?.status === 200 && exited === undefined) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Ray head ${label} not healthy at ${dashboardUrl} within ${options.readyTimeoutMs ?? 240_000} ms; ${logFile}:\n${tail(logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return {
    label,
    network,
    dashboardUrl,
    host,
    servePort,
    grpcPort,
    metricsTarget: `${host}:${metricsPort}`,
    serveNetworkOptions: { http_options: { host: network === 'netns' ? '0.0.0.0' : '127.0.0.1', port: servePort }, grpc_options: { port: grpcPort } },
    endpoint: network === 'netns' ? { addressType: 'IPv4', address: host } : { addressType: 'FQDN', address: rootPlanHostname(label) },
    auth,
    logFile,
    tempDir,
    stop,
  };
}

/**
 * Root-namespace plan only: SIGKILLs processes of this head that left its process group (their
 * command line names the head's own temp dir, which no other process uses).
 */
function killProcessesUsing(tempDir: string): void {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.includes(`${tempDir}/`) || cmdline.split('\0').includes(`--temp-dir=${tempDir}`)) {
      try {
        process.kill(Number(entry), 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}
