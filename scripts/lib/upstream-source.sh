# Shared by scripts/build-cluster.sh and scripts/build-pulumi.sh, which build programs whose Go
# modules the proxy refuses (403) from upstream source trees (../shared/upstream/README.md). Source
# it after cached-go-build.sh (it uses log and fail); $RAYSHIFT_UPSTREAM overrides ../shared/upstream.
# shellcheck shell=bash

upstream_root="${RAYSHIFT_UPSTREAM:-$root/../shared/upstream}"

# upstream_tree PROJECT TAG REPO MARKER [PATH...]: prints the source tree of PROJECT at TAG, the
# shared one ($upstream_root/PROJECT/TAG) when it holds the file MARKER, else a shallow clone of
# REPO at TAG kept in the cache (upstream/PROJECT/TAG), made once; with PATHs, a sparse clone of
# only those paths (git sparse-checkout patterns).
upstream_tree() {
  local project=$1 version=$2 repo=$3 marker=$4
  shift 4
  local shared="$upstream_root/$project/$version" clone="${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/upstream/$project/$version"
  if [[ -f "$shared/$marker" ]]; then
    log "source: $shared"
  elif [[ -f "$clone/.complete" ]]; then
    log "source: $clone (cloned earlier)"
    shared=$clone
  else
    log "source: no $shared; cloning $repo at $version into $clone"
    command -v git >/dev/null || fail "neither $shared nor git to clone $repo"
    rm -rf "$clone.tmp"
    mkdir -p "$(dirname "$clone")"
    if (($# > 0)); then
      git clone --quiet --depth 1 --filter=blob:none --sparse --branch "$version" "$repo" "$clone.tmp" >&2 \
        && (cd "$clone.tmp" && git sparse-checkout set --no-cone "$@") >&2 \
        || fail "git clone of $repo at $version failed"
    else
      git clone --quiet --depth 1 --branch "$version" "$repo" "$clone.tmp" >&2 || fail "git clone of $repo at $version failed"
    fi
    touch "$clone.tmp/.complete"
    rm -rf "$clone"
    mv "$clone.tmp" "$clone"
    shared=$clone
  fi
  [[ -f "$shared/$marker" ]] || fail "no $shared/$marker"
  echo "$shared"
}
