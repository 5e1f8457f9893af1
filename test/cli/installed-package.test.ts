/**
 * The CLI as npm installs it: `node_modules/rayshift` with `bin/`, the compiled `build/` and its own
 * `package.json`, next to nothing but the packages it always needs (commander, yaml, cdk8s,
 * constructs, cdk8s-plus-28). `validate`, `plan`, `dashboard`, `--help` and `--version` work there;
 * a static import of an optional package on their path fails these tests. The other subcommands
 * name the optional package they miss. Runs the compiled CLI (`npm run build`).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OPTIONAL_PEERS } from '../../lib/cli/peers';
import { requireFreshBuild, root } from './built';

/** The ranges the package's peerDependencies give (what the CLI must name). */
const PEER = (JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies;

const ALWAYS_NEEDED = ['commander', 'yaml', 'cdk8s', 'constructs', 'cdk8s-plus-28'];
const VERSION = '0.0.0-installed-test';

let dir: string;
let pkg: string;
let env: NodeJS.ProcessEnv;

const link = (name: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, 'node_modules', name)), { recursive: true });
  fs.symlinkSync(path.join(root, 'node_modules', name), path.join(dir, 'node_modules', name));
};

/** Runs the installed binary; no NODE_PATH, no kubeconfig, a home folder of its own. */
function rayshift(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(pkg, 'bin', 'rayshift.js'), ...args], { cwd: dir, encoding: 'utf8', env });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Whether `name` resolves from inside the installed package. */
function resolvable(name: string): boolean {
  return spawnSync(process.execPath, ['-e', `require.resolve(${JSON.stringify(name)})`], { cwd: path.join(pkg, 'build', 'lib', 'cli'), env }).status === 0;
}

beforeAll(() => {
  requireFreshBuild();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-installed-'));
  pkg = path.join(dir, 'node_modules', 'rayshift');
  for (const part of ['lib', 'imports', 'operator']) fs.cpSync(path.join(root, 'build', part), path.join(pkg, 'build', part), { recursive: true });
  fs.cpSync(path.join(root, 'bin'), path.join(pkg, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'rayshift', version: VERSION, bin: { rayshift: 'bin/rayshift.js' }, peerDependencies: PEER }));
  for (const name of ALWAYS_NEEDED) link(name);
  fs.mkdirSync(path.join(dir, 'home'));
  env = { PATH: process.env.PATH, HOME: path.join(dir, 'home'), NO_COLOR: '1' };
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the installed package sees the packages it always needs and none of the optional ones', () => {
  for (const name of ALWAYS_NEEDED) expect(resolvable(name)).toBe(true);
  for (const name of Object.keys(OPTIONAL_PEERS)) expect(resolvable(name)).toBe(false);
});

test('--version is the installed package.json\'s; --help works', () => {
  expect(rayshift('--version')).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  const help = rayshift('--help');
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('Usage: rayshift [options] [command]');
});

test('validate and plan run with only the packages the CLI always needs', () => {
  expect(rayshift('validate', path.join(root, 'test/cli/fixtures/good.yaml'))).toEqual({ code: 0, stdout: 'valid: 0 errors, 0 warnings in 3 documents\n', stderr: '' });
  const plan = rayshift('plan', '--json', path.join(root, 'test/cli/fixtures/good.yaml'));
  expect(plan.code).toBe(0);
  expect((JSON.parse(plan.stdout) as { plans: unknown[] }).plans).toHaveLength(2);
  expect(rayshift('validate', path.join(root, 'test/cli/fixtures/bad-rayservice.yaml')).code).toBe(1);
});

test('every other subcommand names the optional package it misses', () => {
  expect(rayshift('status', 'llm')).toEqual({
    code: 1,
    stdout: '',
    stderr: `error: rayshift status needs @kubernetes/client-node, an optional peer dependency: npm install @kubernetes/client-node@${PEER["@kubernetes/client-node"]}\n`,
  });
  expect(rayshift('resume', 'llm', '--api-server', 'https://127.0.0.1:1').stderr).toBe(
    `error: rayshift resume needs @connectrpc/connect, @connectrpc/connect-node, @bufbuild/protobuf, optional peer dependencies: npm install @connectrpc/connect@${PEER["@connectrpc/connect"]} @connectrpc/connect-node@${PEER["@connectrpc/connect-node"]} @bufbuild/protobuf@${PEER["@bufbuild/protobuf"]}\n`,
  );
  for (const verb of ['api-server', 'operator']) {
    const r = rayshift(verb);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: rayshift ${verb} needs @kubernetes/client-node, .*prom-client, optional peer dependencies: npm install .*prom-client@\\^15\\.1\\.3\\n$`));
  }
});

test('the dashboard serves dist-ui/ of the package root, and says it is not built only when it is missing', async () => {
  const missing = rayshift('dashboard', '--api-server', 'http://127.0.0.1:9', '--listen', '127.0.0.1:0');
  expect(missing.code).toBe(1);
  expect(missing.stderr).toBe(`error: the dashboard is not built: ${path.join(pkg, 'dist-ui', 'index.html')} is missing (in a checkout of rayshift, run \`npm run build:ui\`; the npm package ships it)\n`);
  fs.mkdirSync(path.join(pkg, 'dist-ui'));
  fs.writeFileSync(path.join(pkg, 'dist-ui', 'index.html'), '<!doctype html><title>installed dashboard</title>');
  const child = spawn(process.execPath, [path.join(pkg, 'bin', 'rayshift.js'), 'dashboard', '--api-server', 'http://127.0.0.1:9', '--listen', '127.0.0.1:0'], { cwd: dir, env });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /rayshift dashboard at (http:\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    void exited.then(() => reject(new Error(`the dashboard exited: ${stderr}`)));
  });
  const page = await fetch(url);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('installed dashboard');
  child.kill('SIGINT');
  expect(await exited).toBe(0);
});

test('with @kubernetes/client-node installed, status runs without @connectrpc, @bufbuild or pino and says where it looked for a kubeconfig', () => {
  link('@kubernetes/client-node');
  const r = rayshift('status', 'llm', '-n', 'serving');
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error: no Kubernetes configuration found; looked at:\n {2}\$KUBECONFIG: unset\n {2}~\/\.kube\/config: .*home\/\.kube\/config \(missing\)\n {2}in-cluster: not in a pod \(KUBERNETES_SERVICE_HOST is unset/);
});
