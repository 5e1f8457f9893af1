#!/usr/bin/env bash
# Builds the integration tests' control plane (upstream etcd, kube-apiserver, kube-scheduler and
# kube-controller-manager) from the Go module in test/controlplane into a cache outside the source
# tree (see controlplane-bin-dir.sh for the folder). A warm cache skips the build. Progress goes to
# stderr; the last line on stdout is the bin folder.
#
# The four programs are built by one `go build`, so the packages they share (most of
# k8s.io/kubernetes, client-go, apiserver) compile once. A cold build downloads several hundred MB of
# modules and compiles for 15-30 min on 2 cores (etcd and kube-apiserver alone took 12 min on a
# quiet machine; all four took 30 min at nice 19 beside other tests at load 6-14).
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_CONTROLPLANE_BIN (use prebuilt binaries from
# there: this script then only checks them), GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/controlplane"
programs=(etcd kube-apiserver kube-scheduler kube-controller-manager)
tag=controlplane
source "$root/scripts/lib/cached-go-build.sh"

bin="$(bash "$root/scripts/controlplane-bin-dir.sh")" || fail "cannot compute the bin folder"
version="$(bash "$root/scripts/controlplane-bin-dir.sh" --version)"

use_cache_or_lock RAYSHIFT_CONTROLPLANE_BIN "$mod/go.mod"

log "Kubernetes $version, $(go version | cut -d' ' -f3-), -p $jobs, into $bin"

tmp=
trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"' EXIT

log "downloading modules (go mod download)"
tick "downloading modules"
t0=$SECONDS
(cd "$mod" && proxy_retry go mod download) || fail "go mod download failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
untick
log "modules ready in $((SECONDS - t0))s"

ldflags="$(k8s_ldflags "$version")"

tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
chmod 755 "$tmp"
log "building ${programs[*]} (one go build)"
tick "building"
t0=$SECONDS
pkgs=()
for p in "${programs[@]}"; do pkgs+=("./cmd/$p"); done
# -o into a folder: each main package's executable is named after its folder.
(cd "$mod" && proxy_retry go build -p "$jobs" -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldflags" \
  -o "$tmp/" "${pkgs[@]}") || fail "go build failed (see the compiler output above)"
untick
for p in "${programs[@]}"; do
  [[ -x "$tmp/$p" ]] || fail "go build did not produce $p"
  log "built $p ($(du -h "$tmp/$p" | cut -f1))"
done
log "built ${#programs[@]} programs in $((SECONDS - t0))s"

for p in kube-apiserver kube-scheduler kube-controller-manager; do
  "$tmp/$p" --version >&2 || fail "the built $p does not run"
done
# Not `etcd --version | head -n 1`: head exits after one line, and under pipefail etcd's SIGPIPE on
# its next line failed the build now and then.
etcd_version="$("$tmp/etcd" --version)" || fail "the built etcd does not run"
head -n 1 <<<"$etcd_version" >&2
touch "$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
tmp=
log "done in $((SECONDS - start))s"
echo "$bin"
