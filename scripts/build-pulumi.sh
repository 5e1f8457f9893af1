#!/usr/bin/env bash
# Builds the Pulumi toolchain that integration tests drive through the Automation API, from the Go
# wrapper modules in test/pulumi-toolchain (see its README.md), into a cache outside the source tree
# (see pulumi-bin-dir.sh for the folder). A warm cache skips the build. Progress goes to stderr; the
# last line on stdout is the bin folder, which then holds:
#   pulumi                          the CLI (github.com/pulumi/pulumi/pkg/v3, cmd/pulumi)
#   pulumi-resource-kubernetes      the Kubernetes provider plugin (pulumi-kubernetes/provider/v4)
#   pulumi-resource-pulumi-nodejs   the dynamic-provider launcher script of the CLI distribution
#                                   (sdk/nodejs/dist in github.com/pulumi/pulumi/sdk/v3)
#   pulumi-language-nodejs          the language hosts that `pulumi preview`/`up` start for a project
#   pulumi-language-python          folder (Pulumi.yaml + index.ts or __main__.py), and the Python
#   pulumi-language-python-exec     host's exec shim (a Python script it runs from its own folder)
# The Go module proxy refuses the language hosts' modules (403), so their source comes from
# $RAYSHIFT_UPSTREAM/pulumi/<CLI version> (default ../shared/upstream, see its README.md) when it has
# them, else from a sparse shallow clone of the release tag kept under the cache (upstream/pulumi/<tag>),
# as build-cluster.sh does for KubeRay and RBG.
#
# The upstream main packages cannot be built with `go install` (their go.mod files have `replace`
# lines), so they are copied from the module cache into a build folder next to copies of the wrapper
# go.mod/go.sum, inside the cache, and built there. A cold build compiles for 30-50 min on 2 cores
# (the provider alone 20-35 min: it compiles the generated Go SDK of every Kubernetes API group);
# the language hosts, built in the CLI's module, compile only their own 16 packages.
# Environment: RAYSHIFT_CACHE (cache root), RAYSHIFT_PULUMI_BIN (use prebuilt binaries from there:
# this script then only checks them), GOMODCACHE/GOCACHE as usual, RAYSHIFT_BUILD_JOBS (-p, default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mods="$root/test/pulumi-toolchain"
programs=(pulumi pulumi-resource-kubernetes pulumi-resource-pulumi-nodejs pulumi-language-nodejs pulumi-language-python pulumi-language-python-exec)
hosts=(nodejs/cmd/pulumi-language-nodejs python/cmd/pulumi-language-python)
tag=pulumi
source "$root/scripts/lib/cached-go-build.sh"
source "$root/scripts/lib/upstream-source.sh"

bin="$(bash "$root/scripts/pulumi-bin-dir.sh")" || fail "cannot compute the bin folder"
version="$(bash "$root/scripts/pulumi-bin-dir.sh" --version)"

use_cache_or_lock RAYSHIFT_PULUMI_BIN "$mods/*/go.mod"

# The version of module $2 that the wrapper module in folder $1 requires.
required_version() {
  (cd "$1" && go list -m -f '{{.Version}}' "$2") || fail "cannot resolve $2 in $1/go.mod"
}
# The module-cache folder of module $2 as required by the wrapper module in folder $1.
module_dir() {
  (cd "$1" && go list -m -f '{{.Dir}}' "$2") || fail "cannot find $2 in the module cache"
}

log "Pulumi $version, $(go version | cut -d' ' -f3-), -p $jobs, into $bin"

tmp=
src=
trap 'untick; [[ -n "$tmp" ]] && rm -rf "$tmp"; [[ -n "$src" ]] && rm -rf "$src"' EXIT

# Build folders: copies of the wrapper go.mod/go.sum, next to which the upstream main packages go.
src="$(mktemp -d "$cache/src.tmp.XXXXXX")"
for w in cli kubernetes; do
  mkdir -p "$src/$w"
  cp "$mods/$w/go.mod" "$mods/$w/go.sum" "$src/$w/"
done

# Copies the non-test Go files (and, with a third argument, the JSON files) of an upstream main package.
copy_main() {
  local from=$1 to=$2 with_json=${3:-} f
  mkdir -p "$to"
  for f in "$from"/*.go ${with_json:+"$from"/*.json}; do
    [[ "$f" == *_test.go ]] && continue
    cp "$f" "$to/"
  done
  chmod -R u+w "$to"
}

log "downloading modules and generating the provider schema"
tick "downloading modules"
t0=$SECONDS
cli_module=github.com/pulumi/pulumi/pkg/v3
k8s_module=github.com/pulumi/pulumi-kubernetes/provider/v4
(cd "$src/cli" && proxy_retry go mod download "$cli_module" github.com/pulumi/pulumi/sdk/v3) \
  || fail "go mod download of $cli_module failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
(cd "$src/kubernetes" && proxy_retry go mod download "$k8s_module") \
  || fail "go mod download of $k8s_module failed (is the Go module proxy reachable? GOPROXY=$(go env GOPROXY))"
cli_version="$(required_version "$src/cli" "$cli_module")"
copy_main "$(module_dir "$src/cli" "$cli_module")/cmd/pulumi" "$src/cli/cmd/pulumi"
k8s_version="$(required_version "$src/kubernetes" "$k8s_module")"
k8s_main="$src/kubernetes/cmd/pulumi-resource-kubernetes"
copy_main "$(module_dir "$src/kubernetes" "$k8s_module")/cmd/pulumi-resource-kubernetes" "$k8s_main" json
# main.go embeds schema-embed.json and terraform-mapping-embed.json, which upstream generates
# (and does not ship): generate.go stamps the version into the schema and compacts both files.
log "  generating the embedded schema of $k8s_module $k8s_version"
(cd "$k8s_main" && VERSION="${k8s_version#v}" proxy_retry go run -trimpath generate.go) || fail "go run generate.go for the Kubernetes provider failed"
# Downloads only the modules that provide packages of the two programs: the full module graph
# names versions that the proxy does not serve.
(cd "$src/cli" && proxy_retry go list -deps ./cmd/pulumi >/dev/null) || fail "downloading the CLI's modules failed"
(cd "$src/kubernetes" && proxy_retry go list -deps ./cmd/pulumi-resource-kubernetes >/dev/null) \
  || fail "downloading the Kubernetes provider's modules failed"

# The language hosts' source (below sdk/ of the tag): the shared tree, else a sparse clone of their
# folders. Their go.mod files replace pkg/v3 and sdk/v3 with the repository's own folders, that is
# the CLI's version: their main packages are built in the CLI's wrapper module like cmd/pulumi, so
# they link the packages the CLI compiled (834 of the 850 they import, the standard library
# included; 16 are their own). Built in the upstream layout, with pkg and sdk copied beside them,
# they compiled all of those again under other import paths (pulumi-language-nodejs 877 s cold).
hosts_from="$(upstream_tree pulumi "$cli_version" https://github.com/pulumi/pulumi "sdk/${hosts[1]}/go.mod" \
  "${hosts[@]/#//sdk/}" /sdk/python/cmd/pulumi-language-python-exec)/sdk"
[[ -f "$hosts_from/${hosts[0]}/go.mod" ]] || fail "no $hosts_from/${hosts[0]}/go.mod"
for h in "${hosts[@]}"; do
  copy_main "$hosts_from/$h" "$src/cli/cmd/${h##*/}"
done
untick
log "sources ready in $((SECONDS - t0))s"

tmp="$(mktemp -d "$cache/bin.tmp.XXXXXX")"
chmod 755 "$tmp"

# build NAME WRAPPER PACKAGE LDFLAGS [TAGS]
build() {
  local name=$1 wrapper=$2 pkg=$3 ldflags=$4 tags=${5:-} t0=$SECONDS
  log "building $name"
  tick "building $name"
  (cd "$src/$wrapper" && proxy_retry go build -p "$jobs" -trimpath ${tags:+-tags "$tags"} -ldflags "$ldflags" -o "$tmp/$name" "$pkg") \
    || fail "go build of $name failed (see the compiler output above)"
  untick
  log "built $name in $((SECONDS - t0))s ($(du -h "$tmp/$name" | cut -f1))"
}
# Flags as in upstream release builds (pulumi .goreleaser.yml; pulumi-kubernetes Makefile).
build pulumi cli ./cmd/pulumi \
  "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$cli_version" osusergo,grpcnotrace
build pulumi-resource-kubernetes kubernetes ./cmd/pulumi-resource-kubernetes \
  "-s -w -X $k8s_module/pkg/version.Version=${k8s_version#v}"

# The same tags as the CLI, so that the packages they share (gRPC's among them) are the CLI's builds.
for h in "${hosts[@]}"; do
  build "${h##*/}" cli "./cmd/${h##*/}" "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$cli_version" osusergo,grpcnotrace
done
cp "$hosts_from/python/cmd/pulumi-language-python-exec" "$tmp/"
chmod 755 "$tmp/pulumi-language-python-exec"

# The dynamic-provider launcher ships as a script in the CLI distribution; it runs
# `node <@pulumi/pulumi>/cmd/dynamic-provider`, resolving @pulumi/pulumi from its working folder
# (the program's folder) or NODE_PATH.
launcher="$(module_dir "$src/cli" github.com/pulumi/pulumi/sdk/v3)/nodejs/dist/pulumi-resource-pulumi-nodejs"
[[ -f "$launcher" ]] || fail "no $launcher in the sdk/v3 module"
cp "$launcher" "$tmp/pulumi-resource-pulumi-nodejs"
chmod 755 "$tmp/pulumi-resource-pulumi-nodejs"

"$tmp/pulumi" version >&2 || fail "the built pulumi does not run"
printf 'pulumi %s\n%s %s\n' "$cli_version" "$k8s_module" "$k8s_version" >"$tmp/.complete"
rm -rf "$bin"
mv "$tmp" "$bin"
tmp=
log "done in $((SECONDS - start))s"
echo "$bin"
