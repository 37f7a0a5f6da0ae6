#!/bin/bash
# Runs a command in the test VM against a Ceph of the guest's own
# (ceph-up.sh: one memstore OSD on lo), for the tests whose faults are on
# Ceph's side: a monitor or OSD stopped, an OSD's admin socket read, CRUSH
# hosts added. Those must be the guest's processes, where the plain VM's
# Ceph is the native cluster's (vm-start). The cluster, its conf and its
# env live in a mount namespace of this command's, and end with it. In a VM
# that runs its own Ceph already the command just runs.
set -uo pipefail
dir=$(dirname "$(readlink -f "$0")")
if [[ -z ${NBDK_GUEST_CEPH:-} ]]; then
  export NBDK_GUEST_CEPH=1
  grep -q 'nbdk.cluster=' /proc/cmdline || exec "$@"
  exec unshare --mount --propagation private "$0" "$@"
fi
for d in /etc/ceph /run/ceph /run/nbdk-test /run/nbdk-ceph; do
  mkdir -p "$d" && mount -t tmpfs -o mode=0755 tmpfs "$d" || exit 125
done
# Only this command's Ceph runs in a guest that joined the native cluster.
trap 'pkill -KILL -x ceph-osd; pkill -KILL -x ceph-mon' EXIT
if ! NBDK_CEPH_UP_ANYWHERE=1 "$dir/ceph-up.sh" >/run/nbdk-ceph/ceph-up.log 2>&1; then
  echo "with-guest-ceph.sh: the guest's Ceph did not come up:" >&2
  cat /run/nbdk-ceph/ceph-up.log >&2
  tail -n 30 /run/nbdk-ceph/log/* >&2
  exit 125
fi
grep -o 'Ceph ready in [0-9]* ms' /run/nbdk-ceph/ceph-up.log
set -a
source /run/nbdk-test/env
set +a
"$@"
