#!/usr/bin/env bash
# Prints the folder that holds (or will hold) the Pulumi toolchain for integration tests: the CLI,
# the Kubernetes provider plugin, the dynamic-provider shim and the language hosts (see build-pulumi.sh).
#
#   $RAYSHIFT_PULUMI_BIN                                  when set: prebuilt binaries, used as they are
#   ${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/pulumi/<CLI version>-<key>/bin   otherwise
#
# <key> is a hash of test/pulumi-toolchain/*/go.{mod,sum} and RECIPE below, so any change of the
# pinned modules gets a fresh folder. Bump RECIPE when the build steps in build-pulumi.sh change.
# Needs only bash, sed and sha256sum (no Go), so it is cheap to call.
# `--version` prints the Pulumi CLI version instead of the folder.
set -euo pipefail

RECIPE=r2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mods="$root/test/pulumi-toolchain"

source "$root/scripts/lib/bin-dir.sh"
bin_dir_start "pulumi-bin-dir" "$mods/cli/go.mod" github.com/pulumi/pulumi/pkg/v3 RAYSHIFT_PULUMI_BIN "$@"

key="$(
  cd "$mods"
  { echo "$RECIPE"; for f in cli/go.mod cli/go.sum kubernetes/go.mod kubernetes/go.sum; do echo "$f"; cat "$f"; done; } \
    | sha256sum | cut -c1-12
)"
bin_dir_print pulumi "$key"
