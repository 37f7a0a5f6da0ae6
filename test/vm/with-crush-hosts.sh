#!/bin/bash
# Runs a command in the test VM with three more OSDs, each a CRUSH host of
# its own, and the pools that need them (ceph-crush-hosts.py), then removes
# them, so that the tests after it find the cluster they expect. Runs on the
# host (a HOST_WRAPPER in test/CMakeLists.txt): the OSDs join the plain VMs'
# native cluster (NBDK_VM_CLUSTER_STATE) in its namespaces, at native speed,
# and the guest reaches them over its tap like the cluster's own. The
# command learns the pools and the hosts' OSDs from its environment.
#   with-crush-hosts.sh [--timeout SECONDS] -- COMMAND [ARG]...
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_wrapper_args "$@"
crush() { vm_in_cluster "$NBDK_VM_DIR/ceph-crush-hosts.py" "$1"; }
# A failed add takes back what it made: the tests after this one share the cluster.
failed_add() {
  crush remove
  exit "$NBDK_RC_HARNESS"
}

added=$(crush add)
rc=$?
echo "$added"
((rc == 0)) || failed_add
hosts=$(sed -n 's/^crush hosts: //p' <<<"$added")
[[ $hosts =~ ^h1=[0-9]+,h2=[0-9]+,h3=[0-9]+$ ]] || { echo "with-crush-hosts.sh: no hosts in that output" >&2; failed_add; }
"${VM_EXEC[@]}" --env NBDK_CEPH_EC_DATA_POOL=ec-data --env NBDK_CEPH_AFFINE_POOL=affine \
  --env NBDK_CEPH_TOPOLOGY_POOLS=topo-east,topo-west --env "NBDK_CEPH_CRUSH_HOSTS=$hosts" -- "${WRAPPED[@]}"
rc=$?
crush remove || rc=${rc/#0/1}
exit "$rc"
