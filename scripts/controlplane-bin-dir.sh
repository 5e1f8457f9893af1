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

version="$(sed -n 's/^[[:space:]]*k8s\.io\/kubernetes \(v[0-9][^[:space:]]*\).*$/\1/p' "$mod/go.mod" | head -n 1)"
if [[ -z "$version" ]]; then
  echo "controlplane-bin-dir: no 'k8s.io/kubernetes vX.Y.Z' requirement in $mod/go.mod" >&2
  exit 1
fi
if [[ "${1:-}" == "--version" ]]; then
  echo "$version"
  exit 0
fi
if [[ -n "${RAYSHIFT_CONTROLPLANE_BIN:-}" ]]; then
  echo "$RAYSHIFT_CONTROLPLANE_BIN"
  exit 0
fi

key="$(
  cd "$mod"
  { echo "$RECIPE"; cat go.mod go.sum; for f in $(LC_ALL=C ls cmd/*/*.go); do echo "$f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12
)"
echo "${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/controlplane/$version-$key/bin"
