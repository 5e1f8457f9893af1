/**
 * An API server running as the install chart's ServiceAccount with exactly the chart's RBAC
 * (`operator/chart/api-server.ts`, synthesized and applied to the test control plane), rather than as
 * the admin: what the chart grants is then what the tests exercise. `startChartApiServer` runs it in
 * this process; `spawnChartApiServer` runs `rayshift api-server` as its own process with the chart's
 * container arguments and environment (its `NODE_OPTIONS` heap limit too), so that its memory is its own.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Testing } from 'cdk8s';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { API_SERVER_NAME, ApiServer, type ApiServerProps } from '../../../operator/chart/api-server';
import { RunningApiServer, startApiServer } from '../../../lib/apiserver/server';
import { projectRoot } from '../../../lib/crds/resolve';
import { loadClientNode } from '../../../lib/runtime/kube/client-node';
import type { KubeObject } from '../../../lib/runtime/kube/types';
import type { ApiEnv } from './api-env';

/** The namespace the chart's ServiceAccount lives in. */
export const CHART_NAMESPACE = 'rayshift-system';
/** The Kubernetes user name of the chart's API server. */
export const CHART_IDENTITY = `system:serviceaccount:${CHART_NAMESPACE}:${API_SERVER_NAME}`;

/** The chart's API server objects, synthesized with `props`. */
export function chartApiServerObjects(props: Partial<ApiServerProps> = {}): KubeObject[] {
  const chart = Testing.chart();
  new ApiServer(chart, 'api', { namespace: CHART_NAMESPACE, tlsSecretName: 'tls', ...props });
  return Testing.synth(chart) as KubeObject[];
}

/** Applies the chart's ClusterRoles and bindings (idempotent); a kubeconfig with a token of its ServiceAccount. */
async function chartIdentity(env: ApiEnv): Promise<{ kc: KubeConfig; token: string }> {
  await env.admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: CHART_NAMESPACE } }, { force: true });
  for (const o of chartApiServerObjects().filter((o) => ['ClusterRole', 'ClusterRoleBinding'].includes(o.kind))) await env.admin.apply(o, { force: true });
  const token = await env.cp.serviceAccountToken(CHART_NAMESPACE, API_SERVER_NAME);
  const kc = new (loadClientNode().KubeConfig)();
  kc.loadFromOptions({
    clusters: [{ name: 'cp', server: env.cp.url, caFile: env.cp.caFile }],
    users: [{ name: 'sa', token }],
    contexts: [{ name: 'sa', cluster: 'cp', user: 'sa' }],
    currentContext: 'sa',
  });
  return { kc, token };
}

function servingPki(env: ApiEnv): { cert: string; key: string } {
  const pki = path.join(env.cp.dir, 'pki');
  return { cert: path.join(pki, 'apiserver.crt'), key: path.join(pki, 'apiserver.key') };
}

/** Applies the chart's ClusterRoles and bindings (idempotent) and starts an API server with a token of its ServiceAccount, logging to `log` (default silent). */
export async function startChartApiServer(env: ApiEnv, log?: Logger): Promise<RunningApiServer> {
  const { kc } = await chartIdentity(env);
  const pki = servingPki(env);
  return startApiServer({ kubeConfig: kc, host: '127.0.0.1', port: 0, tls: { cert: fs.readFileSync(pki.cert), key: fs.readFileSync(pki.key) }, log });
}

/** A `rayshift api-server` child process. */
export interface ChildApiServer {
  readonly proc: ChildProcess;
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** Its log lines (stdout and stderr). */
  readonly lines: string[];
  /** Its RSS now, and its peak RSS since it started (the kernel's high-water mark, `VmHWM`), MiB. */
  memory(): { rssMiB: number; peakMiB: number };
  stop(): Promise<void>;
}

/** `VmRSS` and `VmHWM` of `pid` from /proc, MiB. */
export function procMemory(pid: number): { rssMiB: number; peakMiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/**
 * Starts `rayshift api-server` (bin/rayshift.js, so it needs `npm run build`) as the chart's
 * container runs it: the chart's arguments but the listen address (a free loopback port), the
 * certificate paths and `--kubeconfig` (the chart's ServiceAccount's token, with the chart's RBAC),
 * and the container's environment (`NODE_OPTIONS`). `props` go to the chart (e.g. `resources`);
 * `envOverrides` replace variables of the container's environment (a bench compares heap settings).
 */
export async function spawnChartApiServer(env: ApiEnv, props: Partial<ApiServerProps> = {}, envOverrides: Record<string, string> = {}): Promise<ChildApiServer> {
  const { kc } = await chartIdentity(env);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-api-child-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kubeconfig, kc.exportConfig());
  const deployment = chartApiServerObjects(props).find((o) => o.kind === 'Deployment')!;
  const container = (deployment.spec as any).template.spec.containers[0] as { args: string[]; env?: { name: string; value: string }[] };
  const pki = servingPki(env);
  const args = container.args.map((a, i, all) => (all[i - 1] === '--listen' ? '127.0.0.1:0' : all[i - 1] === '--tls-cert' ? pki.cert : all[i - 1] === '--tls-key' ? pki.key : a));
  const containerEnv = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
  const proc = spawn(process.execPath, [path.join(projectRoot(), 'bin', 'rayshift.js'), ...args, '--kubeconfig', kubeconfig], {
    cwd: projectRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', ...containerEnv, ...envOverrides },
  });
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const onData = (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        if (line.includes('rayshift API server listening')) resolve(`https://127.0.0.1:${JSON.parse(line).port}`);
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    void exited.then(() => reject(new Error(`rayshift api-server exited with ${proc.exitCode}:\n${lines.join('\n')}`)));
  });
  return {
    proc,
    url,
    lines,
    memory: () => procMemory(proc.pid!),
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
