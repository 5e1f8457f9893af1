#!/usr/bin/env bash
# Builds the controllers of the integration tests' cluster into a cache outside the source tree (see
# cluster-bin-dir.sh for the folders and the pinned versions), one tool after the other (never two Go
# builds at once; they share GOCACHE):
#   kwok      sigs.k8s.io/kwok/cmd/kwok, `go install`ed from the Go module proxy (its own go.sum pins it)
#   rbg       ./cmd/rbgs of sigs.k8s.io/rbgs (RoleBasedGroup controller v0.7.0)
#   rbg-v06   the same, v0.6.0; rbg-v08 the same, v0.8.0-alpha.5 (the three share GOCACHE/GOMODCACHE)
#   kuberay   the main package of github.com/ray-project/kuberay/ray-operator (KubeRay's operator)
# The Go module proxy refuses the rbg and kuberay module versions themselves (403), so their source
# comes from $RAYSHIFT_UPSTREAM (default ../shared/upstream, see its README.md) when it has them, else
# from a shallow clone of the release tag kept under the cache (upstream/<tool>/<tag>). The tree is
# copied into a build folder first, so the build never writes into the shared tree; their
# dependencies come from the Go module proxy, checked against the tree's go.sum.
#
# Usage: build-cluster.sh [kwok|rbg|rbg-v06|rbg-v08|kuberay ...] (default: kwok rbg kuberay, in that order;
# rbg-v06 and rbg-v08 are built on request: .ci/run builds both for cluster-rbg-analysis). A warm cache
# skips a tool. Progress goes to stderr; stdout gets one line per tool, its bin folder.
# Cold build times: docs/test-cluster.md (Builds).
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_{KWOK,RBG,KUBERAY}_BIN (prebuilt binaries: the
# tool is then only checked), RAYSHIFT_UPSTREAM, GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS
# (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(kwok rbg kuberay)

# The upstream repository and the module's folder in it, per tool built from source.
declare -A repo=([rbg]=https://github.com/sgl-project/rbg [kuberay]=https://github.com/ray-project/kuberay)
declare -A subdir=([rbg]=. [kuberay]=ray-operator)
# The upstream project of each tool (the RBG releases are one project).
declare -A project=([rbg]=rbg [rbg-v06]=rbg [rbg-v08]=rbg [kuberay]=kuberay)

# Prints the source folder of $tool at $version: the shared tree, else a clone kept in the cache.
source_tree() {
  local name=${project[$tool]} tree
  tree="$(upstream_tree "$name" "$version" "${repo[$name]}" "${subdir[$name]}/go.mod")" || exit 1
  echo "$tree/${subdir[$name]}"
}

# Builds one tool into $bin, in a subshell so that cached-go-build.sh's early exit (warm cache) ends
# only this tool.
build_one() (
  tool=$1
  tag=$tool
  programs=("$(bash "$root/scripts/cluster-bin-dir.sh" --program "$tool")")
  source "$root/scripts/lib/cached-go-build.sh"
  source "$root/scripts/lib/upstream-source.sh"
  bin="$(bash "$root/scripts/cluster-bin-dir.sh" "$tool")" || fail "cannot compute the bin folder"
  version="$(bash "$root/scripts/cluster-bin-dir.sh" --version "$tool")"
  prebuilt_var="RAYSHIFT_$(tr '[:lower:]-' '[:upper:]_' <<<"$tool")_BIN"
  use_cache_or_lock "$prebuilt_var" "the $tool $version go.mod"
  log "$tool $version, $(go version | cut -d' ' -f3-), -p $jobs, into $bin"

  tmp=
  src=
  trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"; [[ -n "$src" ]] && rm -rf "$src"' EXIT
  tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
  chmod 755 "$tmp"
  out="$tmp/${programs[0]}"
  t0=$SECONDS
  tick "building $tool (downloading modules, then compiling)"
  case "$tool" in
    kwok)
      # `go install pkg@version` builds with kwok's own go.mod/go.sum (no replace lines there).
      GOBIN="$tmp" proxy_retry go install -p "$jobs" -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$version" \
        || fail "go install of kwok $version failed (see the output above; is the Go module proxy reachable?)"
      ;;
    rbg | rbg-v06 | rbg-v08 | kuberay)
      from="$(source_tree)"
      src="$(mktemp -d "$cache/src.tmp.XXXXXX")"
      cp -r "$from/." "$src/"
      chmod -R u+w "$src"
      if [[ $tool == rbg* ]]; then
        # The shared tree has no vendor/, and upstream's go.sum lacks entries a build needs:
        # -mod=mod adds them to the copy (checked against sum.golang.org), versions stay as pinned.
        V=sigs.k8s.io/rbgs/version
        (cd "$src" && GOFLAGS="${GOFLAGS/-mod=readonly/} -mod=mod" proxy_retry go build -p "$jobs" -trimpath \
          -ldflags "-s -w -X $V.Version=$version -X $V.BuildDate=1970-01-01T00:00:00Z" -o "$out" ./cmd/rbgs) \
          || fail "go build of rbgs failed (see the compiler output above)"
      else
        (cd "$src" && proxy_retry go build -p "$jobs" -trimpath -ldflags "-s -w" -o "$out" .) \
          || fail "go build of kuberay-operator failed (see the compiler output above)"
      fi
      ;;
  esac
  untick
  log "built ${programs[0]} in $((SECONDS - t0))s ($(du -h "$out" | cut -f1))"
  "$out" --help >/dev/null 2>&1 || fail "the built ${programs[0]} does not run (--help failed)"
  printf '%s %s\n' "$tool" "$version" >"$tmp/.complete"
  rm -rf "$bin"
  mv "$tmp" "$bin"
  tmp=
  log "done in $((SECONDS - start))s"
  echo "$bin"
)

for t in "${tools[@]}"; do
  case "$t" in
    kwok | rbg | rbg-v06 | rbg-v08 | kuberay) build_one "$t" ;;
    *) echo "build-cluster: unknown tool '$t' (kwok, rbg, rbg-v06, rbg-v08, kuberay)" >&2; exit 2 ;;
  esac
done
