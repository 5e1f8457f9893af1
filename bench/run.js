#!/usr/bin/env node
/**
 * `npm run bench`: runs the benches that need no cluster (no control plane, no browser, no Ray),
 * one after another, each in its own process as it is run alone (`npx tsx bench/<name>.bench.ts`),
 * showing their output as it comes, then prints every ratio line they printed, together. The
 * benches that need the test cluster, the end-to-end stack or Chromium are listed, with how to
 * run each; run them by hand. Prints; never asserts (a bench that fails makes the run fail).
 */
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

/** Benches that run in this process's machine alone. */
const STANDALONE = ['plan', 'rbg-rounds', 'synth', 'reconcile-pass'];
/** Benches that need more than Node, with what. */
const NEEDS_MORE = {
  apiserver: 'a control plane (npm run controlplane:build)',
  'apiserver-write-cost': 'a control plane (npm run controlplane:build)',
  'operator-lateness': 'the test cluster (docs/test-cluster.md)',
  'operator-scale': 'the test cluster (docs/test-cluster.md)',
  'e2e-lateness': 'the end-to-end stack (npm run e2e:setup)',
  'vs-kuberay': 'the test cluster (docs/test-cluster.md)',
  'rbg-router-mixed': 'the test cluster and sglang-router (scripts/install-sglang-router.sh; docs/bench.md)',
  ui: "Debian's Chromium and npm run build:ui",
};

const root = path.resolve(__dirname, '..');
const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
const ratios = [];
for (const name of STANDALONE) {
  const file = path.join('bench', `${name}.bench.ts`);
  console.log(`\n=== ${file}`);
  const r = spawnSync(tsx, [file], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  process.stdout.write(r.stdout ?? '');
  if (r.status !== 0) {
    console.error(`${file} failed (exit ${r.status ?? r.signal})`);
    process.exit(1);
  }
  for (const line of (r.stdout ?? '').split('\n')) if (/ratio/i.test(line)) ratios.push(`${name}: ${line.trim()}`);
}
console.log('\n=== ratios');
for (const line of ratios) console.log(line);
console.log('\nnot run here (each needs more than Node):');
for (const [name, what] of Object.entries(NEEDS_MORE)) console.log(`  bench/${name}.bench.ts: ${what}; npx tsx bench/${name}.bench.ts`);
