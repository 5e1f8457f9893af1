/**
 * The import rules (.dependency-cruiser.cjs) against ARCHITECTURE.md and against a small tree that
 * breaks each rule once: the table in the document is the rules' `LAYERS`, and every rule the
 * checker runs in `npm test` refuses the import it is written for.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { LAYERS } = require(CONFIG) as { LAYERS: { name: string; path: string; mayImport: string[] }[] };

/** The rows of ARCHITECTURE.md's Layers table: layer, folder, may import. */
function documentedLayers(): { name: string; path: string; mayImport: string[] }[] {
  const doc = fs.readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Layers'), doc.indexOf('\n## ', doc.indexOf('## Layers') + 1));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| layer') && !l.startsWith('|---'))
    .map((l) => l.split('|').map((c) => c.trim()))
    .map((c) => ({ name: c[1], path: c[2].replace(/`/g, ''), mayImport: c[3] === '—' ? [] : c[3].split(',').map((s) => s.trim()) }));
}

test("ARCHITECTURE.md's Layers table is the checker's LAYERS, row for row", () => {
  expect(documentedLayers()).toEqual(LAYERS.map((l) => ({ name: l.name, path: l.path, mayImport: l.mayImport })));
});

/** Runs the checker on `files` (path → source) in a fresh folder; returns the rule names it reports, sorted. */
function violations(files: Record<string, string>): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rayshift-import-rules-'));
  try {
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', target: 'es2022', strict: true } }));
    for (const [file, source] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), source);
    }
    const bin = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
    const r = spawnSync(bin, ['lib', 'operator', '--config', CONFIG, '--output-type', 'json'], { cwd: dir, encoding: 'utf8' });
    const out = JSON.parse(r.stdout) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
    return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('an allowed tree passes: engine → spec, runtime → engine, operator → runtime, type-only cycle', () => {
  expect(
    violations({
      'lib/spec/model.ts': 'export const x = 1;\n',
      'lib/engine/decide.ts': "import { x } from '../spec/model';\nexport const y = x + 1;\n",
      'lib/runtime/io.ts': "import * as http from 'node:http';\nimport { y } from '../engine/decide';\nimport type { Z } from './other';\nexport const z: Z = { n: y };\nexport { http };\n",
      'lib/runtime/other.ts': "import { z } from './io';\nexport type Z = { n: number };\nexport const w = z;\n",
      'operator/run.ts': "import { z } from '../lib/runtime/io';\nexport const r = z;\n",
    }),
  ).toEqual([]);
});

test('each rule refuses the import it is written for', () => {
  expect(
    violations({
      'lib/spec/model.ts': "import * as fs from 'node:fs';\nexport const x = fs.existsSync('.');\n",
      'lib/engine/decide.ts': "import { io } from '../runtime/io';\nexport const y = io;\n",
      'lib/runtime/io.ts': 'export const io = 1;\n',
      'lib/cdk8s/construct.ts': "import { run } from '../../operator/run';\nexport const c = run;\n",
      'lib/pulumi/component.ts': "import * as https from 'node:https';\nimport { root } from '../crds/resolve';\nexport const p = [https, root];\n",
      'lib/crds/resolve.ts': 'export const root = 1;\n',
      'lib/cli/a.ts': "import { b } from './b';\nexport const a = 1 + b;\n",
      'lib/cli/b.ts': "import { a } from './a';\nexport const b = 1;\nexport const ab = a;\n",
      'operator/run.ts': 'export const run = 1;\n',
    }),
  ).toEqual(
    [
      'crd-downloads-are-development-time: lib/pulumi/component.ts -> lib/crds/resolve.ts',
      'layer-cdk8s: lib/cdk8s/construct.ts -> operator/run.ts',
      'layer-engine: lib/engine/decide.ts -> lib/runtime/io.ts',
      'layer-pulumi: lib/pulumi/component.ts -> lib/crds/resolve.ts',
      'network-clients-in-runtime: lib/pulumi/component.ts -> https',
      'no-circular: lib/cli/a.ts -> lib/cli/b.ts',
      'pure-layers-do-no-io: lib/spec/model.ts -> fs',
    ].sort(),
  );
});

test('lib/runtime applies no rule of lib/spec, and the RayService executor none of lib/engine (type imports are fine)', () => {
  expect(
    violations({
      'lib/spec/analysis.ts': 'export type A = { n: number };\nexport const check = (a: A) => a.n > 0;\n',
      'lib/spec/read.ts': 'export const asObject = (v: unknown) => v;\n',
      'lib/engine/rayservice-pass.ts': 'export type Step = { type: string };\nexport const plan = (): Step[] => [];\n',
      'lib/runtime/rbg/observe.ts': "import { check } from '../../spec/analysis';\nimport type { A } from '../../spec/analysis';\nimport { asObject } from '../../spec/read';\nexport const o = (a: A) => [check(a), asObject(a)];\n",
      'lib/runtime/rayservice/execute.ts': "import { plan } from '../../engine/rayservice-pass';\nimport type { Step } from '../../engine/rayservice-pass';\nexport const run = (s: Step) => [s, plan()];\n",
      'operator/run.ts': 'export const run = 1;\n',
    }),
  ).toEqual(
    [
      'executor-only-executes: lib/runtime/rayservice/execute.ts -> lib/engine/rayservice-pass.ts',
      'runtime-applies-no-spec-rules: lib/runtime/rbg/observe.ts -> lib/spec/analysis.ts',
    ].sort(),
  );
});
