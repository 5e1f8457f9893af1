/**
 * `rayshift api-server`: runs the core API server (gRPC, Connect, gRPC-Web and REST on one port).
 * In a cluster it uses the pod's ServiceAccount; `--kubeconfig` runs it elsewhere. TLS is required
 * unless `--insecure-local`, which serves cleartext on loopback only and acts as the kubeconfig's
 * own user without authenticating callers (development only). The built dashboard is served under
 * `/ui/` from `--dashboard-dir` (default: the package's `dist-ui/`, when it was built), or not at all
 * with `--no-dashboard`. One flag per tunable limit of the server (`SERVER_LIMITS`: body size, token re-checks, idle and
 * session timeouts, sessions, streams per session, watches per caller), each within its range.
 * Stops on SIGTERM/SIGINT.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import type { Logger } from 'pino';
import type { RunningApiServer } from '../apiserver/server';
import { SERVER_LIMITS, type ServerLimitName, type ServerLimitValues } from '../apiserver/server-limits';
import { defaultDashboardDir } from '../dashboard/static-files';
import { loadClientNode } from '../runtime/kube/client-node';
import { integerIn, parseListen } from './flag-parsers';

/** Options of `rayshift api-server`; the tunable limits (`ServerLimitValues`) are unset unless their flag is given. */
export interface ApiServerCommandOptions extends ServerLimitValues {
  /** Kubeconfig path; unset: in-cluster ServiceAccount. */
  readonly kubeconfig?: string;
  /** `host:port` or `:port` to listen on. */
  readonly listen?: string;
  /** PEM certificate file. */
  readonly tlsCert?: string;
  /** PEM private key file. */
  readonly tlsKey?: string;
  /** Development mode (loopback, cleartext, no authentication). */
  readonly insecureLocal?: boolean;
  /** Token audience. */
  readonly audience?: string;
  /** pino log level. */
  readonly logLevel?: string;
  /** Folder of the built dashboard to serve under `/ui/`; unset: `<package root>/dist-ui` when built. */
  readonly dashboardDir?: string;
  /** `--no-dashboard`: false serves no dashboard under `/ui/`, even when one is built. */
  readonly dashboard?: boolean;
  /** One `info` line per call (`--no-access-log`: none); unset: on. */
  readonly accessLog?: boolean;
}

const hasIndex = (dir: string) => fs.existsSync(path.join(dir, 'index.html'));

/**
 * The dashboard folder to serve: none with `--no-dashboard` (`enabled` false), else `--dashboard-dir`
 * (which must hold `index.html`), else the package's `dist-ui/` when built.
 */
export function dashboardDirOf(option: string | undefined, enabled = true): string | undefined {
  if (!enabled) {
    if (option !== undefined) throw new Error(`--no-dashboard and --dashboard-dir ${option} contradict each other: give one`);
    return undefined;
  }
  if (option !== undefined) {
    if (!hasIndex(option)) throw new Error(`--dashboard-dir ${option} holds no index.html (run \`npm run build:ui\`)`);
    return path.resolve(option);
  }
  return hasIndex(defaultDashboardDir()) ? defaultDashboardDir() : undefined;
}

/** Runs the server until SIGTERM/SIGINT; resolves with the exit code. */
export async function runApiServer(opts: ApiServerCommandOptions): Promise<number> {
  // Loaded here, not at the top: the CLI's other commands run without pino installed.
  const { default: pino } = await import('pino');
  const log = pino({ level: opts.logLevel ?? 'info', base: { component: 'rayshift-api-server' } });
  const server = await startFromFlags(opts, log);
  if (typeof server === 'number') return server;
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      void server.close().then(() => resolve(0));
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

/** Starts the server the flags describe, logging to `log`; resolves to it, or to exit code 2 (logged) for flags that cannot work. */
export async function startFromFlags(opts: ApiServerCommandOptions, log: Logger): Promise<RunningApiServer | number> {
  if (!opts.insecureLocal && (!opts.tlsCert || !opts.tlsKey)) {
    log.error({}, '--tls-cert and --tls-key are required (or --insecure-local for development on loopback)');
    return 2;
  }
  let dashboardDir: string | undefined;
  try {
    dashboardDir = dashboardDirOf(opts.dashboardDir, opts.dashboard !== false);
  } catch (e) {
    log.error({}, (e as Error).message);
    return 2;
  }
  const { KubeConfig } = loadClientNode();
  const kubeConfig = new KubeConfig();
  if (opts.kubeconfig) kubeConfig.loadFromFile(opts.kubeconfig);
  else kubeConfig.loadFromCluster();
  const listen = parseListen(opts.listen ?? (opts.insecureLocal ? '127.0.0.1:8080' : ':8443'));
  const { startApiServer } = await import('../apiserver/server');
  const server = await startApiServer({
    kubeConfig,
    ...listen,
    tls: opts.insecureLocal ? undefined : { cert: fs.readFileSync(opts.tlsCert!), key: fs.readFileSync(opts.tlsKey!) },
    insecureLocal: opts.insecureLocal,
    audience: opts.audience,
    log,
    dashboardDir,
    ...limitsOf(opts),
    accessLog: opts.accessLog,
  });
  if (opts.insecureLocal) log.warn({ url: server.url }, 'INSECURE: no authentication; every call acts as the kubeconfig user');
  return server;
}

/** The tunable limits set in `opts`. */
function limitsOf(opts: ServerLimitValues): ServerLimitValues {
  return Object.fromEntries((Object.keys(SERVER_LIMITS) as ServerLimitName[]).filter((k) => opts[k] !== undefined).map((k) => [k, opts[k]]));
}

/** Adds `api-server` to `program`; `exit` receives the exit code when the server stops. */
export function registerApiServerCommand(program: Command, exit: (code: number) => void): void {
  const command = program
    .command('api-server')
    .description('Run the rayshift core API server (gRPC, Connect and REST on one port; callers authenticated by TokenReview and impersonated)')
    .option('--kubeconfig <path>', "the server's own identity (default: in-cluster ServiceAccount); it needs system:auth-delegator and impersonation rights")
    .option('--listen <host:port>', 'address to listen on (default :8443, or 127.0.0.1:8080 with --insecure-local)', (v) => (parseListen(v), v))
    .option('--tls-cert <file>', 'PEM serving certificate')
    .option('--tls-key <file>', 'PEM private key')
    .option('--insecure-local', 'development only: cleartext on loopback, no authentication, every call as the kubeconfig user')
    .option('--audience <aud>', 'audience callers\' tokens must be issued for', 'rayshift')
    .option('--log-level <level>', 'pino log level', 'info')
    .option('--dashboard-dir <dir>', 'built dashboard to serve under /ui/ (default: the package\'s dist-ui/ when built)')
    .option('--no-dashboard', 'serve no dashboard under /ui/ (the API alone)');
  for (const limit of Object.values(SERVER_LIMITS)) {
    command.option(`${limit.flag} <n>`, `${limit.help} (${limit.min}–${limit.max}; default ${limit.default})`, integerIn(limit.flag, limit));
  }
  command.option('--no-access-log', 'do not log a line per call (caller, RPC or route, object, code, duration; never a token)');
  command.action(async (opts: ApiServerCommandOptions) => exit(await runApiServer(opts)));
}
