/**
 * The child processes of the RBG rollout tests: rayshift's RBG controller (to SIGKILL mid-rollout)
 * and `rayshift status rbg/NAME` of the built CLI (bin/rayshift.js → build/). Test support, not the
 * package's API.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';

/** Runs `rayshift ARGS -n NAMESPACE --kubeconfig KUBECONFIG` without colours; returns its standard output. */
export function rayshiftCli(kubeconfig: string, namespace: string, args: readonly string[]): string {
  return execFileSync(process.execPath, [path.join(projectRoot(), 'bin/rayshift.js'), ...args, '-n', namespace, '--kubeconfig', kubeconfig], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });
}

/** Checks `rayshift status rbg/pd-7-3`'s screen of the 7 prefill / 3 decode group after its rollout completed. */
export function expectCompleteStatusScreen(kubeconfig: string, namespace: string): void {
  const screen = rayshiftCli(kubeconfig, namespace, ['status', 'rbg/pd-7-3']);
  expect(screen).toContain(`RoleBasedGroup ${namespace}/pd-7-3`);
  // Readiness may still trail the last update (the rollout completes on updated replicas).
  expect(screen).toMatch(/prefill\s+updated █+\s+7\/7\s+ready [█░]+\s+\d\s+partition 0\s+Complete/);
  expect(screen).toMatch(/decode\s+updated █+\s+3\/3\s+ready [█░]+\s+\d\s+partition 0\s+Complete/);
}

/** Starts rayshift's RBG controller for RoleBasedGroups `apiVersion` in a child process on `kubeconfig` (silent). */
export function spawnRbgController(kubeconfig: string, apiVersion: string): ChildProcess {
  const root = projectRoot();
  const code = [
    `const { KubeClient } = require(${JSON.stringify(path.join(root, 'lib/runtime/kube/client.ts'))});`,
    `const { RbgRolloutController } = require(${JSON.stringify(path.join(root, 'operator/rbg-controller.ts'))});`,
    'const log = { info() {}, warn() {}, debug() {}, error() {} };',
    `new RbgRolloutController({ client: KubeClient.fromKubeconfig(process.argv[1]), log, apiVersion: ${JSON.stringify(apiVersion)} }).start();`,
  ].join('\n');
  return spawn(process.execPath, ['--require', 'tsx/cjs', '-e', code, kubeconfig], { cwd: root, stdio: 'ignore' });
}
