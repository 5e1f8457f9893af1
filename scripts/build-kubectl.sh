#!/usr/bin/env bash
# Builds kubectl for the `kubectl rayshift` plugin tests from the Go module in test/kubectl into a
# cache outside the source tree (see kubectl-bin-dir.sh for the folder). A warm cache skips the build.
# Progress goes to stderr; the last line on stdout is the bin folder.
#
# kubectl is built from the same Kubernetes release as the test control plane: its code is the
# k8s.io/kubectl staging module, whose v0.X.Y is k8s.io/kubernetes v1.X.Y; the script refuses a pin
# that differs from test/controlplane/go.mod's. A separate module and cache (not a fifth program of
# the control plane's build) so that adding it left the control plane's cache key alone; both builds
# share GOCACHE/GOMODCACHE, so client-go, apimachinery and component-base compile once.
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_KUBECTL_BIN (use a prebuilt kubectl from there:
# this script then only checks it), GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/kubectl"
programs=(kubectl)
tag=kubectl
source "$root/scripts/lib/cached-go-build.sh"

bin="$(bash "$root/scripts/kubectl-bin-dir.sh")" || fail "cannot compute the bin folder"
staging="$(bash "$root/scripts/kubectl-bin-dir.sh" --version)"
release="$(bash "$root/scripts/controlplane-bin-dir.sh" --version)"
[[ "${staging#v0.}" == "${release#v1.}" ]] \
  || fail "test/kubectl pins k8s.io/kubectl $staging, which is not the staging module of the control plane's k8s.io/kubernetes $release (want v0.${release#v1.})"

use_cache_or_lock RAYSHIFT_KUBECTL_BIN "$mod/go.mod"

log "kubectl of Kubernetes $release, $(go version | cut -d' ' -f3-), -p $jobs, into $bin"

tmp=
trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"' EXIT

log "downloading modules (go mod download)"
t0=$SECONDS
(cd "$mod" && proxy_retry go mod download) || fail "go mod download failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
log "modules ready in $((SECONDS - t0))s"

ldflags="$(k8s_ldflags "$release")"

tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
chmod 755 "$tmp"
log "building kubectl"
tick "building"
t0=$SECONDS
(cd "$mod" && proxy_retry go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$tmp/kubectl" ./cmd/kubectl) \
  || fail "go build failed (see the compiler output above)"
untick
log "built kubectl in $((SECONDS - t0))s ($(du -h "$tmp/kubectl" | cut -f1))"
"$tmp/kubectl" version --client >&2 || fail "the built kubectl does not run"
touch "$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
tmp=
log "done in $((SECONDS - start))s"
echo "$bin"
