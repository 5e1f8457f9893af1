# Shared by scripts/build-{controlplane,pulumi,traefik,prometheus}.sh, which build Go programs from the
# project's wrapper modules into a cache folder keyed by version. Source it after setting:
#   tag       the log prefix, e.g. "traefik"
#   bin       the cache's bin folder (from the tool's bin-dir script)
#   programs  the executables that must be in $bin (array)
# It defines log, fail, have_all, tick/untick (a progress line every minute of a long step),
# use_cache_or_lock and k8s_ldflags, and exports the build settings every build uses; with
# go-proxy-retry.sh, proxy_retry for the go commands that fetch modules.
# shellcheck shell=bash
source "$(dirname "${BASH_SOURCE[0]}")/go-proxy-retry.sh"

start=$SECONDS
log() { printf '[%s %4ds] %s\n' "$tag" "$((SECONDS - start))" "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

# True when folder $1 holds every program.
have_all() {
  local p
  for p in "${programs[@]}"; do [[ -x "$1/$p" ]] || return 1; done
}

# Exits printing $bin when prebuilt binaries are named by the variable called $1 or the cache is
# warm; otherwise takes the cache's build lock (a second caller waits, then finds the cache warm)
# and returns, with $cache set and the build settings exported. $2 names the go.mod files for the
# message when Go is missing.
use_cache_or_lock() {
  local prebuilt_var=$1 gomods=$2
  if [[ -n "${!prebuilt_var:-}" ]]; then
    have_all "$bin" || fail "$prebuilt_var=$bin lacks an executable ${programs[*]}; unset it to build into the cache"
    log "using prebuilt binaries from $prebuilt_var (nothing to build)"
    echo "$bin"
    exit 0
  fi
  if have_all "$bin" && [[ -f "$bin/.complete" ]]; then
    log "cache is warm, skipping the build: $bin"
    echo "$bin"
    exit 0
  fi
  command -v go >/dev/null || fail "'go' is not on PATH; a Go toolchain that satisfies the 'go' line of $gomods is needed"
  cache="$(dirname "$bin")"
  mkdir -p "$cache"
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
  # The compiler and linker collect garbage less often: measured on 2 December 2026 (2 cores, an
  # empty GOCACHE each time), CPU of `go build -p 2` fell 14-20 % at GOGC=400 (k8s.io/api/...: 101
  # and 87 s at 100, 79 and 75 s at 400; std and cmd: 222 and 236 s, 190 and 205 s), the largest
  # compiler's memory rose from 0.5 to 0.76 GB. GOMEMLIMIT caps a process where a link would grow
  # past it. Neither is part of a build's cache key: a warm GOCACHE stays warm.
  export GOGC="${GOGC:-400}" GOMEMLIMIT="${GOMEMLIMIT:-4GiB}"
  jobs="${RAYSHIFT_BUILD_JOBS:-2}"
}

# Prints the elapsed time every minute while a long step runs; untick stops it.
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

# The -ldflags of a Kubernetes program built from modules: stripped, stamped with release $1 (vX.Y.Z)
# as upstream's release builds stamp it, so `--version` names the release.
k8s_ldflags() {
  local release=$1 minor P=k8s.io/component-base/version
  minor="${release#v1.}"; minor="${minor%%.*}"
  printf '%s' "-s -w -X $P.gitVersion=$release -X $P.gitMajor=1 -X $P.gitMinor=$minor -X $P.gitTreeState=clean" \
    " -X $P.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=$release"
}
