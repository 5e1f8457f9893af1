#!/usr/bin/env bash
# Builds the Python package of rayshift's constructs (`rayshift-cdk8s`, module `rayshift_cdk8s`) with
# jsii and jsii-pacmak from the npm registry, over lib/spec and lib/cdk8s as they are: the jsii
# package packages/rayshift-cdk8s gets them (and lib/engine/affinity-batches.ts and
# rbg-router-weight.ts, the engine files the constructs use) copied into its `src/` in a staging folder under build/, so the source has one
# home and jsii checks on every build that the constructs' surface stays one jsii can carry.
#
#   bash scripts/build-python.sh [--venv DIR]
#
# The wheel goes to build/jsii/dist/python/. With --venv, DIR becomes a virtualenv holding the wheel
# and, from PyPI, the cdk8s, cdk8s-plus-28 and constructs versions this repository's npm lock pins.
# jsii-pacmak needs python3 with venv and PyPI (it builds the wheel in a venv of its own). Progress
# goes to stderr; the last line on stdout is the wheel, or DIR's python with --venv.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv=
if [[ "${1:-}" == "--venv" ]]; then venv="${2:?--venv needs a folder}"; fi
log() { echo "[python] $*" >&2; }
bin="$root/node_modules/.bin"
export PATH="$bin:$PATH" # Node 24 (the workspace tools/node's package for this machine) for jsii, pacmak and the Python runtime
for tool in jsii jsii-pacmak; do [[ -x "$bin/$tool" ]] || { log "$tool is missing: run npm ci first"; exit 1; }; done

stage="$root/build/jsii/rayshift-cdk8s"
rm -rf "$stage" "$root/build/jsii/dist"
mkdir -p "$stage/src/lib/engine" "$stage/node_modules"
cp "$root/packages/rayshift-cdk8s/README.md" "$root/LICENSE" "$stage/"
cp "$root/packages/rayshift-cdk8s/index.ts" "$stage/src/index.ts"
cp -r "$root/lib/spec" "$root/lib/cdk8s" "$stage/src/lib/"
cp "$root/lib/engine/affinity-batches.ts" "$root/lib/engine/rbg-router-weight.ts" "$stage/src/lib/engine/"
# The staged package.json carries rayshift's version; `yaml` is bundled (it is no jsii package), so
# npm pack needs it inside the package. The jsii peers resolve from the repository's node_modules.
node -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  pkg.version = require(process.argv[2]).version;
  fs.writeFileSync(process.argv[3], JSON.stringify(pkg, null, 2) + "\n");
' "$root/packages/rayshift-cdk8s/package.json" "$root/package.json" "$stage/package.json"
cp -r "$root/node_modules/yaml" "$stage/node_modules/"

cd "$stage"
start=$SECONDS
log "jsii over lib/spec + lib/cdk8s"
"$bin/jsii" --silence-warnings=reserved-word >&2
log "jsii: $((SECONDS - start)) s; jsii-pacmak --targets python"
"$bin/jsii-pacmak" --targets python --outdir "$root/build/jsii/dist" >&2
wheel="$(ls "$root"/build/jsii/dist/python/rayshift_cdk8s-*.whl)"
log "built $(basename "$wheel") in $((SECONDS - start)) s"

if [[ -z "$venv" ]]; then
  echo "$wheel"
  exit 0
fi
pin() { node -p "require('$root/node_modules/$1/package.json').version"; }
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" \
  "cdk8s==$(pin cdk8s)" "cdk8s-plus-28==$(pin cdk8s-plus-28)" "constructs==$(pin constructs)" >&2
log "virtualenv $venv: $("$venv/bin/pip" list --disable-pip-version-check 2>/dev/null | grep -E '^(rayshift-cdk8s|cdk8s|cdk8s-plus-28|constructs|jsii) ' | tr -s ' ' | paste -sd, -)"
echo "$venv/bin/python"
