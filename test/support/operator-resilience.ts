/**
 * Shared setup of the operator resilience tests (test/integration/operator-resilience-*.test.ts):
 * the test cluster with the real KubeRay and the TEST-ONLY Gateway status writer and Serve fleet
 * (operator-env.ts), `rayshift operator` as a child process, and the helpers both files read
 * services with. Their faults are the operator's and kube-apiserver's; KubeRay, kwok, the scheduler
 * and the controller manager run through them beside the operator.
 *
 * Needs `npm run controlplane:build`, `npm run cluster:build` and `npm run build` (the child runs build/).
 */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';
import { KubeClient } from '../../lib/runtime/kube/client';
import { ChildOperator, spawnOperatorChild } from './operator-child';
import { OperatorEnv, RAYSHIFT_RAYSERVICE, engineState, rayClusterConfig, startOperatorEnv } from './operator-env';

const ROOT = projectRoot();

/** What a resilience test file uses; `env` is there once its `beforeAll` ran. */
export interface ResilienceSuite {
  readonly env: OperatorEnv;
  /** Stopped in `afterAll` even when a test fails (a running informer keeps jest alive). */
  readonly stoppers: (() => unknown)[];
  /** Starts `rayshift operator` on `kubeconfig`, dashboards through the fleet; SIGKILLed in `afterAll` if still running. */
  spawnOperator(kubeconfig: string, extraArgs?: string[]): ChildOperator;
  /** The engine state of `ns/name` as the API server has it now. */
  state(ns: string, name: string): Promise<Record<string, any>>;
}

/** Registers the file's `beforeAll`/`afterAll` (environment, child operators, watches) and returns its suite. */
export function useResilienceSuite(): ResilienceSuite {
  let env: OperatorEnv | undefined;
  const children = new Set<ChildProcess>();
  const stoppers: (() => unknown)[] = [];
  const current = (): OperatorEnv => {
    if (env === undefined) throw new Error('the resilience environment is not started (used outside a test?)');
    return env;
  };

  beforeAll(async () => {
    if (!fs.existsSync(path.join(ROOT, 'build', 'lib', 'cli', 'main.js'))) throw new Error('build/ is missing: run `npm run build` first (the operator child runs bin/rayshift.js → build/)');
    // Watches must not hold kube-apiserver's graceful shutdown for the harness's 30 s (then SIGKILL):
    // with a watch drain grace period a restart takes seconds.
    env = await startOperatorEnv({ apiserverArgs: ['--shutdown-watch-termination-grace-period=2s'] });
  }, 300_000);

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const stop of stoppers) await stop();
    await env?.stop();
  });

  return {
    get env() {
      return current();
    },
    stoppers,
    spawnOperator: (kubeconfig, extraArgs = []) => spawnOperator(current(), children, kubeconfig, extraArgs),
    state: async (ns, name) => engineState(await current().admin.tryGet(RAYSHIFT_RAYSERVICE, name, ns)),
  };
}

function spawnOperator(env: OperatorEnv, children: Set<ChildProcess>, kubeconfig: string, extraArgs: string[]): ChildOperator {
  const child = spawnOperatorChild(kubeconfig, env.fleet.template, extraArgs);
  children.add(child.proc);
  void child.exited.then(() => children.delete(child.proc));
  return child;
}

/** Changes the worker CPU (a new cluster spec) with a merge patch (no resourceVersion race with status writes). */
export async function changeCpu(admin: KubeClient, ns: string, name: string, cpu: string): Promise<void> {
  await admin.patchMerge(RAYSHIFT_RAYSERVICE, name, ns, { spec: { rayClusterConfig: rayClusterConfig(cpu) } });
}
