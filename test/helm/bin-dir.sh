#!/usr/bin/env bash
# Prints the folder that holds (or will hold) the Helm CLI the chart tests use (see
# scripts/build-helm.sh).
#
#   $RAYSHIFT_HELM_BIN                                    when set: a prebuilt helm, used as it is
#   ${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/helm/<version>-<key>/bin   otherwise
#
# <version> is the pinned helm.sh/helm/v3 module version. <key> is a hash of test/helm/{go.mod,go.sum}
# and RECIPE below, so any change of the pinned modules gets a fresh folder. Bump RECIPE when the
# build steps or flags in build-helm.sh change. Needs only bash, sed and sha256sum (no Go).
# `--version` prints the pinned module version instead of the folder.
set -euo pipefail

RECIPE=r1
mod="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

source "$mod/../../scripts/lib/bin-dir.sh"
bin_dir_start "helm bin-dir" "$mod/go.mod" helm.sh/helm/v3 RAYSHIFT_HELM_BIN "$@"

key="$(
  cd "$mod"
  { echo "$RECIPE"; for f in go.mod go.sum; do echo "$f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12
)"
bin_dir_print helm "$key"
