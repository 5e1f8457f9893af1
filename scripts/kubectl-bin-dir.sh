#!/usr/bin/env bash
# Prints the folder that holds (or will hold) the kubectl of the plugin tests (see build-kubectl.sh).
#
#   $RAYSHIFT_KUBECTL_BIN                                  when set: a prebuilt kubectl, used as it is
#   ${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/kubectl/<k8s.io/kubectl version>-<key>/bin   otherwise
#
# <key> is a hash of test/kubectl/{go.mod,go.sum,cmd/kubectl/*.go} and RECIPE below. Bump RECIPE when
# the build flags in build-kubectl.sh change. Needs only bash, sed and sha256sum (no Go).
# `--version` prints the pinned k8s.io/kubectl version instead of the folder.
set -euo pipefail

RECIPE=r1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/kubectl"

source "$root/scripts/lib/bin-dir.sh"
bin_dir_start "kubectl-bin-dir" "$mod/go.mod" k8s.io/kubectl RAYSHIFT_KUBECTL_BIN "$@"

key="$(
  cd "$mod"
  { echo "$RECIPE"; cat go.mod go.sum; for f in $(LC_ALL=C ls cmd/*/*.go); do echo "$f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12
)"
bin_dir_print kubectl "$key"
