/**
 * The operator image of scripts/build-operator-image.sh (built once, cached), run as podman
 * containers the way a user runs it: `--init`, the host's network (so the container reaches the
 * test control plane and the simulated Serve dashboards on loopback), the kubeconfig mounted
 * read-only, uid 1000.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';
import type { ControlPlane } from './controlplane';
import { waitFor } from './operator-env';

/** The built image and the podman environment it runs with. */
export interface OperatorImage {
  /** `localhost/rayshift/rayshift:<version>`. */
  readonly ref: string;
  /** The environment for podman (its CONTAINERS_CONF). */
  readonly env: NodeJS.ProcessEnv;
}

/** A running container of the image. */
export interface ImageContainer {
  readonly name: string;
  readonly proc: ChildProcess;
  /** Its stdout and stderr, whole lines. */
  readonly log: string[];
  /** `podman stop` (SIGTERM, then SIGKILL after 10 s). */
  stop(): void;
}

/** Builds the image (a warm cache returns at once) and says how to run it. */
export function buildOperatorImage(): OperatorImage {
  const out = execFileSync('bash', [path.join(projectRoot(), 'scripts', 'build-operator-image.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n');
  const conf = out.find((l) => l.startsWith('CONTAINERS_CONF='));
  if (!conf) throw new Error(`scripts/build-operator-image.sh printed no CONTAINERS_CONF line: ${out.join('\n')}`);
  return { ref: out[out.length - 1], env: { ...process.env, CONTAINERS_CONF: conf.slice('CONTAINERS_CONF='.length) } };
}

/** `podman ARGS` with the image's environment; its stdout. */
export function podman(image: OperatorImage, args: readonly string[]): string {
  return execFileSync('podman', args, { env: image.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A folder with `config` (the control plane's admin kubeconfig, its CA at /kube/ca.crt) and `ca.crt`, readable by uid 1000, to mount at /kube. */
export function kubeconfigForContainers(cp: ControlPlane): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-image-kube-'));
  fs.copyFileSync(cp.caFile, path.join(dir, 'ca.crt'));
  fs.writeFileSync(path.join(dir, 'config'), fs.readFileSync(cp.kubeconfigPath, 'utf8').split(cp.caFile).join('/kube/ca.crt'));
  for (const f of ['', 'ca.crt', 'config']) fs.chownSync(path.join(dir, f), 1000, 1000);
  return dir;
}

/** `podman run --rm --init --network host -v KUBE_DIR:/kube:ro IMAGE ARGS` as `name`. */
export function runImage(image: OperatorImage, kubeDir: string, name: string, args: readonly string[]): ImageContainer {
  return runContainer(image, name, ['-v', `${kubeDir}:/kube:ro`], args);
}

/** `podman run --rm --init --network host PODMAN_ARGS IMAGE ARGS` as `name`. */
export function runContainer(image: OperatorImage, name: string, podmanArgs: readonly string[], args: readonly string[]): ImageContainer {
  const proc = spawn('podman', ['run', '--rm', '--init', '--network', 'host', '--name', name, ...podmanArgs, image.ref, ...args], { env: image.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  // Whole lines only: a chunk may end inside one.
  const keeper = () => {
    let rest = '';
    return (b: Buffer) => {
      const lines = (rest + b.toString('utf8')).split('\n');
      rest = lines.pop()!;
      log.push(...lines.filter((l) => l !== ''));
    };
  };
  proc.stdout!.on('data', keeper());
  proc.stderr!.on('data', keeper());
  return {
    name,
    proc,
    log,
    stop() {
      try {
        podman(image, ['stop', '--time', '10', name]);
      } catch {
        // already gone
      }
    },
  };
}

/** `waitFor`, its error carrying the container's output so far. */
export async function waitForContainer(c: ImageContainer, check: () => Promise<boolean> | boolean, what: string, timeoutMs = 120_000): Promise<void> {
  await waitFor(check, what, timeoutMs, 100).catch((e: Error) => {
    throw new Error(`${e.message}\ncontainer ${c.name}'s output:\n${c.log.join('\n')}`);
  });
}
