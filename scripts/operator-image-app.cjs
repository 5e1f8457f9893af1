#!/usr/bin/env node
// Writes the package.json of the operator image's app folder: the packed rayshift tarball, and the
// optional peers the operator and the API server load (lib/cli/peers.ts's OPTIONAL_PEERS, read from
// the build that `npm pack` made) plus the required peers cdk8s and constructs, each at the exact
// version this repository's package-lock.json tests with. `npm install --omit=dev` in that folder
// then installs what `rayshift operator` and `rayshift api-server` run on, and nothing else.
// Used by operator/Dockerfile and scripts/build-operator-image.sh.
//
//   node scripts/operator-image-app.cjs TARBALL OUT_DIR
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const [tarball, outDir] = process.argv.slice(2);
if (!tarball || !outDir) {
  console.error('usage: node scripts/operator-image-app.cjs TARBALL OUT_DIR');
  process.exit(2);
}
const root = path.join(__dirname, '..');
const pkg = require(path.join(root, 'package.json'));
const lock = require(path.join(root, 'package-lock.json'));
const { OPTIONAL_PEERS } = require(path.join(root, 'build', 'lib', 'cli', 'peers.js'));
const required = Object.keys(pkg.peerDependencies).filter((n) => !pkg.peerDependenciesMeta?.[n]?.optional);
const dependencies = { rayshift: `file:${path.resolve(tarball)}` };
for (const name of [...required, ...Object.keys(OPTIONAL_PEERS)].sort()) {
  const locked = lock.packages[`node_modules/${name}`];
  if (!locked) throw new Error(`${name} is a peer the operator image needs, but package-lock.json has no node_modules/${name}: run npm install`);
  dependencies[name] = locked.version;
}
fs.mkdirSync(outDir, { recursive: true });
const app = { name: 'rayshift-operator-image', version: pkg.version, private: true, description: `rayshift ${pkg.version}: the operator and the API server`, license: pkg.license, dependencies };
fs.writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify(app, null, 2)}\n`);
