#!/usr/bin/env bash
# Prints the folder that holds (or will hold) the tests' Prometheus binary (see
# scripts/build-prometheus.sh).
#
#   $RAYSHIFT_PROMETHEUS_BIN                                    when set: a prebuilt binary, used as it is
#   ${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/prometheus/<version>-<key>/bin   otherwise
#
# <version> is the pinned module version (v0.3MM.P, release 3.MM.P). <key> is a hash of
# test/prometheus/{go.mod,go.sum} and RECIPE below, so any change of the pinned modules gets a fresh
# folder. Bump RECIPE when the build steps or tags in build-prometheus.sh change. Needs only bash, sed
# and sha256sum (no Go), so it is cheap to call.
# `--version` prints the pinned module version instead of the folder.
set -euo pipefail

RECIPE=r1
mod="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

source "$mod/../../scripts/lib/bin-dir.sh"
bin_dir_start "prometheus bin-dir" "$mod/go.mod" github.com/prometheus/prometheus RAYSHIFT_PROMETHEUS_BIN "$@"

key="$(
  cd "$mod"
  { echo "$RECIPE"; for f in go.mod go.sum; do echo "$f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12
)"
bin_dir_print prometheus "$key"
