/**
 * rayshift from Python: the wheel built from lib/spec and lib/cdk8s by jsii (scripts/build-python.sh),
 * installed with cdk8s, cdk8s-plus-28 and constructs from PyPI into a fresh virtualenv. A Python cdk8s
 * app (test/python/apps/app.py) synthesizes byte for byte what its TypeScript twin (apps.ts) does,
 * a Python app with bad options fails synthesis with the same problems, every one naming its field,
 * and the example of docs/python.md runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectRoot } from '../../lib/crds/resolve';
import { buildApp, buildBadApp } from './apps';

const root = projectRoot();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-python-'));
const pythonApp = path.join(root, 'test', 'python', 'apps', 'app.py');
/** Node 24 first on PATH: the jsii runtime of the Python package starts `node`. */
const env = { ...process.env, PATH: `${path.join(root, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` };
let python: string;

beforeAll(() => {
  const out = execFileSync('bash', [path.join(root, 'scripts', 'build-python.sh'), '--venv', path.join(work, 'venv')], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  python = out.trim().split('\n').pop()!;
}, 600_000);

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** The problem lines of a synthesis error: `[path] Kind/name: field: message`. */
function problemLines(text: string): string[] {
  return text.split('\n').map((l) => l.trim()).filter((l) => /^\[[^\]]+\] \w+\/[\w-]+: /.test(l));
}

test('a Python cdk8s app synthesizes the same bytes as its TypeScript twin: RayService, Gateway API, RoleBasedGroups', () => {
  const tsOut = path.join(work, 'ts');
  buildApp(tsOut).synth();
  const pyOut = path.join(work, 'py');
  const run = spawnSync(python, [pythonApp, pyOut], { env, encoding: 'utf8' });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  const ts = fs.readFileSync(path.join(tsOut, 'app.k8s.yaml'), 'utf8');
  const py = fs.readFileSync(path.join(pyOut, 'app.k8s.yaml'), 'utf8');
  // What the comparison covers: every kind the constructs make, and the strings built from props.
  for (const kind of ['RayService', 'GatewayClass', 'Gateway', 'HTTPRoute', 'GRPCRoute', 'RoleBasedGroup', 'CoordinatedPolicy']) expect(ts).toContain(`kind: ${kind}\n`);
  expect(ts).toContain('rayshift.dev/coordination:');
  expect(ts).toContain('route_prefix: null');
  expect(py).toBe(ts);
});

test('a Python app with bad options fails synthesis with the same problems as TypeScript, each naming its field', () => {
  let tsMessage = '';
  try {
    buildBadApp(path.join(work, 'ts-bad')).synth();
  } catch (e) {
    tsMessage = (e as Error).message;
  }
  const expected = problemLines(tsMessage);
  expect(expected).toEqual(expect.arrayContaining([expect.stringContaining('maxSurgePercent: must be an integer from 1 to 100; got 0'), expect.stringContaining('serveConfig.applications[0].routePrefix: must be unset')]));
  // 5 of the RayService, 2 of the group's rule (the CoordinatedPolicy rendered from that rule no longer repeats them).
  expect(expected.length).toBeGreaterThanOrEqual(7);

  const run = spawnSync(python, [pythonApp, path.join(work, 'py-bad'), 'bad'], { env, encoding: 'utf8' });
  expect(run.status).not.toBe(0);
  // The traceback carries the JavaScript error twice (its stack, then the RuntimeError raised from it).
  const raised = run.stderr.slice(run.stderr.lastIndexOf('RuntimeError: '));
  expect(raised).toContain('Validation failed with the following errors:');
  expect(problemLines(raised)).toEqual(expected);
});

test('the Python example of docs/python.md synthesizes its RayService and its coordinated RoleBasedGroup', () => {
  const doc = fs.readFileSync(path.join(root, 'docs', 'python.md'), 'utf8');
  const blocks = [...doc.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
  expect(blocks).toHaveLength(1);
  const dir = path.join(work, 'doc');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'app.py'), blocks[0]);
  const run = spawnSync(python, ['app.py'], { cwd: dir, env, encoding: 'utf8' });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  expect(fs.readFileSync(path.join(dir, 'dist', 'llm.k8s.yaml'), 'utf8')).toContain('kind: RayService\n');
  expect(fs.readFileSync(path.join(dir, 'dist', 'pd.k8s.yaml'), 'utf8')).toMatch(/kind: RoleBasedGroup\n[\s\S]*kind: CoordinatedPolicy\n/);
});
