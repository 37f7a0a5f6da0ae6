#!/usr/bin/env bash
# Builds nbdkeeper and its tests inside a platform's own root
# (test/vm/platform-root.sh: Debian 13's compilers and libraries), into
# build-<platform>, whose VM tests then boot that platform:
#   scripts/platform-build.sh debian13
#   ctest --test-dir build-debian13 -L vm
# The host's directory around the repository is bound into the root at its
# own path for the build, and unbound after.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
platform=${1:?usage: platform-build.sh PLATFORM}
build=${NBDK_PLATFORM_BUILD_DIR:-$repo/build-$platform}
[[ $(id -u) -eq 0 ]] || { echo "platform-build.sh: needs root (chroot, mount)" >&2; exit 1; }

root=$("$repo/test/vm/platform-root.sh" "$platform")
work=$(dirname "$repo")
mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" || true; done
}
trap cleanup EXIT
bind() {
  mkdir -p "$root$1"
  mount --bind "$1" "$root$1"
  mounts+=("$root$1")
}
bind "$work"
bind /dev
# The compile cache: beside the host's (scripts/test.sh keeps that outside
# the checkout, so it outlives a clean clone), else in the VM cache; keyed
# by paths relative to the repository, so a clone in another folder hits.
ccache_dir=${CCACHE_DIR:+${CCACHE_DIR%/}-$platform}
ccache_dir=${ccache_dir:-$repo/.vm-cache/ccache-$platform}
mkdir -p "$ccache_dir"
[[ $ccache_dir == "$work"/* ]] || bind "$ccache_dir"
mount -t proc proc "$root/proc" && mounts+=("$root/proc")

in_root() {
  chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    CCACHE_DIR="$ccache_dir" CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=true "$@"
}
# Line tables only, as scripts/test.sh builds the host's tree.
in_root cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DNBDK_VM_PLATFORM="$platform" -DNBDK_VM_PLATFORMS= >/dev/null
"$repo/scripts/relative-unity-includes.sh" "$build"
# NBDK_PLATFORM_TARGET: only these targets (scripts/image.sh builds the
# daemon; scripts/test.sh `platform_tests`, what `ctest -L platform` runs).
read -ra targets <<<"${NBDK_PLATFORM_TARGET:-}"
in_root cmake --build "$build" -j"$(nproc)" ${targets[@]:+--target "${targets[@]}"}
