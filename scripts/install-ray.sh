#!/usr/bin/env bash
# Installs the end-to-end tests' Ray (a pinned `ray[serve]`, see test/e2e/ray-requirements.txt) from
# PyPI into a virtualenv under the repository, .venv-ray/ (git-ignored), and generates the test Serve
# app's gRPC stubs into .venv-ray/rayshift-gen/. Idempotent: a venv whose stamp matches the
# requirements and the .proto is left alone (a warm run takes well under a second).
# Progress goes to stderr; the last line on stdout is the venv's bin folder.
# Environment: RAYSHIFT_PYTHON (the interpreter that makes the venv, default python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv-ray"
requirements="$root/test/e2e/ray-requirements.txt"
proto_dir="$root/test/e2e/rayapp"
proto=rayshift_test.proto
gen="$venv/rayshift-gen"
start=$SECONDS

log() { printf '[install-ray %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
# shellcheck source=lib/pip-venv.sh
source "$root/scripts/lib/pip-venv.sh"

python="${RAYSHIFT_PYTHON:-python3}"
command -v "$python" >/dev/null || fail "'$python' is not on PATH (Python 3.10-3.13 is needed for the pinned ray wheels)"
stamp_value="$( { "$python" --version 2>&1; cat "$requirements" "$proto_dir/$proto"; } | sha256sum | cut -c1-16)"

if pip_venv_current "$venv" "$stamp_value" "$venv/bin/ray"; then
  log "venv is up to date, nothing to install: $venv"
  echo "$venv/bin"
  exit 0
fi

pip_venv_install "$python" "$venv" "$requirements"
log "generating the gRPC stubs of $proto into $gen"
rm -rf "$gen"
mkdir -p "$gen"
"$venv/bin/python" -m grpc_tools.protoc -I"$proto_dir" --python_out="$gen" --grpc_python_out="$gen" "$proto_dir/$proto" \
  || fail "protoc failed for $proto"
"$venv/bin/ray" --version >&2 || fail "the installed ray does not run"
echo "$stamp_value" >"$venv/.rayshift-stamp"
log "done in $((SECONDS - start))s ($(du -sh "$venv" | cut -f1))"
echo "$venv/bin"
