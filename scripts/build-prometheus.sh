#!/usr/bin/env bash
# Builds the tests' Prometheus server (test/support/prometheus.ts) from the Go wrapper module in
# test/prometheus into a cache outside the source tree (see test/prometheus/bin-dir.sh for the folder).
# A warm cache skips the build. Progress goes to stderr; the last line on stdout is the bin folder,
# which then holds `prometheus`.
#
# Upstream's go.mod has no `replace` lines, so its main package builds straight from the module path
# in a build folder (inside the cache) holding copies of the wrapper go.mod/go.sum; no upstream source
# is kept in the repository. The build is kept small: the tag remove_all_sd leaves out every service
# discovery but static, file and http (the tests list their targets), and without the tag
# builtinassets the web UI is not embedded (the tests use only the HTTP API). A cold build downloads
# ~160 MB of module zips (~820 MB unpacked) and compiles for ~4 CPU-minutes (8 min measured on 2
# cores shared with a CI run), giving a 50 MB binary (see test/prometheus/README.md).
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_PROMETHEUS_BIN (use a prebuilt binary from there:
# this script then only checks it), GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/prometheus"
programs=(prometheus)
tag=prometheus
source "$root/scripts/lib/cached-go-build.sh"

bin="$(bash "$mod/bin-dir.sh")" || fail "cannot compute the bin folder"
version="$(bash "$mod/bin-dir.sh" --version)"

use_cache_or_lock RAYSHIFT_PROMETHEUS_BIN "$mod/go.mod"
upstream=github.com/prometheus/prometheus
# Bump RECIPE in test/prometheus/bin-dir.sh when these change.
build_tags=remove_all_sd

log "Prometheus $version, $(go version | cut -d' ' -f3-), -p $jobs, tags $build_tags, into $bin"

tmp=
src=
trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"; [[ -n "$src" ]] && rm -rf "$src"' EXIT

# The build folder: copies of the wrapper go.mod/go.sum, so that no Go command writes into the tree.
src="$(mktemp -d "$cache/src.tmp.XXXXXX")"
cp "$mod/go.mod" "$mod/go.sum" "$src/"

log "downloading modules"
tick "downloading modules"
t0=$SECONDS
(cd "$src" && proxy_retry go mod download "$upstream") \
  || fail "go mod download of $upstream failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
upstream_dir="$(cd "$src" && go list -m -f '{{.Dir}}' "$upstream")" || fail "cannot find $upstream in the module cache"
release="$(cat "$upstream_dir/VERSION")" || fail "no VERSION file in $upstream_dir"
# Downloads only the modules that provide packages of the program with these tags (not the whole
# module graph, which has every service discovery's SDK).
(cd "$src" && proxy_retry go list -tags "$build_tags" -deps "$upstream/cmd/prometheus" >/dev/null) \
  || fail "downloading Prometheus's modules failed"
untick
log "sources ready in $((SECONDS - t0))s"

tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
chmod 755 "$tmp"
log "building prometheus $release"
tick "building prometheus"
t0=$SECONDS
# Flags as in upstream's .promu.yml, but the tags (netgo is implied by CGO_ENABLED=0).
V=github.com/prometheus/common/version
(cd "$src" && proxy_retry go build -p "$jobs" -trimpath -tags "$build_tags" \
  -ldflags "-s -w -X $V.Version=$release -X $V.Revision=$version -X $V.Branch=rayshift-tests -X $V.BuildUser=rayshift -X $V.BuildDate=19700101-00:00:00" \
  -o "$tmp/prometheus" "$upstream/cmd/prometheus") || fail "go build of prometheus failed (see the compiler output above)"
untick
log "built prometheus in $((SECONDS - t0))s ($(du -h "$tmp/prometheus" | cut -f1))"

"$tmp/prometheus" --version >&2 || fail "the built prometheus does not run"
printf 'prometheus %s (%s)\n' "$release" "$version" >"$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
tmp=
log "done in $((SECONDS - start))s"
echo "$bin"
