#!/usr/bin/env bash
# Builds the integration tests' control plane (upstream kube-apiserver and etcd) from the Go module in
# test/controlplane into a cache outside the source tree (see controlplane-bin-dir.sh for the folder).
# A warm cache skips the build. Progress goes to stderr; the last line on stdout is the bin folder.
#
# A cold build downloads several hundred MB of modules and compiles for 10-20 min on 2 cores.
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_CONTROLPLANE_BIN (use prebuilt binaries from
# there: this script then only checks them), GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/test/controlplane"
programs=(etcd kube-apiserver)
start=$SECONDS

log() { printf '[controlplane %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

bin="$(bash "$root/scripts/controlplane-bin-dir.sh")" || fail "cannot compute the bin folder"
version="$(bash "$root/scripts/controlplane-bin-dir.sh" --version)"

have_all() {
  local p
  for p in "${programs[@]}"; do [[ -x "$1/$p" ]] || return 1; done
}

if [[ -n "${RAYSHIFT_CONTROLPLANE_BIN:-}" ]]; then
  have_all "$bin" || fail "RAYSHIFT_CONTROLPLANE_BIN=$bin lacks an executable ${programs[*]}; unset it to build into the cache"
  log "using prebuilt binaries from RAYSHIFT_CONTROLPLANE_BIN (nothing to build)"
  echo "$bin"
  exit 0
fi

if have_all "$bin" && [[ -f "$bin/.complete" ]]; then
  log "cache is warm, skipping the build: $bin"
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || fail "'go' is not on PATH; a Go toolchain that satisfies the 'go' line of $mod/go.mod is needed"

cache="$(dirname "$bin")"
mkdir -p "$cache"
# One build per cache entry at a time; a second caller waits and then finds the cache warm.
exec 9>"$cache/.lock"
if ! flock -n 9; then
  log "another build of $cache is running; waiting for it"
  flock 9
  if have_all "$bin" && [[ -f "$bin/.complete" ]]; then
    log "cache is warm, skipping the build: $bin"
    echo "$bin"
    exit 0
  fi
fi

export GOTOOLCHAIN=local   # fail on a too-new 'go' line instead of downloading a toolchain
export CGO_ENABLED=0       # static binaries, like upstream release builds
export GOFLAGS="${GOFLAGS:-} -mod=readonly"  # go.mod/go.sum are pinned; never rewrite them during a build
jobs="${RAYSHIFT_BUILD_JOBS:-2}"

log "Kubernetes $version, $(go version | cut -d' ' -f3-), -p $jobs, into $bin"

# Prints the elapsed time every minute while a long step runs.
ticker_pid=
tick() {
  local what=$1 t0=$SECONDS
  (
    s=
    trap '[[ -n "$s" ]] && kill "$s" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 60 & s=$!
      wait "$s"
      log "  still $what ($((SECONDS - t0))s in this step)"
    done
  ) &
  ticker_pid=$!
}
untick() {
  if [[ -n "$ticker_pid" ]]; then
    kill "$ticker_pid" 2>/dev/null || true
    wait "$ticker_pid" 2>/dev/null || true
  fi
  ticker_pid=
}
tmp=
trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"' EXIT

log "downloading modules (go mod download)"
tick "downloading modules"
t0=$SECONDS
(cd "$mod" && go mod download) || fail "go mod download failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
untick
log "modules ready in $((SECONDS - t0))s"

minor="${version#v1.}"; minor="${minor%%.*}"
P=k8s.io/component-base/version
ldflags="-s -w -X $P.gitVersion=$version -X $P.gitMajor=1 -X $P.gitMinor=$minor -X $P.gitTreeState=clean"
ldflags="$ldflags -X $P.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=$version"

tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
chmod 755 "$tmp"
n=0
for p in "${programs[@]}"; do
  n=$((n + 1))
  log "building $p ($n/${#programs[@]})"
  tick "building $p"
  t0=$SECONDS
  (cd "$mod" && go build -p "$jobs" -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldflags" \
    -o "$tmp/$p" "./cmd/$p") || fail "go build of $p failed (see the compiler output above)"
  untick
  log "built $p in $((SECONDS - t0))s ($(du -h "$tmp/$p" | cut -f1))"
done

"$tmp/kube-apiserver" --version >&2 || fail "the built kube-apiserver does not run"
"$tmp/etcd" --version | head -n 1 >&2 || fail "the built etcd does not run"
touch "$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
tmp=
log "done in $((SECONDS - start))s"
echo "$bin"
