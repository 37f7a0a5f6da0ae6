#!/usr/bin/env bash
# Makes (once) the root filesystem of a platform whose userland is not the
# host's, and prints its path: Debian 13 ("debian13": Ceph 18, rbd-nbd 18,
# Linux 6.12 from its own apt). The same root is the platform's build root
# (scripts/platform-build.sh builds the daemon and tests in it) and the VM's
# root (vm-start boots it, with the repository shared at its own path).
# Cached outside the checkout (NBDK_PLATFORM_ROOTS, default
# ~/.cache/nbdkeeper: a clean clone reuses it, as the compile cache) in
# root-<platform>-<hash of its package list>; mmdebstrap checks the
# archive's signatures.
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

# What building needs and what the VM tests run: scripts/setup.sh's lists,
# and what the host has otherwise (ninja and ccache for platform-build.sh).
lists=$("$NBDK_REPO/scripts/setup.sh" --print build && "$NBDK_REPO/scripts/setup.sh" --print vm-guest) ||
  vm_die "scripts/setup.sh --print failed"
mapfile -t PACKAGES <<<"$lists"
PACKAGES+=(ninja-build ccache python3 mount)
readonly PACKAGES
roots=${NBDK_PLATFORM_ROOTS:-${XDG_CACHE_HOME:-$HOME/.cache}/nbdkeeper}
hash=$( (echo "$suite"; printf '%s\n' "${PACKAGES[@]}" | sort) | sha256sum | cut -c1-16)
# Named for its package list: checkouts of other lists (other branches)
# keep roots of their own, and no build or VM of another checkout has its
# root removed under it.
root=$roots/root-$platform-$hash

mkdir -p "$roots"
exec 9>"$roots/.root-$platform.lock"
flock 9
if [[ ! -e $root/.nbdk-root ]]; then
  vm_log "making the $platform root ($suite, ${#PACKAGES[@]} packages; once, cached in $root)"
  rm -rf --one-file-system "$root.tmp"
  include=$(IFS=,; echo "${PACKAGES[*]}")
  mmdebstrap --variant=minbase --include="$include" --skip=cleanup/apt/lists \
    "$suite" "$root.tmp" http://deb.debian.org/debian >&2 ||
    vm_die "mmdebstrap of $suite failed"
  echo "$hash" >"$root.tmp/.nbdk-root"
  mv "$root.tmp" "$root"
fi
echo "$root"
