#!/usr/bin/env bash
# The native test cluster's own check (CTest cluster_harness), in a state
# directory of its own ($NBDK_CLUSTER_STATE), apart from the fixture's:
# - its network namespace has its loopback and the test VMs' tap, and no
#   route but the tap's own link: nothing it runs can reach an address
#   outside it;
# - its /etc/ceph is its own, the host's is untouched;
# - a cluster that a killed run left behind is stopped by the next start:
#   none of its processes survive, and the new cluster serves;
# - stop ends every process of it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
cluster=$here/cluster
state=${NBDK_CLUSTER_STATE:?NBDK_CLUSTER_STATE: the state directory of this check}
fail() { echo "cluster-check: FAIL: $*" >&2; exit 1; }
pass() { echo "cluster-check: ok: $*"; }
# The monitor and OSDs of this check's cluster: those in its pid namespace
# (another test cluster may run beside it).
ceph_pids() {
  local ns pid
  ns=$(readlink "/proc/$(vm_cluster_pid "$state")/ns/pid") || return 0
  for pid in $(pgrep -x 'ceph-(mon|osd)'); do
    [[ $(readlink "/proc/$pid/ns/pid" 2>/dev/null) == "$ns" ]] && echo "$pid"
  done
}

# The host's /etc/ceph: its entries and its own mode and mtime (not those of
# /etc, which other programs on the host change).
host_conf() { ls -lA --time-style=full-iso /etc/ceph && stat -c '%a %U %y' /etc/ceph; }
# What a failed count saw: every ceph process on the host, with its pid
# namespace.
all_ceph() {
  local pid
  for pid in $(pgrep 'ceph-'); do
    echo "$pid $(readlink "/proc/$pid/ns/pid" 2>/dev/null) $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
  done
}

host_conf_before=$(host_conf)
"$cluster" start
first=$(ceph_pids)
(($(wc -w <<<"$first") == 4)) ||
  fail "want 1 monitor and 3 OSDs of the new cluster (pid namespace of PID 1 $(vm_cluster_pid "$state")), got pids: $first; all: $(all_ceph)"
pass "the cluster runs 1 monitor and 3 OSDs"

links=$("$cluster" exec ip -o link show | awk -F': ' '{print $2}' | sort | tr '\n' ' ')
[[ $links == "lo $NBDK_CLUSTER_TAP " ]] || fail "the namespace has links other than lo and $NBDK_CLUSTER_TAP: $links"
routes=$("$cluster" exec ip -4 route show table all | grep -v '^local \|^broadcast ' || true)
[[ $routes == "${NBDK_CLUSTER_ADDR%.*}.0/24 dev $NBDK_CLUSTER_TAP proto kernel scope link src $NBDK_CLUSTER_ADDR"* &&
  $(wc -l <<<"$routes") -eq 1 ]] || fail "the namespace has routes beyond its loopback and its tap's link: $routes"
pass "the namespace has only its loopback and the VMs' tap, and no route out"

[[ $(host_conf) == "$host_conf_before" ]] || fail "the host's /etc/ceph changed: $(diff <(echo "$host_conf_before") <(host_conf))"
"$cluster" exec test -s /etc/ceph/ceph.conf || fail "no ceph.conf inside the namespace"
pass "its /etc/ceph is its own; the host's is unchanged"

# A killed run: the cluster stays behind with no one to stop it.
"$cluster" start
for pid in $first; do
  ! kill -0 "$pid" 2>/dev/null || fail "process $pid of the left-behind cluster survived the next start"
done
second=$(ceph_pids)
(($(wc -w <<<"$second") == 4)) || fail "the second start runs $second; all: $(all_ceph)"
"$cluster" exec rbd --id nbdk ls "$(sed -n 's/^NBDK_CEPH_POOL=//p' "$state/env")" >/dev/null ||
  fail "the new cluster does not serve its pool"
pass "the next start stopped the left-behind cluster, and the new one serves"

"$cluster" stop
for pid in $second; do
  ! kill -0 "$pid" 2>/dev/null || fail "process $pid survived cluster stop"
done
pass "stop ended every process of the cluster"
