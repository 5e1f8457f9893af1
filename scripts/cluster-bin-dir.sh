#!/usr/bin/env bash
# Prints the folder that holds (or will hold) one controller of the integration tests' cluster, built
# by build-cluster.sh. TOOL is one of:
#   kwok      kwok v0.8.0 (fake Nodes and pod lifecycles)              program: kwok
#   rbg       RoleBasedGroup controller v0.7.0 (sigs.k8s.io/rbgs)      program: rbgs
#   rbg-v06   RoleBasedGroup controller v0.6.0 (v1alpha1 groups)       program: rbgs
#   rbg-v08   RoleBasedGroup controller v0.8.0-alpha.5 (its webhook)   program: rbgs
#   kuberay   KubeRay operator v1.7.0 (ray-operator)                   program: kuberay-operator
#
#   cluster-bin-dir.sh TOOL              the folder:
#     $RAYSHIFT_<TOOL>_BIN (RAYSHIFT_KWOK_BIN, RAYSHIFT_RBG_BIN, RAYSHIFT_RBG_V06_BIN, …) when set: prebuilt
#     ${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/<tool>/<version>-<key>/bin                    otherwise
#   cluster-bin-dir.sh --version TOOL    the pinned release tag
#   cluster-bin-dir.sh --program TOOL    the executable's name in the folder
#
# The versions are pinned here and nowhere else. <key> hashes the tool, its version and RECIPE; bump
# RECIPE when the build steps in build-cluster.sh change. Needs only bash and sha256sum (no Go).
set -euo pipefail

RECIPE=r1

mode=folder
case "${1:-}" in
  --version) mode=version; shift ;;
  --program) mode=program; shift ;;
esac
tool="${1:-}"
case "$tool" in
  kwok) version=v0.8.0 program=kwok ;;
  rbg) version=v0.7.0 program=rbgs ;;
  rbg-v06) version=v0.6.0 program=rbgs ;;
  rbg-v08) version=v0.8.0-alpha.5 program=rbgs ;;
  kuberay) version=v1.7.0 program=kuberay-operator ;;
  *)
    echo "cluster-bin-dir: usage: cluster-bin-dir.sh [--version|--program] kwok|rbg|rbg-v06|rbg-v08|kuberay (got '${tool}')" >&2
    exit 2
    ;;
esac

case "$mode" in
  version) echo "$version"; exit 0 ;;
  program) echo "$program"; exit 0 ;;
esac

prebuilt_var="RAYSHIFT_$(tr '[:lower:]-' '[:upper:]_' <<<"$tool")_BIN"
if [[ -n "${!prebuilt_var:-}" ]]; then
  echo "${!prebuilt_var}"
  exit 0
fi
key="$(printf '%s\n' "$RECIPE" "$tool" "$version" | sha256sum | cut -c1-12)"
echo "${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/$tool/$version-$key/bin"
