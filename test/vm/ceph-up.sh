#!/bin/bash
# Brings up a one-monitor Ceph with NBDK_CEPH_OSDS memstore OSDs (default 1)
# on NBDK_CEPH_ADDR (default 127.0.0.1; the native cluster's is on the test
# VMs' link), with cephx, a pool "rbd" initialised for RBD, a second pool
# "rbd-data" for images' data (StorageClass dataPool), and a client
# "client.nbdk" holding only the caps rbd-nbd and lock breaking need on both.
# Pools keep min(OSDs, 3) copies. Run by guest-init.sh inside the test VM
# before it reports the VM ready, and by `cluster start` natively in private
# mount, network and pid namespaces (NBDK_CEPH_UP_ANYWHERE=1); never in the
# host's own namespaces (its /etc/ceph and network are not the tests').
#
# The systemd VM keeps its cluster on its root disk across a power cut, as
# a real cluster outlives a node's: NBDK_CEPH_STATE on that disk and
# NBDK_CEPH_STORE=bluestore (crash-safe; memstore keeps nothing). A state
# directory that already holds a cluster is started again, not made anew.
#
# Writes /run/nbdk-test/env for tests (see the end of this file).
# Every key is made up front and seeded into the monitor at mkfs, so no
# "ceph auth" round trips are needed; everything that talks to the cluster
# runs in one python process, ceph-up.py (each `ceph` CLI run costs ~6 s
# under TCG, and every process start is slow there).
set -euo pipefail

if [[ ! -e /run/nbdk-vm/share && -z ${NBDK_CEPH_UP_ANYWHERE:-} ]]; then
  echo "ceph-up.sh: refusing to run outside the test VM" >&2
  exit 1
fi

readonly POOL=rbd DATA_POOL=rbd-data CLIENT=nbdk
readonly ADDR=${NBDK_CEPH_ADDR:-127.0.0.1}
[[ $ADDR =~ ^(127|10)\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "ceph-up.sh: NBDK_CEPH_ADDR=$ADDR: want a loopback or 10/8 address" >&2; exit 1; }
readonly MON_HOST="[v2:$ADDR:3300,v1:$ADDR:6789]"
if [[ $ADDR == 127.* ]]; then PUBLIC_NETWORK=127.0.0.0/8; else PUBLIC_NETWORK=${ADDR%.*}.0/24; fi
readonly PUBLIC_NETWORK
readonly ENV_FILE=/run/nbdk-test/env
# Microseconds; no date(1): each process start costs ~0.2 s under TCG.
t0=${EPOCHREALTIME/./}
ms_since_t0() { echo $(((${EPOCHREALTIME/./} - t0) / 1000)); }
step() { echo "ceph-up: +$(ms_since_t0) ms $*"; }

# By default all state on tmpfs under /run, none under /var/lib/ceph or
# /var/log/ceph: those are the host's, mode 0750 ceph:ceph, which a VM run
# by a non-root user cannot even look up through 9p.
readonly STATE=${NBDK_CEPH_STATE:-/run/nbdk-ceph} STORE=${NBDK_CEPH_STORE:-memstore}
readonly OSDS=${NBDK_CEPH_OSDS:-1}
[[ $OSDS =~ ^[1-9]$ ]] || { echo "ceph-up.sh: NBDK_CEPH_OSDS=$OSDS: want 1 to 9" >&2; exit 1; }
readonly SIZE=$((OSDS < 3 ? OSDS : 3))
mon_dir=$STATE/mon/ceph-a
mkdir -p /etc/ceph "$mon_dir" "$STATE/log" /run/ceph /run/nbdk-test
for ((i = 0; i < OSDS; i++)); do mkdir -p "$STATE/osd/ceph-$i"; done

if [[ -e $STATE/env ]]; then
  ceph-mon -i a
  step "monitor of the kept cluster started"
  "$(dirname "$0")/ceph-up.py" --again "$POOL" "$CLIENT" "$t0" "$OSDS"
  cp "$STATE/env" "$ENV_FILE"
  echo "ceph-up: Ceph ready in $(ms_since_t0) ms, kept from the last boot (env in $ENV_FILE)"
  exit 0
fi

read -r fsid </proc/sys/kernel/random/uuid
osd_uuids=()
for ((i = 0; i < OSDS; i++)); do
  read -r uuid </proc/sys/kernel/random/uuid
  osd_uuids+=("$uuid")
done
if [[ $STORE == bluestore ]]; then
  # A sparse file on the disk; small caches, as the VM has 2 GiB.
  store_conf='osd_objectstore = bluestore
bluestore_block_create = true
bluestore_block_size = 4294967296
osd_memory_target = 939524096
bluestore_cache_autotune = false
bluestore_cache_size = 134217728'
else
  store_conf='osd_objectstore = memstore
memstore_device_bytes = 1G'
fi

cat >/etc/ceph/ceph.conf <<EOF
[global]
fsid = $fsid
mon_host = $MON_HOST
mon_initial_members = a
public_network = $PUBLIC_NETWORK
ms_bind_ipv6 = false
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
osd_pool_default_size = $SIZE
osd_pool_default_min_size = $(((SIZE + 1) / 2))
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
run_dir = /run/ceph
mon_data = $STATE/mon/\$cluster-\$id
osd_data = $STATE/osd/\$cluster-\$id
log_file = $STATE/log/\$cluster-\$name.log

[osd]
$store_conf

[client]
# Several rbd-nbd processes run at once; one fixed socket path collides.
admin_socket = /run/ceph/\$cluster-\$name.\$pid.asok
log_file = $STATE/log/\$cluster-\$name.\$pid.log
EOF

# A new cephx secret as ceph-authtool --gen-print-key makes it: base64 of
# CryptoKey's encoding (u16 type 1 = AES, u32 seconds, u32 nanoseconds,
# u16 length 16, the 16 random bytes). Written here because every
# ceph-authtool run costs ~0.6 s under TCG and eight were needed.
printf -v key_header '\\x01\\x00\\x%02x\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00\\x10\\x00' \
  $((EPOCHSECONDS & 255)) $((EPOCHSECONDS >> 8 & 255)) $((EPOCHSECONDS >> 16 & 255)) $((EPOCHSECONDS >> 24 & 255))
gen_key() {
  # shellcheck disable=SC2059 # the header is printf escapes on purpose
  { printf "$key_header"; head -c 16 /dev/urandom; } | base64 -w0
}

# keyring_entry <entity> <key> [<service> <cap>]...
keyring_entry() {
  printf '[%s]\n\tkey = %s\n' "$1" "$2"
  shift 2
  while (($#)); do
    printf '\tcaps %s = "%s"\n' "$1" "$2"
    shift 2
  done
}

mon_key=$(gen_key) admin_key=$(gen_key) client_key=$(gen_key)
admin_entry=$(keyring_entry client.admin "$admin_key" mds 'allow *' mgr 'allow *' mon 'allow *' osd 'allow *')
osd_entries=()
for ((i = 0; i < OSDS; i++)); do
  osd_entries+=("$(keyring_entry osd.$i "$(gen_key)" mgr 'allow profile osd' mon 'allow profile osd' osd 'allow *')")
done
# "profile rbd" on the monitor includes "osd blocklist add", which breaking a
# dead client's exclusive lock needs (the old owner is blocklisted first).
client_entry=$(keyring_entry client.$CLIENT "$client_key" mon 'profile rbd' osd "profile rbd pool=$POOL, profile rbd pool=$DATA_POOL")
umask 077
echo "$admin_entry" >/etc/ceph/ceph.client.admin.keyring
for ((i = 0; i < OSDS; i++)); do echo "${osd_entries[i]}" >"$STATE/osd/ceph-$i/keyring"; done
echo "$client_entry" >/etc/ceph/ceph.client.$CLIENT.keyring
# The bare key, for callers that take a secret rather than a keyring (CSI).
echo "$client_key" >/etc/ceph/ceph.client.$CLIENT.key
# The monitor's initial auth database: every entity, so that no
# "ceph auth" round trips are needed later.
{
  keyring_entry mon. "$mon_key" mon 'allow *'
  printf '%s\n' "$admin_entry" "${osd_entries[@]}" "$client_entry"
} >/run/ceph/mon.keyring
umask 022
chmod 0644 /etc/ceph/ceph.conf
step "keys made"

rm -f /run/ceph/osd-mkfs.rc.*
# On a failure below, do not leave the python half waiting (up to minutes)
# on a monitor that will never come: it holds guest-init's output pipe.
trap 'kill $(jobs -p) 2>/dev/null' EXIT
"$(dirname "$0")/ceph-up.py" "$(IFS=,; echo "${osd_uuids[*]}")" "$POOL" "$CLIENT" "$t0" /run/ceph/osd-mkfs.rc "$DATA_POOL" &
python_pid=$!

monmaptool --create --fsid "$fsid" --addv a "$MON_HOST" /run/ceph/monmap >/dev/null
ceph-mon --mkfs -i a --monmap /run/ceph/monmap --keyring /run/ceph/mon.keyring
ceph-mon -i a
step "monitor started"
# The OSDs' mkfs is local (--no-mon-config): it overlaps with the monitor
# commands; ceph-up.py starts each OSD once both are done.
for ((i = 0; i < OSDS; i++)); do
  {
    rc=0
    ceph-osd -i "$i" --mkfs --osd-uuid "${osd_uuids[i]}" --no-mon-config >"$STATE/log/osd-mkfs.$i.log" 2>&1 || rc=$?
    echo "$rc" >"/run/ceph/osd-mkfs.rc.$i"
  } &
done
wait "$python_pid"
trap - EXIT

cat >"$ENV_FILE.tmp" <<EOF
CEPH_CONF=/etc/ceph/ceph.conf
NBDK_CEPH_FSID=$fsid
NBDK_CEPH_MON_HOST=$MON_HOST
NBDK_CEPH_MONITORS=$ADDR:6789
NBDK_CEPH_POOL=$POOL
NBDK_CEPH_DATA_POOL=$DATA_POOL
NBDK_CEPH_ID=$CLIENT
NBDK_CEPH_KEYRING=/etc/ceph/ceph.client.$CLIENT.keyring
NBDK_CEPH_KEY_FILE=/etc/ceph/ceph.client.$CLIENT.key
NBDK_CEPH_LOG_DIR=$STATE/log
EOF
mv "$ENV_FILE.tmp" "$ENV_FILE"
cp "$ENV_FILE" "$STATE/env"
# On the systemd VM's disk: the cluster must survive the node's power cut.
sync
echo "ceph-up: Ceph ready in $(ms_since_t0) ms (env in $ENV_FILE)"
