/**
 * Shared by the capacity suites on the test cluster (one kwok Node with 8 nvidia.com/gpu): a
 * RayCluster config whose workers take one GPU each, and the built CLI run against the cluster.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { rayClusterConfig } from './operator-env';

const root = path.resolve(__dirname, '..', '..');

/** `rayClusterConfig(cpu)` with workers of one GPU each on kwok Nodes, up to 4. */
export function gpuConfig(cpu: string): Record<string, unknown> {
  const c = rayClusterConfig(cpu) as any;
  const worker = c.workerGroupSpecs[0];
  worker.template.spec.nodeSelector = { type: 'kwok' };
  worker.template.spec.containers[0].resources = { requests: { cpu }, limits: { 'nvidia.com/gpu': '1' } };
  return c;
}

/** Runs the built CLI (`npm run build` first) with `kubeconfig`; asynchronous, as the operator runs in the test's process. */
export function rayshiftCli(kubeconfig: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, 'bin', 'rayshift.js'), ...args, '--kubeconfig', kubeconfig], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } }, (error, out, err) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
    });
  });
}
