#!/usr/bin/env bash
# Prints the folder that holds (or will hold) the end-to-end tests' Traefik binary (see
# scripts/build-traefik.sh).
#
#   $RAYSHIFT_TRAEFIK_BIN                                    when set: a prebuilt binary, used as it is
#   ${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/traefik/<version>-<key>/bin   otherwise
#
# <key> is a hash of test/traefik/{go.mod,go.sum,ext/*} and RECIPE below, so any change of the pinned
# modules or the stub module gets a fresh folder. Bump RECIPE when the build steps in build-traefik.sh
# change. Needs only bash, sed and sha256sum (no Go), so it is cheap to call.
# `--version` prints the Traefik version instead of the folder.
set -euo pipefail

RECIPE=r1
mod="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

source "$mod/../../scripts/lib/bin-dir.sh"
bin_dir_start "traefik bin-dir" "$mod/go.mod" github.com/traefik/traefik/v3 RAYSHIFT_TRAEFIK_BIN "$@"

key="$(
  cd "$mod"
  { echo "$RECIPE"; for f in go.mod go.sum $(LC_ALL=C ls ext/*); do echo "$f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12
)"
bin_dir_print traefik "$key"
