#!/usr/bin/env bash
# Generates the Python SDK of the rayshift Pulumi plugin package from its schema
# (lib/pulumi/plugin/generated/schema.json) into build/pulumi-sdk/python: the SDK that
# `pulumi package add pulumi-plugin` generates for a Python project (docs/pulumi-plugin.md).
#
#   bash scripts/build-pulumi-sdk.sh [--venv DIR]
#
# `pulumi package add` generates SDKs through the language hosts, and Pulumi's Python language host
# is not served by the Go module proxy. So the same code generator it runs
# (github.com/pulumi/pulumi/pkg/v3/codegen/python, at the version the CLI is built from) runs here
# from a small wrapper, test/pulumi-toolchain/python-sdkgen/main.go, built against the CLI's go.mod
# into the Pulumi cache folder (about a minute cold, once). With --venv, DIR becomes a virtualenv
# with Pulumi's Python SDK from PyPI at the CLI's version and the generated SDK. Progress goes to
# stderr; the last line on stdout is the SDK folder, or DIR's python with --venv.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/lib/go-proxy-retry.sh"
venv=
if [[ "${1:-}" == "--venv" ]]; then venv="${2:?--venv needs a folder}"; fi
tag=pulumi-sdk
start=$SECONDS
log() { printf '[%s %4ds] %s\n' "$tag" "$((SECONDS - start))" "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
cleanup=()
trap 'rm -rf "${cleanup[@]}"' EXIT

version="$(bash "$root/scripts/pulumi-bin-dir.sh" --version)"
wrapper="$root/test/pulumi-toolchain/python-sdkgen/main.go"
cli_mod="$root/test/pulumi-toolchain/cli"
key="$(cat "$wrapper" "$cli_mod/go.mod" "$cli_mod/go.sum" | sha256sum | cut -c1-12)"
generator="${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/pulumi/python-sdkgen-$version-$key"

if [[ ! -x "$generator" ]]; then
  command -v go >/dev/null || fail "'go' is not on PATH; it builds the Python SDK generator"
  mkdir -p "$(dirname "$generator")"
  work="$(mktemp -d "$(dirname "$generator")/sdkgen.tmp.XXXXXX")"
  cleanup+=("$work")
  sed 's#^module .*#module rayshift.dev/test/pulumi-toolchain/python-sdkgen#' "$cli_mod/go.mod" >"$work/go.mod"
  cp "$cli_mod/go.sum" "$wrapper" "$work/"
  log "building the Python SDK generator (pkg/v3/codegen/python $version)"
  (cd "$work" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" \
    proxy_retry go build -p "${RAYSHIFT_BUILD_JOBS:-2}" -trimpath -tags osusergo,grpcnotrace -o "$work/python-sdkgen" .) \
    || fail "go build of the Python SDK generator failed (see the compiler output above)"
  mv "$work/python-sdkgen" "$generator"
  log "built $generator"
fi

# With --venv the SDK only passes through a temporary folder (pip copies it), so that concurrent
# callers never share one.
if [[ -n "$venv" ]]; then
  sdk="$(mktemp -d)"
  cleanup+=("$sdk")
else
  sdk="$root/build/pulumi-sdk/python"
  rm -rf "$sdk"
  mkdir -p "$sdk"
fi
"$generator" "$root/lib/pulumi/plugin/generated/schema.json" "$sdk" || fail "generating the Python SDK failed"
log "generated the Python SDK in $sdk"

if [[ -z "$venv" ]]; then
  echo "$sdk"
  exit 0
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "pulumi==${version#v}" "$sdk" \
  || fail "pip install of pulumi==${version#v} (PyPI) and the generated SDK failed"
log "virtualenv $venv: $("$venv/bin/pip" list --disable-pip-version-check 2>/dev/null | grep -E '^(pulumi|rayshift-pulumi|rayshift_pulumi) ' | tr -s ' ' | paste -sd, -)"
echo "$venv/bin/python"
