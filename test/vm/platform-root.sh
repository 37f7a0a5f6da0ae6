#!/usr/bin/env bash
# Makes (once) the root filesystem of a platform whose userland is not the
# host's, and prints its path: Debian 13 ("debian13": Ceph 18, rbd-nbd 18,
# Linux 6.12 from its own apt). The same root is the platform's build root
# (scripts/platform-build.sh builds the daemon and tests in it) and the VM's
# root (vm-start boots it, with the repository shared at its own path).
# Cached in $NBDK_VM_CACHE/root-<platform> while its package list is
# unchanged; mmdebstrap checks the archive's signatures.
#   platform-root.sh debian13
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

platform=${1:?usage: platform-root.sh PLATFORM}
case "$platform" in
  debian13) suite=trixie ;;
  *) vm_die "platform $platform has the host's userland: no root to make" ;;
esac
[[ $(id -u) -eq 0 ]] || vm_die "platform-root.sh needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || vm_die "mmdebstrap missing: run scripts/setup.sh"

# What building needs (scripts/setup.sh's build list, without the fuzzers'
# clang) and what the VM tests run.
readonly PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  libuv1-dev libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  rapidjson-dev librbd-dev librados-dev libnl-genl-3-dev libnl-3-dev
  libgtest-dev libgmock-dev libsystemd-dev libhttp-parser-dev libmount-dev
  ceph-mon ceph-osd ceph-common rbd-nbd python3 python3-yaml
  e2fsprogs xfsprogs fio util-linux mount iproute2 procps curl kmod
)
root=$NBDK_VM_CACHE/root-$platform
hash=$(printf '%s\n' "$suite" "${PACKAGES[@]}" | sha256sum | cut -c1-16)

mkdir -p "$NBDK_VM_CACHE"
exec 9>"$NBDK_VM_CACHE/.root-$platform.lock"
flock 9
if [[ $(cat "$root/.nbdk-root" 2>/dev/null) != "$hash" ]]; then
  vm_log "making the $platform root ($suite, ${#PACKAGES[@]} packages; once, cached in $root)"
  rm -rf "$root" "$root.tmp"
  include=$(IFS=,; echo "${PACKAGES[*]}")
  mmdebstrap --variant=minbase --include="$include" --skip=cleanup/apt/lists \
    "$suite" "$root.tmp" http://deb.debian.org/debian >&2 ||
    vm_die "mmdebstrap of $suite failed"
  echo "$hash" >"$root.tmp/.nbdk-root"
  mv "$root.tmp" "$root"
fi
echo "$root"
