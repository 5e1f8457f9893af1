#!/usr/bin/env bash
# Installs the pinned `sglang-router` (test/support/sglang-router-requirements.txt) from PyPI into a
# virtualenv under the repository, .venv-sglang-router/ (git-ignored), for the tests that run the
# real router in prefill/decode mode. Idempotent: a venv whose stamp matches the requirements is left
# alone. Progress goes to stderr; the last line on stdout is the venv's bin folder.
# Environment: RAYSHIFT_PYTHON (the interpreter that makes the venv, default python3).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv-sglang-router"
requirements="$root/test/support/sglang-router-requirements.txt"
start=$SECONDS

log() { printf '[install-sglang-router %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
# shellcheck source=lib/pip-venv.sh
source "$root/scripts/lib/pip-venv.sh"

python="${RAYSHIFT_PYTHON:-python3}"
command -v "$python" >/dev/null || fail "'$python' is not on PATH"
stamp_value="$( { "$python" --version 2>&1; cat "$requirements"; } | sha256sum | cut -c1-16)"

if pip_venv_current "$venv" "$stamp_value" "$venv/bin/python"; then
  log "venv is up to date, nothing to install: $venv"
  echo "$venv/bin"
  exit 0
fi

pip_venv_install "$python" "$venv" "$requirements"
"$venv/bin/python" -m sglang_router.launch_router --help >/dev/null || fail "the installed sglang-router does not run"
echo "$stamp_value" >"$venv/.rayshift-stamp"
log "done in $((SECONDS - start))s ($(du -sh "$venv" | cut -f1))"
echo "$venv/bin"
