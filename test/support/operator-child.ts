/**
 * `rayshift operator` as a child process (bin/rayshift.js, so it needs `npm run build`), its JSON log
 * lines kept, for the tests that run the operator the way users do: as its own process, with its own
 * kubeconfig and flags.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';

const ROOT = projectRoot();

/** A running `rayshift operator` child. */
export interface ChildOperator {
  readonly proc: ChildProcess;
  /** Its stdout and stderr, line by line. */
  readonly lines: string[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** True once it logged that its watches synced. */
  synced(): boolean;
}

/**
 * Starts `rayshift operator --kubeconfig <kubeconfig>` with dashboards at `dashboardTemplate`, metrics
 * on a free port, and `extraArgs`; `env` is added to this process's environment (e.g. the `POD_NAME`
 * the chart sets, the replica's identity).
 */
export function spawnOperatorChild(kubeconfig: string, dashboardTemplate: string, extraArgs: readonly string[] = [], env: Record<string, string> = {}): ChildOperator {
  const proc = spawn(process.execPath, [path.join(ROOT, 'bin', 'rayshift.js'), 'operator', '--kubeconfig', kubeconfig, '--dashboard-address-template', dashboardTemplate, '--http-port', '0', ...extraArgs], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let synced = false; // set as lines arrive: the crash test asks on every poll of a long log
  let buf = '';
  const onData = (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts);
    synced ||= parts.some((l) => l.includes('watches synced'));
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return { proc, lines, exited, synced: () => synced };
}
