#!/bin/bash
# VM smoke test (runs inside the test VM: vm-exec -- test/vm/smoke.sh).
# The scenario nbdkeeper automates, done by hand with rbd-nbd:
#   map -> ext4 with a known file -> kill -9 rbd-nbd -> break the dead
#   client's lock -> attach on the same device with the same cookie ->
#   the file reads back intact (O_DIRECT, caches dropped) and new writes work
#   -> unmount, unmap.
# Also the template for later VM tests: set -euo pipefail, a cleanup trap,
# one `step` line with elapsed time per stage, and a hard check per claim.
set -euo pipefail
source /run/nbdk-test/env
ceph=(--id "$NBDK_CEPH_ID")
image=$NBDK_CEPH_POOL/smoke-$$
mnt=$(mktemp -d /run/smoke.XXXXXX)
dev='' rbd_pid='' mounted=''

# Kernel messages from before this test are not its concern.
dmesg_lines=$(dmesg | wc -l)
t0=${EPOCHREALTIME/./}
last=$t0
step() {
  local now=${EPOCHREALTIME/./}
  printf 'smoke: %7.2f s (+%5.2f s) %s\n' "$(((now - t0) / 10000))e-2" "$(((now - last) / 10000))e-2" "$*"
  last=$now
}
fail() {
  echo "smoke: FAIL: $*" >&2
  exit 1
}

cleanup() {
  local rc=$?
  [[ -n $mounted ]] && umount -l "$mnt" 2>/dev/null
  [[ -n $dev ]] && rbd-nbd unmap "$dev" 2>/dev/null
  rbd "${ceph[@]}" rm --no-progress "$image" 2>/dev/null
  rmdir "$mnt" 2>/dev/null
  exit "$rc"
}
trap cleanup EXIT

# Pid of the rbd-nbd process serving device $1: the "id" column of
# list-mapped (columns shift when the namespace is empty).
rbd_nbd_pid() {
  rbd-nbd list-mapped | awk -v d="$1" 'NR > 1 { for (i = 2; i <= NF; i++) if ($i == d) print $1 }'
}

wait_gone() {
  local pid=$1 i
  for ((i = 0; i < 100; i++)); do
    [[ -e /proc/$pid ]] || return 0
    sleep 0.1
  done
  fail "process $pid still exists 10 s after SIGKILL ($(grep State /proc/"$pid"/status))"
}

rbd "${ceph[@]}" create --size 256M "$image"
step "image $image created"

read -r dev cookie < <(rbd-nbd "${ceph[@]}" map --try-netlink --reattach-timeout 60 --show-cookie "$image")
[[ $dev == /dev/nbd* && -n $cookie ]] || fail "unexpected map output: '$dev $cookie'"
rbd_pid=$(rbd_nbd_pid "$dev")
[[ -n $rbd_pid ]] || fail "no rbd-nbd process listed for $dev"
backend=$(cat "/sys/block/${dev#/dev/}/backend")
[[ $backend == "$cookie" ]] || fail "kernel backend '$backend' is not the cookie '$cookie'"
step "mapped $image on $dev (pid $rbd_pid, cookie $cookie)"

# nodiscard: discarding the whole image first costs ~15 s under TCG.
mkfs.ext4 -q -E nodiscard "$dev"
mount "$dev" "$mnt"
mounted=1
head -c 4M /dev/urandom >"$mnt/data"
sync -f "$mnt/data"
want=$(sha256sum <"$mnt/data")
step "ext4 mounted, 4 MiB file written and synced"

kill -9 "$rbd_pid"
wait_gone "$rbd_pid"
[[ -z $(rbd_nbd_pid "$dev") ]] || fail "list-mapped still lists $dev after the kill"
step "rbd-nbd $rbd_pid killed with SIGKILL"

# The dead client keeps the exclusive lock until its watch times out (30 s);
# breaking it (which blocklists the dead client) lets the new one take it at
# once. Needs client.nbdk's "profile rbd" monitor caps.
# "rbd lock ls" prints: Locker ID Address, where the ID has a space
# ("auto 140...").
IFS=$'\t' read -r locker lock_id < <(rbd "${ceph[@]}" lock ls "$image" |
  awk '$1 ~ /^client\./ { l = $1; $1 = ""; $NF = ""; gsub(/^ +| +$/, ""); print l "\t" $0; exit }') || true
[[ $locker == client.* ]] || fail "no lock held on $image after the kill"
rbd "${ceph[@]}" lock rm "$image" "$lock_id" "$locker"
step "lock '$lock_id' of dead $locker broken"

rbd-nbd "${ceph[@]}" attach --device "$dev" --cookie "$cookie" --reattach-timeout 60 "$image" >/dev/null
rbd_pid=$(rbd_nbd_pid "$dev")
[[ -n $rbd_pid ]] || fail "no rbd-nbd process listed for $dev after attach"
step "re-attached $dev (pid $rbd_pid)"

echo 3 >/proc/sys/vm/drop_caches
got=$(dd if="$mnt/data" bs=1M iflag=direct status=none | sha256sum)
[[ $got == "$want" ]] || fail "data read back after re-attach differs"
head -c 1M /dev/urandom >"$mnt/after"
sync -f "$mnt/after"
step "file intact after re-attach (O_DIRECT read); new write synced"

# The whole point: the kill was invisible to the filesystem.
errors=$(dmesg | tail -n +$((dmesg_lines + 1)) | grep -E "(I/O error|EXT4-fs error|EXT4-fs warning).*${dev#/dev/}" || true)
[[ -z $errors ]] || fail "kernel reported errors on $dev: $errors"
umount "$mnt"
mounted=
rbd-nbd unmap "$dev"
for ((i = 0; i < 100; i++)); do
  [[ -e /proc/$rbd_pid ]] || break
  sleep 0.1
done
[[ ! -e /proc/$rbd_pid ]] || fail "rbd-nbd $rbd_pid still running after unmap"
dev=
step "unmounted and unmapped"
echo "smoke: PASS"
