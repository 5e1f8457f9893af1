/**
 * The Helm CLI of scripts/build-helm.sh (built from Go modules, cached) run on the generated chart
 * (charts/rayshift), with its own cache, config and data folders so that nothing of the machine's
 * Helm setup is read or written.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';

/** The chart folder. */
export const CHART_DIR = path.join(projectRoot(), 'charts', 'rayshift');

/** A helm with its own folders. */
export interface Helm {
  /** `helm ARGS`; its stdout. Throws with stderr when helm exits non-zero. */
  run(args: readonly string[]): string;
  /** `helm ARGS` expected to fail; its stderr. Throws when helm succeeds. */
  fail(args: readonly string[]): string;
  /** Writes `values` as a YAML file in helm's folder and returns its path. */
  valuesFile(name: string, values: unknown): string;
  /** Removes its folders. */
  cleanup(): void;
}

/** Builds helm (a warm cache returns at once) and gives it a fresh home. */
export function startHelm(): Helm {
  const binDir = execFileSync('bash', [path.join(projectRoot(), 'scripts', 'build-helm.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-helm-home-'));
  const env = { ...process.env, HELM_CACHE_HOME: path.join(home, 'cache'), HELM_CONFIG_HOME: path.join(home, 'config'), HELM_DATA_HOME: path.join(home, 'data'), KUBECONFIG: path.join(home, 'no-kubeconfig') };
  const exec = (args: readonly string[]) => execFileSync(path.join(binDir, 'helm'), args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  return {
    run(args) {
      try {
        return exec(args);
      } catch (e) {
        const err = e as { stderr?: string; status?: number };
        throw new Error(`helm ${args.join(' ')} exited ${err.status}: ${err.stderr}`);
      }
    },
    fail(args) {
      try {
        exec(args);
      } catch (e) {
        return String((e as { stderr?: string }).stderr);
      }
      throw new Error(`helm ${args.join(' ')} succeeded; it was expected to fail`);
    },
    valuesFile(name, values) {
      const file = path.join(home, `${name}.values.json`);
      fs.writeFileSync(file, JSON.stringify(values));
      return file;
    },
    cleanup() {
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}
