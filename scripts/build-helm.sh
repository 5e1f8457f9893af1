#!/usr/bin/env bash
# Builds the Helm CLI that lints, renders and installs the generated chart (dist/helm/rayshift, see
# scripts/helm-chart.ts) in the tests, from the Go wrapper module in test/helm into a cache outside
# the source tree (see test/helm/bin-dir.sh for the folder). A warm cache skips the build. Progress
# goes to stderr; the last line on stdout is the bin folder, which then holds `helm`.
#
# Upstream's go.mod has no `replace` lines, so cmd/helm builds straight from the module path in a
# build folder (inside the cache) holding copies of the wrapper go.mod/go.sum; no upstream source is
# kept in the repository and nothing but Go modules is downloaded. See test/helm/README.md for the
# cold build's size and time.
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_HELM_BIN (use a prebuilt helm from there: this
# script then only checks it), GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/helm"
programs=(helm)
tag=helm
source "$root/scripts/lib/cached-go-build.sh"

bin="$(bash "$mod/bin-dir.sh")" || fail "cannot compute the bin folder"
version="$(bash "$mod/bin-dir.sh" --version)"

use_cache_or_lock RAYSHIFT_HELM_BIN "$mod/go.mod"
upstream=helm.sh/helm/v3

log "Helm $version, $(go version | cut -d' ' -f3-), -p $jobs, into $bin"

tmp=
src=
trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"; [[ -n "$src" ]] && rm -rf "$src"' EXIT

# The build folder: copies of the wrapper go.mod/go.sum, so that no Go command writes into the tree.
src="$(mktemp -d "$cache/src.tmp.XXXXXX")"
cp "$mod/go.mod" "$mod/go.sum" "$src/"

log "downloading modules"
tick "downloading modules"
t0=$SECONDS
(cd "$src" && proxy_retry go list -deps "$upstream/cmd/helm" >/dev/null) \
  || fail "downloading Helm's modules failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
# The Kubernetes version helm lint and helm template assume without a cluster follows the client-go
# it is built with, as upstream's Makefile derives it (client-go v0.N.x is Kubernetes 1.N).
client_go="$(cd "$src" && go list -m -f '{{.Version}}' k8s.io/client-go)" || fail "no k8s.io/client-go in the module graph"
k8s_minor="$(echo "$client_go" | cut -d. -f2)"
untick
log "sources ready in $((SECONDS - t0))s"

tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
chmod 755 "$tmp"
log "building helm"
tick "building helm"
t0=$SECONDS
# Flags as in upstream's Makefile (`build` target, a tagged release: no "unreleased" metadata).
V=$upstream/internal/version
ldflags="-s -w -X $V.version=$version -X $V.metadata= -X $V.gitCommit= -X $V.gitTreeState=clean"
for p in $upstream/pkg/lint/rules $upstream/pkg/chartutil; do
  ldflags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$k8s_minor"
done
(cd "$src" && proxy_retry go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$tmp/helm" "$upstream/cmd/helm") \
  || fail "go build of helm failed (see the compiler output above)"
untick
log "built helm in $((SECONDS - t0))s ($(du -h "$tmp/helm" | cut -f1))"

"$tmp/helm" version --short >&2 || fail "the built helm does not run"
printf 'helm %s\n' "$version" >"$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
tmp=
log "done in $((SECONDS - start))s"
echo "$bin"
