#!/usr/bin/env node
// The Node that runs the npm scripts: `npm run` puts node_modules/.bin first on PATH, where `npm ci`
// links the pinned Node 24 of the workspace tools/node when the registry has one for this machine
// (Linux x64/arm64, macOS x64, Windows x64); elsewhere (macOS on arm64) it is the machine's own, and
// this stops the scripts with a clear message when that one is older than package.json's engines.node.
'use strict';
const range = require('../package.json').engines.node;
const floor = /^>=(\d+)\.(\d+)$/.exec(range);
if (!floor) throw new Error(`package.json engines.node is ${JSON.stringify(range)}; scripts/check-node.cjs reads only ">=MAJOR.MINOR"`);
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < Number(floor[1]) || (major === Number(floor[1]) && minor < Number(floor[2]))) {
  const os = process.platform === 'win32' ? 'win' : process.platform;
  console.error(
    `Node ${process.versions.node} (${process.execPath}) is too old: rayshift needs Node ${range} (package.json engines.node). ` +
      `npm ci brings Node 24 from the npm registry only where a node-${os}-${process.arch} package of it exists; ` +
      'install Node 22.19 or later (24 is what CI runs) and run the command again.',
  );
  process.exit(1);
}
