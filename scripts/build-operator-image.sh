#!/usr/bin/env bash
# Builds the rayshift operator image (it runs `rayshift operator` and `rayshift api-server`) with
# podman, from registries only: no base image is pulled.
#
#   bash scripts/build-operator-image.sh
#
# - the base is Debian's packages, unpacked by `mmdebstrap --variant=extract` (glibc, libstdc++,
#   libgcc, base-files, tzdata, ca-certificates: no shell, no package manager), cached as a tar;
# - Node is the binary of the npm registry's node-linux-<arch> package that `npm ci` installed for
#   the workspace tools/node (the Node 24 the tests run on);
# - the app is this checkout's `npm pack` tarball installed with `npm install --omit=dev` beside the
#   peers the operator and the API server load, at the lockfile's versions
#   (scripts/operator-image-app.cjs, as in operator/Dockerfile);
# - `podman import` makes the image from that root filesystem, running as uid/gid 1000, labelled
#   with the package version: localhost/rayshift/rayshift:<version> and :<inputs key>.
#
# The image is cached by a key over its inputs (the packed sources, the lockfile, these scripts, the
# Debian package list): a warm cache skips everything. Needs root, podman, runc and mmdebstrap
# (Debian's packages: `apt-get install podman runc catatonit mmdebstrap`; catatonit is `podman run --init`'s), and a prior `npm ci`. Podman runs
# with containers.conf settings that these machines need (runc, since crun refuses their hybrid cgroup
# layout; container ulimits below the host's hard limits); the script prints the CONTAINERS_CONF to
# run the image with, e.g.
#   CONTAINERS_CONF=… podman run --rm --init --network host -v ~/.kube:/kube:ro -e KUBECONFIG=/kube/config IMAGE operator
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${RAYSHIFT_CACHE:-$HOME/.cache/rayshift}/operator-image"
start=$SECONDS
log() { printf '[operator-image %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

for tool in podman runc mmdebstrap; do
  command -v "$tool" >/dev/null || fail "$tool is missing: apt-get install podman runc catatonit mmdebstrap"
done
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) fail "no node-linux package for $(uname -m)" ;;
esac
node_bin="$root/node_modules/node-linux-$arch/bin/node"
[[ -x "$node_bin" ]] || fail "$node_bin is missing: run npm ci (the workspace tools/node installs it)"
export PATH="$root/node_modules/.bin:$PATH"
version="$(node -p 'require(process.argv[1]).version' "$root/package.json")"
suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
base_packages=(libc6 libstdc++6 libgcc-s1 base-files tzdata ca-certificates)

mkdir -p "$cache"
# The settings podman needs here, for this build and for running the image.
conf="$cache/containers.conf"
hard_nofile="$(ulimit -Hn)"
cat >"$conf" <<EOF
[containers]
default_ulimits = ["nofile=$hard_nofile:$hard_nofile", "nproc=4096:4096"]
[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF="$conf"

# The key: every tracked file that goes into the package or its build, as it is in the work tree.
cd "$root"
key="$(
  {
    git ls-files -z -- lib operator bin ui pulumi-plugin imports examples bench proto package.json \
      package-lock.json tsconfig.json tools/node/package.json LICENSE README.md \
      scripts/build-operator-image.sh scripts/operator-image-app.cjs | xargs -0 sha256sum
    echo "$suite ${base_packages[*]} $("$node_bin" --version) $arch"
  } | sha256sum | cut -c1-16
)"
image="localhost/rayshift/rayshift"
if [[ -e "$cache/$key.built" ]] && podman image exists "$image:$key"; then
  log "cache is warm: $image:$version ($image:$key)"
  echo "CONTAINERS_CONF=$conf"
  echo "$image:$version"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

base_key="$(echo "$suite ${base_packages[*]}" | sha256sum | cut -c1-16)"
base="$cache/base-$base_key.tar"
if [[ ! -e "$base" ]]; then
  log "base: mmdebstrap --variant=extract $suite ${base_packages[*]}"
  mmdebstrap --quiet --variant=extract --include="$(IFS=,; echo "${base_packages[*]}")" "$suite" "$work/base.tar" \
    "deb http://deb.debian.org/debian $suite main" "deb http://deb.debian.org/debian-security $suite-security main"
  mv "$work/base.tar" "$base"
fi

# npm pack in a copy of the tracked files (scripts/copy-tracked.sh): .ci/run builds the image beside
# suites that read build/.
log "package: npm pack of the tracked files (builds the library, the CLI and the dashboard)"
mkdir -p "$work/pack"
bash "$root/scripts/copy-tracked.sh" "$work/src"
(cd "$work/src" && npm pack --silent --pack-destination "$work/pack" >/dev/null)
tarball="$(ls "$work/pack"/rayshift-*.tgz)"

log "root filesystem: base, Node $("$node_bin" --version), the app"
rootfs="$work/rootfs"
mkdir -p "$rootfs"
tar -xpf "$base" -C "$rootfs"
install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
node "$work/src/scripts/operator-image-app.cjs" "$tarball" "$work/app"
(cd "$work/app" && npm install --omit=dev --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null)
rm "$work/app/package.json"
mkdir -p "$rootfs/app"
cp -a "$work/app/node_modules" "$rootfs/app/"
# The unprivileged user the image runs as (the chart sets runAsNonRoot and a read-only root
# filesystem with an emptyDir on /tmp).
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nrayshift:x:1000:1000:rayshift:/tmp:/usr/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nrayshift:x:1000:\n' >"$rootfs/etc/group"
mkdir -p "$rootfs/tmp" && chmod 1777 "$rootfs/tmp"

log "image: podman import"
tar --numeric-owner -C "$rootfs" -cf - . | podman import \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /app' \
  --change 'ENV NODE_ENV=production' \
  --change 'EXPOSE 8080' \
  --change 'ENTRYPOINT ["/usr/local/bin/node", "/app/node_modules/rayshift/bin/rayshift.js"]' \
  --change 'CMD ["operator"]' \
  --change 'LABEL org.opencontainers.image.title=rayshift' \
  --change "LABEL org.opencontainers.image.version=$version" \
  --change 'LABEL org.opencontainers.image.licenses=Apache-2.0' \
  --message "rayshift $version" \
  --quiet - "$image:$key" >/dev/null
podman tag "$image:$key" "$image:$version"
# Earlier builds (other keys) are replaced, not kept.
for old in $(podman images --format '{{.Repository}}:{{.Tag}}' "$image" | grep -E ":[0-9a-f]{16}$" | grep -v ":$key$"); do
  podman rmi "$old" >/dev/null 2>&1 || true
done
rm -f "$cache"/*.built
touch "$cache/$key.built"
log "built $image:$version ($image:$key), $(podman image inspect --format '{{.Size}}' "$image:$key") bytes, in $((SECONDS - start)) s"
echo "CONTAINERS_CONF=$conf"
echo "$image:$version"
