#!/usr/bin/env bash
# Prints the folder that holds (or will hold) the test control plane's etcd, kube-apiserver,
# kube-scheduler and kube-controller-manager.
#
#   $RAYSHIFT_CONTROLPLANE_BIN                     when set: prebuilt binaries, used as they are
#   ${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/controlplane/<k8s version>-<key>/bin   otherwise
#
# <key> is a hash of test/controlplane/{go.mod,go.sum,cmd/*/*.go} and RECIPE below, so any change of
# the pinned modules or the wrapper programs gets a fresh folder. Bump RECIPE when the build flags in
# build-controlplane.sh change. Needs only bash, sed and sha256sum (no Go), so it is cheap to call.
# `--version` prints the Kubernetes version instead of the folder.
set -euo pipefail

RECIPE=r2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/controlplane"

source "$root/scripts/lib/bin-dir.sh"
bin_dir_start "controlplane-bin-dir" "$mod/go.mod" k8s.io/kubernetes RAYSHIFT_CONTROLPLANE_BIN "$@"

key="$(
  cd "$mod"
  { echo "$RECIPE"; cat go.mod go.sum; for f in $(LC_ALL=C ls cmd/*/*.go); do echo "$f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12
)"
bin_dir_print controlplane "$key"
