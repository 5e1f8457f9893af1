/**
 * `npm run synth` needs no network and no ../shared/crds: the compiled examples app
 * (`node build/examples/main.js`, cdk8s.yaml's `app:`) and the operator chart's
 * `node build/operator/chart/main.js` run in a network namespace without network (`unshare --net`),
 * with the shared-CRD folder and the download cache pointed at empty folders, and must write every
 * chart. Without permission for `unshare --net` the tests are skipped, saying so on stderr.
 *
 * It runs what tsc wrote to build/. `npm test` builds first, so build/ is fresh there; when a source
 * is newer than its output (a bare `npx jest` after an edit), this test runs tsc itself once.
 */
import { Testing } from 'cdk8s';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generatedRayshiftRayServiceCrd } from '../../lib/crds/generated-crd';
import { GENERATED_RAYSHIFT_CRD_PATH } from '../../lib/crds/regenerate';
import { projectRoot } from '../../lib/crds/resolve';
import { buildExampleApp } from '../../examples/main';

const root = projectRoot();
const noNetwork = spawnSync('unshare', ['--net', 'true'], { encoding: 'utf8' });
const unshareError = noNetwork.error?.message ?? (noNetwork.status === 0 ? '' : noNetwork.stderr.trim());
if (unshareError) {
  process.stderr.write(`SKIPPED offline synthesis: \`unshare --net\` is not permitted here (${unshareError}); run as root or with CAP_SYS_ADMIN\n`);
}
const offline = unshareError ? test.skip : test;

/** Sources (the .ts under tsconfig.json's `include` folders, and the generated CRD main.js requires) whose build output is missing or older. */
function staleOutputs(): string[] {
  const include: string[] = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8')).include;
  const sources = [GENERATED_RAYSHIFT_CRD_PATH];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(rel);
    }
  };
  for (const dir of new Set(include.map((glob) => glob.split('/')[0]))) walk(dir);
  return sources.filter((rel) => {
    const out = path.join(root, 'build', rel.replace(/\.ts$/, '.js'));
    return !fs.existsSync(out) || fs.statSync(out).mtimeMs < fs.statSync(path.join(root, rel)).mtimeMs;
  });
}

const tmp = (what: string) => fs.mkdtempSync(path.join(os.tmpdir(), `rayshift-offline-${what}-`));
let shared: string;
let cache: string;
const outdirs: string[] = [];

/** Runs a compiled entry point in a new network namespace, with empty CRD folders, its stderr exactly `stderr` (or matching it); returns its outdir. */
function runOffline(script: string, args: (outdir: string) => string[] = () => [], stderr: string | RegExp = ''): string {
  const outdir = tmp('out');
  outdirs.push(outdir);
  const env = { ...process.env, RAYSHIFT_SHARED_CRDS: shared, RAYSHIFT_CRD_CACHE: cache, CDK8S_OUTDIR: outdir };
  const run = spawnSync('unshare', ['--net', process.execPath, script, ...args(outdir)], { cwd: root, env, encoding: 'utf8', timeout: 120_000 });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: typeof stderr === 'string' ? stderr : expect.stringMatching(stderr) });
  // Nothing was downloaded into the cache.
  expect(fs.readdirSync(cache)).toEqual([]);
  return outdir;
}

const documents = (file: string): any[] => parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS());

describe('synthesis with no network and no CRD files', () => {
  beforeAll(() => {
    if (unshareError) return;
    const stale = staleOutputs();
    if (stale.length > 0) {
      process.stderr.write(`build/ is stale (${stale.length} sources newer than their output, first ${stale[0]}): running tsc -p tsconfig.json\n`);
      execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
    }
    [shared, cache] = [tmp('shared'), tmp('cache')];
  }, 600_000);

  afterAll(() => {
    for (const dir of [shared, cache, ...outdirs]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  offline('the namespace really has no network: looking up the host CRDs were downloaded from fails', () => {
    const lookup = spawnSync('unshare', ['--net', process.execPath, '-e', "require('dns').lookup('raw.githubusercontent.com', (e) => process.exit(e ? 0 : 1))"]);
    expect(lookup.status).toBe(0);
  });

  offline('node build/examples/main.js (npm run synth) writes every example chart', () => {
    // Its one warning is shrinkFirst's trade of availability for accelerators (examples/shrink-first.ts), always stated.
    const outdir = runOffline('build/examples/main.js', () => [], /^warning: RayService\/llm: spec\.rayshift\.capacityPolicy: "shrinkFirst" trades availability for accelerators: [^\n]+\n$/);
    // The expected files are the charts examples/main.ts builds, and each holds what the source synthesizes.
    const app = buildExampleApp(Testing.app());
    const expected = app.charts.map((c) => `${c.node.id}.k8s.yaml`);
    expect(expected).toEqual(expect.arrayContaining(['llm-service.k8s.yaml', 'gitops-operator.k8s.yaml', 'gitops-service.k8s.yaml']));
    expect(fs.readdirSync(outdir).sort()).toEqual([...expected].sort());
    for (const chart of app.charts) expect(documents(path.join(outdir, `${chart.node.id}.k8s.yaml`))).toEqual(chart.toJson());
    const crds = documents(path.join(outdir, 'gitops-operator.k8s.yaml')).filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds.map((o) => o.metadata.name)).toEqual(['rayservices.rayshift.dev']);
  });

  offline('node build/operator/chart/main.js writes the install chart with the generated CRD', () => {
    const outdir = runOffline('build/operator/chart/main.js', (dir) => [dir]);
    const crds = documents(path.join(outdir, 'rayshift-operator.k8s.yaml')).filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds).toEqual([generatedRayshiftRayServiceCrd()]);
  });
});
