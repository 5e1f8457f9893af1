/**
 * `rayshift api-server`: runs the core API server (gRPC, Connect, gRPC-Web and REST on one port).
 * In a cluster it uses the pod's ServiceAccount; `--kubeconfig` runs it elsewhere. TLS is required
 * unless `--insecure-local`, which serves cleartext on loopback only and acts as the kubeconfig's
 * own user without authenticating callers (development only). The built dashboard is served under
 * `/ui/` from `--dashboard-dir` (default: the package's `dist-ui/`, when it was built). Stops on
 * SIGTERM/SIGINT.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { defaultDashboardDir } from '../dashboard/static-files';
import { loadClientNode } from '../runtime/kube/client-node';

/** Options of `rayshift api-server`. */
export interface ApiServerCommandOptions {
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
}

const hasIndex = (dir: string) => fs.existsSync(path.join(dir, 'index.html'));

/** The dashboard folder to serve: `--dashboard-dir` (which must hold `index.html`), else the package's `dist-ui/` when built. */
export function dashboardDirOf(option: string | undefined): string | undefined {
  if (option !== undefined) {
    if (!hasIndex(option)) throw new Error(`--dashboard-dir ${option} holds no index.html (run \`npm run build:ui\`)`);
    return path.resolve(option);
  }
  return hasIndex(defaultDashboardDir()) ? defaultDashboardDir() : undefined;
}

/** Splits `host:port`, `[v6]:port` or `:port` (host then undefined). */
export function parseListen(value: string): { host?: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port > 65535) throw new InvalidArgumentError(`must be host:port or :port; got ${JSON.stringify(value)}`);
  const host = m[1] ?? m[2];
  return { ...(host ? { host } : {}), port };
}

/** Runs the server until SIGTERM/SIGINT; resolves with the exit code. */
export async function runApiServer(opts: ApiServerCommandOptions): Promise<number> {
  // Loaded here, not at the top: the CLI's other commands run without pino installed.
  const { default: pino } = await import('pino');
  const log = pino({ level: opts.logLevel ?? 'info', base: { component: 'rayshift-api-server' } });
  if (!opts.insecureLocal && (!opts.tlsCert || !opts.tlsKey)) {
    log.error({}, '--tls-cert and --tls-key are required (or --insecure-local for development on loopback)');
    return 2;
  }
  let dashboardDir: string | undefined;
  try {
    dashboardDir = dashboardDirOf(opts.dashboardDir);
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
  });
  if (opts.insecureLocal) log.warn({ url: server.url }, 'INSECURE: no authentication; every call acts as the kubeconfig user');
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      void server.close().then(() => resolve(0));
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}

/** Adds `api-server` to `program`; `exit` receives the exit code when the server stops. */
export function registerApiServerCommand(program: Command, exit: (code: number) => void): void {
  program
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
    .action(async (opts: ApiServerCommandOptions) => exit(await runApiServer(opts)));
}
