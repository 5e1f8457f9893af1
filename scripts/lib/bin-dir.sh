# Shared by the bin-dir scripts (scripts/{controlplane,pulumi}-bin-dir.sh, test/prometheus/bin-dir.sh),
# which print the cache folder of a tool built from a pinned Go module. Source it, then call
#   bin_dir_start NAME GO_MOD MODULE ENV_VAR "$@"
# which sets `version` to MODULE's version pinned in GO_MOD and ends the script early for
# `--version` (prints it) and when ENV_VAR names a prebuilt folder (prints that); then print the
# folder with `bin_dir_print TOOL KEY`, KEY a hash of what the build depends on.
# shellcheck shell=bash

bin_dir_start() {
  local name=$1 gomod=$2 module=$3 env_var=$4
  shift 4
  local pattern="${module//./\\.}"
  version="$(sed -n "s#^[[:space:]]*${pattern} \(v[0-9][^[:space:]]*\).*\$#\1#p" "$gomod" | head -n 1)"
  if [[ -z "$version" ]]; then
    echo "$name: no '$module vX.Y.Z' requirement in $gomod" >&2
    exit 1
  fi
  if [[ "${1:-}" == "--version" ]]; then
    echo "$version"
    exit 0
  fi
  if [[ -n "${!env_var:-}" ]]; then
    echo "${!env_var}"
    exit 0
  fi
}

bin_dir_print() { # TOOL KEY
  echo "${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/$1/$version-$2/bin"
}
