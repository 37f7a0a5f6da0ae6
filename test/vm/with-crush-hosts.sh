#!/bin/bash
# Runs a command in the test VM with three more OSDs, each a CRUSH host of
# its own, and the pools that need them (ceph-crush-hosts.py), then removes
# them, so that the tests after it find the one-OSD cluster they expect.
# The command learns the pools from the environment. The OSDs are the
# guest's, beside the guest's own one-OSD Ceph (with-guest-ceph.sh).
set -uo pipefail
dir=$(dirname "$(readlink -f "$0")")
[[ -n ${NBDK_GUEST_CEPH:-} ]] || exec "$dir/with-guest-ceph.sh" "$0" "$@"
"$dir/ceph-crush-hosts.py" add || exit 125
export NBDK_CEPH_EC_DATA_POOL=ec-data NBDK_CEPH_AFFINE_POOL=affine NBDK_CEPH_TOPOLOGY_POOLS=topo-east,topo-west \
  NBDK_CEPH_CRUSH_HOSTS=h1=1,h2=2,h3=3
"$@"
rc=$?
"$dir/ceph-crush-hosts.py" remove || rc=${rc/#0/1}
exit "$rc"
