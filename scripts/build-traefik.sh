#!/usr/bin/env bash
# Builds the end-to-end tests' data plane, Traefik v3 (Gateway API provider), from the Go wrapper
# module in test/traefik into a cache outside the source tree (see test/traefik/bin-dir.sh for the
# folder). A warm cache skips the build. Progress goes to stderr; the last line on stdout is the bin
# folder, which then holds `traefik`.
#
# Upstream's main package cannot be built with `go install` (its go.mod has `replace` lines), so
# cmd/traefik/*.go is copied from the module cache into a build folder next to copies of the wrapper
# go.mod/go.sum and the ext stub module, inside the cache, and built there; no upstream source is
# kept in the repository. A cold build downloads ~1 GB of modules and compiles for 10-30 min on 2 cores.
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_TRAEFIK_BIN (use a prebuilt binary from there:
# this script then only checks it), GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/traefik"
programs=(traefik)
tag=traefik
source "$root/scripts/lib/cached-go-build.sh"

bin="$(bash "$mod/bin-dir.sh")" || fail "cannot compute the bin folder"
version="$(bash "$mod/bin-dir.sh" --version)"

use_cache_or_lock RAYSHIFT_TRAEFIK_BIN "$mod/go.mod"
upstream=github.com/traefik/traefik/v3

log "Traefik $version, $(go version | cut -d' ' -f3-), -p $jobs, into $bin"

tmp=
src=
trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"; [[ -n "$src" ]] && rm -rf "$src"' EXIT

# The build folder: copies of the wrapper go.mod/go.sum and the ext stub, plus upstream's main package.
src="$(mktemp -d "$cache/src.tmp.XXXXXX")"
cp "$mod/go.mod" "$mod/go.sum" "$src/"
cp -r "$mod/ext" "$src/ext"

log "downloading modules"
tick "downloading modules"
t0=$SECONDS
(cd "$src" && proxy_retry go mod download "$upstream") \
  || fail "go mod download of $upstream failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
upstream_dir="$(cd "$src" && go list -m -f '{{.Dir}}' "$upstream")" || fail "cannot find $upstream in the module cache"
mkdir -p "$src/cmd/traefik"
for f in "$upstream_dir"/cmd/traefik/*.go; do
  [[ "$f" == *_test.go ]] && continue
  cp "$f" "$src/cmd/traefik/"
done
chmod -R u+w "$src"
# Downloads only the modules that provide packages of the program (not the whole module graph).
(cd "$src" && proxy_retry go list -deps ./cmd/traefik >/dev/null) || fail "downloading Traefik's modules failed"
untick
log "sources ready in $((SECONDS - t0))s"

tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
chmod 755 "$tmp"
log "building traefik"
tick "building traefik"
t0=$SECONDS
# Flags as in upstream's Makefile (`binary` target).
V=$upstream/pkg/version
(cd "$src" && proxy_retry go build -p "$jobs" -trimpath \
  -ldflags "-s -w -X $V.Version=$version -X $V.Codename=rayshift-e2e -X $V.BuildDate=1970-01-01T00:00:00Z" \
  -o "$tmp/traefik" ./cmd/traefik) || fail "go build of traefik failed (see the compiler output above)"
untick
log "built traefik in $((SECONDS - t0))s ($(du -h "$tmp/traefik" | cut -f1))"

"$tmp/traefik" version >&2 || fail "the built traefik does not run"
printf 'traefik %s\n' "$version" >"$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
tmp=
log "done in $((SECONDS - start))s"
echo "$bin"
