# Shared by the bin-dir scripts (scripts/{controlplane,pulumi,kubectl}-bin-dir.sh,
# test/{prometheus,helm,traefik}/bin-dir.sh), which print the folder of a pinned tool. Source it, then
# for a tool built from a pinned Go module call
#   bin_dir_start NAME GO_MOD MODULE ENV_VAR "$@"
# which sets `version` to MODULE's version pinned in GO_MOD and answers early (`bin_dir_answer`),
# then print the cache folder with `bin_dir_print TOOL KEY`, KEY a hash of what the build depends on.
# A tool pinned otherwise sets `version` itself and calls `bin_dir_answer ENV_VAR "$@"`.
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
  bin_dir_answer "$env_var" "$@"
}

# bin_dir_answer ENV_VAR "$@": ends the script for `--version` (prints `version`) and when ENV_VAR
# names a prebuilt folder (prints that).
bin_dir_answer() {
  local env_var=$1
  shift
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
