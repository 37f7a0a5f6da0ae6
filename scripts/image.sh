#!/usr/bin/env bash
# Builds the OCI image of nbdkeeperd from Debian packages only: mmdebstrap
# makes a minimal root filesystem of the platform's Debian (rbd-nbd, the
# filesystem tools, tini and the daemon's shared libraries), podman imports
# it as a base image and adds the stripped daemon on top
# (deploy/image/Containerfile).
#   scripts/image.sh                  set up, build nbdkeeperd, make the image
#   scripts/image.sh --binary FILE    make it from an already built daemon
#   --platform debian13               Debian 13, rbd-nbd 18.2 (the default; the
#                                     daemon built in its root by
#                                     scripts/platform-build.sh)
#   --platform debian12               Debian 12, rbd-nbd 16.2 (the host's build)
#   --tag TAG                         image tag (default: the daemon's version)
# Prints the image's name and size. The root filesystem is built once per
# package list: it is kept as nbdkeeper-base:<key> in podman's store and as a
# tarball under the build directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NBDK_BUILD_DIR:-$root/build}

usage() {
  echo "usage: scripts/image.sh [--platform debian13|debian12] [--binary FILE] [--tag TAG]" >&2
  exit 2
}
binary="" tag="" platform=debian13
while (($#)); do
  case $1 in
    --binary) binary=$(realpath "$2"); shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --platform) platform=$2; shift 2 ;;
    *) usage ;;
  esac
done
case $platform in
  debian12) suite=bookworm ;;
  debian13) suite=trixie ;;
  *) echo "image.sh: --platform $platform: want debian13 or debian12" >&2; usage ;;
esac

if [[ -z $binary ]]; then
  "$root/scripts/setup.sh" --image
  if [[ $platform == debian12 ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j"$(nproc)" --target nbdkeeperd
    binary=$build/daemon/nbdkeeperd
  else
    NBDK_PLATFORM_TARGET=nbdkeeperd "$root/scripts/platform-build.sh" "$platform"
    binary=${NBDK_PLATFORM_BUILD_DIR:-$root/build-$platform}/daemon/nbdkeeperd
  fi
fi

# The daemon is run, and its libraries looked up, in the userland it was
# built for: the host's (debian12) or the platform's root.
in_userland=() userland="" context=""
cleanup() {
  [[ -z $context ]] || rm -rf "$context"
  [[ -z $userland ]] || rm -f "$userland/tmp/nbdkeeperd-image"
}
trap cleanup EXIT
if [[ $platform != debian12 ]]; then
  userland=$("$root/test/vm/platform-root.sh" "$platform")
  install -m 0755 "$binary" "$userland/tmp/nbdkeeperd-image"
  in_userland=(chroot "$userland")
  binary_in_userland=/tmp/nbdkeeperd-image
else
  binary_in_userland=$binary
fi
version=$("${in_userland[@]}" "$binary_in_userland" --version | awk '{print $2}')
image=localhost/nbdkeeperd:${tag:-$version}

# The Debian packages shipping the daemon's shared libraries (librados2,
# librbd1, libgrpc++ ...), found from the binary itself so that the image
# follows its link line. One dpkg -S for all (it reads its database once);
# "*/<dir>/<name>" matches both /lib and /usr/lib, where Debian ships them,
# and a library no package ships fails it.
library_packages() {
  local patterns
  mapfile -t patterns < <("${in_userland[@]}" ldd "$binary_in_userland" |
    awk '/=> \// {n = split($3, p, "/"); print "*/" p[n-1] "/" p[n]}')
  "${in_userland[@]}" dpkg -S "${patterns[@]}" | cut -d: -f1 | sort -u
}
library_list=$(library_packages)
mapfile -t libraries <<<"$library_list"
# What the daemon runs: rbd-nbd (which may modprobe nbd), mkfs/mount/resize
# tools; tini is PID 1.
packages=(tini rbd-nbd kmod e2fsprogs xfsprogs util-linux mount "${libraries[@]}")
sources=(
  "deb http://deb.debian.org/debian $suite main"
  "deb http://deb.debian.org/debian $suite-updates main"
  "deb http://deb.debian.org/debian-security $suite-security main"
)
# The merged-usr hook sets /usr up itself, so that usrmerge (and with it
# perl) stays out.
mmdebstrap_options=(
  --variant=essential --format=tar --aptopt='APT::Install-Recommends "false"'
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
)
key=$(printf '%s\n' "${packages[@]}" "${sources[@]}" "${mmdebstrap_options[@]}" | sha256sum | cut -c1-12)
base=localhost/nbdkeeper-base:$key

if ! podman image exists "$base"; then
  cache=$build/image-cache
  rootfs=$cache/rootfs-$key.tar
  if [[ ! -f $rootfs ]]; then
    mkdir -p "$cache"
    echo "image: building the root filesystem (${#packages[@]} packages, a few minutes)" >&2
    mmdebstrap --quiet "${mmdebstrap_options[@]}" --include="$(IFS=,; echo "${packages[*]}")" \
      "$suite" "$rootfs.tmp" "${sources[@]}" </dev/null
    mv "$rootfs.tmp" "$rootfs"
  fi
  podman import --quiet "$rootfs" "$base" >/dev/null
fi

context=$(mktemp -d)
strip -o "$context/nbdkeeperd" "$binary"
podman build --quiet --build-arg BASE="$base" -f "$root/deploy/image/Containerfile" -t "$image" "$context" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "image: $image ($((size / 1000000)) MB)"
