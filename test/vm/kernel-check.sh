#!/bin/bash
# VM test vm_kernel (runs inside the test VM): the kernel and the harness
# give what every other VM test assumes. A broken VM image fails here with
# a plain message instead of somewhere deep inside a later test.
set -euo pipefail
failures=0
check() {
  local what=$1
  shift
  if "$@" >/dev/null 2>&1; then
    echo "ok:   $what"
  else
    echo "FAIL: $what"
    failures=$((failures + 1))
  fi
}

nbd_family=$(genl ctrl get name nbd 2>&1 || true)
echo "$nbd_family"
check "generic netlink family nbd exists" grep -q 'Name: nbd' <<<"$nbd_family"
check "nbd family has multicast group nbd_mc_group" grep -q 'nbd_mc_group' <<<"$nbd_family"
check "nbd module loaded with nbds_max=16" grep -qx 16 /sys/module/nbd/parameters/nbds_max
check "/dev/nbd0 and /dev/nbd15 are block devices" test -b /dev/nbd0 -a -b /dev/nbd15
check "/dev/nbd0 is unused" test ! -e /sys/block/nbd0/pid
for fs in ext4 xfs overlay 9p; do
  check "filesystem $fs available" grep -qw "$fs" /proc/filesystems
done
# modprobe finds the unpacked modules through /lib/modules/<version>.
check "modprobe loads a module not in the initramfs (loop)" modprobe loop
check "loop module present" test -d /sys/module/loop
check "/dev/fd exists (bash process substitution)" cat <(echo fd)
check "/dev/shm is a writable tmpfs" touch /dev/shm/nbdk-check
check "the root is the writable overlay" touch /nbdk-check-root
check "Ceph test environment written" test -s /run/nbdk-test/env
check "CEPH_CONF exported to jobs" test -r "${CEPH_CONF:-/nonexistent}"
check "client key file present" test -s "${NBDK_CEPH_KEY_FILE:-/nonexistent}"
rm -f /dev/shm/nbdk-check /nbdk-check-root

if ((failures)); then
  echo "kernel-check: $failures check(s) failed"
  exit 1
fi
echo "kernel-check: all checks passed"
