/**
 * The REAL sglang-router 0.3.2 binary (scripts/install-sglang-router.sh) in PD mode, over given
 * prefill and decode URLs or as a rendered router Deployment runs it (its own Kubernetes discovery),
 * the workers it lists, and one generate request through it. Test support, not the package's API.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Proc, Supervisor, freePorts, httpGet, pollUntil } from './processes';
import type { SimulatedWorker } from './simulated-pd-worker';

/** The router's Python, from `.venv-sglang-router` (or `RAYSHIFT_SGLANG_ROUTER_VENV`). */
export const SGLANG_ROUTER_PYTHON = path.join(process.env.RAYSHIFT_SGLANG_ROUTER_VENV ?? path.join(__dirname, '..', '..', '.venv-sglang-router'), 'bin', 'python');

/** Throws when the router is not installed. */
export function requireSglangRouter(): void {
  if (!fs.existsSync(SGLANG_ROUTER_PYTHON)) throw new Error(`${SGLANG_ROUTER_PYTHON} is missing: run \`bash scripts/install-sglang-router.sh\` first`);
}

/**
 * Starts the real router in PD mode over `p` and `d` (logging to `<dir>/<name>.log`) and waits until
 * it has registered them; `started` gets the process, for the caller to stop. Policy random: round
 * robin's pairing depends on the order the router registers the workers in, which varies between
 * runs and can line releases up by chance.
 */
export async function startSglangRouter(supervisor: Supervisor, dir: string, name: string, p: readonly (SimulatedWorker & { bootstrapPort: number })[], d: readonly SimulatedWorker[], started: Proc[]): Promise<string> {
  // Each router also serves Prometheus metrics (29000 by default): two on one host need two ports.
  const [port, metrics] = await freePorts(2);
  const args = ['-m', 'sglang_router.launch_router', '--pd-disaggregation', '--policy', 'random', '--host', '127.0.0.1', '--port', String(port), '--prometheus-host', '127.0.0.1', '--prometheus-port', String(metrics)];
  for (const w of p) args.push('--prefill', w.url, String(w.bootstrapPort));
  for (const w of d) args.push('--decode', w.url);
  const log = path.join(dir, `${name}.log`);
  const proc = supervisor.launch(name, SGLANG_ROUTER_PYTHON, args, log);
  started.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await pollUntil(`${name} to register its ${p.length + d.length} workers`, async () => {
    const r = await httpGet(`${url}/workers`);
    return r.status === 200 && (JSON.parse(r.text).workers ?? []).length === p.length + d.length ? undefined : `HTTP ${r.status} ${r.text.slice(0, 200)}`;
  }, { timeoutMs: 60_000, procs: [proc], logs: [{ file: log, lines: 20 }] });
  return url;
}

/** One worker as the router lists it (`GET /workers`, sglang-router 0.3.2). */
export interface RouterWorker {
  readonly url: string;
  readonly worker_type: string;
  readonly is_healthy: boolean;
  readonly bootstrap_port?: number;
}

/** The workers the router at `url` has now. */
export async function routerWorkers(url: string): Promise<RouterWorker[]> {
  const r = await httpGet(`${url}/workers`);
  if (r.status !== 200) throw new Error(`GET ${url}/workers: HTTP ${r.status} ${r.text.slice(0, 200)}`);
  return JSON.parse(r.text).workers ?? [];
}

/**
 * Starts the real router as the rendered router Deployment `deployment` runs it: its container's
 * command (`python3` is the router's venv) and args, each `$(VAR)` taken from the container's env (a
 * `fieldRef` to `metadata.namespace` is `namespace`, as the kubelet resolves it), with `--host` and
 * `--port` bound on 127.0.0.1 at a free port and its Prometheus port moved to a free one (two routers
 * share this host). It runs outside the cluster with KUBECONFIG `kubeconfig`, so its own Kubernetes
 * discovery watches the test cluster. Resolves with its URL once it answers; `started` gets the process.
 */
export async function startRenderedSglangRouter(supervisor: Supervisor, dir: string, name: string, deployment: unknown, namespace: string, kubeconfig: string, started: Proc[]): Promise<string> {
  const container = (deployment as any)?.spec?.template?.spec?.containers?.[0] ?? {};
  const command: string[] = container.command ?? [];
  if (command[0] !== 'python3') throw new Error(`router Deployment ${(deployment as any)?.metadata?.name}: command ${JSON.stringify(command)} does not start with python3`);
  const env = new Map<string, string>();
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env.set(e.name, e.value);
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env.set(e.name, namespace);
    else throw new Error(`router Deployment: env ${e.name} has a source this test cannot give: ${JSON.stringify(e.valueFrom)}`);
  }
  const [port, metrics] = await freePorts(2);
  const args: string[] = (container.args ?? []).map((a: string) => a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env.get(v) ?? m));
  const set = (flag: string, value: string) => {
    const i = args.indexOf(flag);
    if (i < 0) throw new Error(`router Deployment: no ${flag} in its args ${JSON.stringify(args)}`);
    args[i + 1] = value;
  };
  set('--host', '127.0.0.1');
  set('--port', String(port));
  args.push('--prometheus-host', '127.0.0.1', '--prometheus-port', String(metrics));
  const log = path.join(dir, `${name}.log`);
  const proc = supervisor.launch(name, SGLANG_ROUTER_PYTHON, [...command.slice(1), ...args], log, { env: { ...process.env, KUBECONFIG: kubeconfig } });
  started.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await pollUntil(`${name} to answer`, async () => {
    const r = await httpGet(`${url}/workers`);
    return r.status === 200 ? undefined : `HTTP ${r.status}`;
  }, { timeoutMs: 60_000, procs: [proc], logs: [{ file: log, lines: 20 }] });
  return url;
}

/** POSTs one generate request to the router at `url`; resolves with the HTTP status. */
export function generate(url: string, i: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ text: `request ${i}`, sampling_params: { max_new_tokens: 1 } });
    const req = http.request(`${url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, timeout: 30_000, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`request ${i}: no answer within 30 s`)));
    req.on('error', reject);
    req.end(body);
  });
}
