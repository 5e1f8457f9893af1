#!/usr/bin/env bash
# Copies this checkout's tracked files, as they are in the work tree, into DEST (created), with
# node_modules linked: a copy whose `npm pack` (prepack builds build/ and dist-ui/) does not rewrite
# the checkout's build/ under suites that read it meanwhile (.ci/run runs them side by side).
#
#   bash scripts/copy-tracked.sh DEST
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest=$1
mkdir -p "$dest"
(cd "$root" && git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$dest"
ln -s "$root/node_modules" "$dest/node_modules"
