#!/bin/bash
# nbd-io-report.sh DEVICE: where the IO of a stalled nbd device sits, for a
# test or benchmark that saw it stop (run inside the test VM, as root).
# Prints the kernel's view (in-flight counters, blk-mq's busy requests, the
# "Possible stuck request" lines, blocked tasks' stacks), each rbd-nbd's
# threads and its librados ops in flight (admin socket), and the OSD's.
set -u
dev=${1#/dev/}
section() { printf '\n--- %s\n' "$*"; }
section "$dev: inflight (reads writes), stat"
cat "/sys/block/$dev/inflight" "/sys/block/$dev/stat" 2>&1
section "$dev: pid in sysfs, busy requests"
cat "/sys/block/$dev/pid" 2>&1
mount -t debugfs none /sys/kernel/debug 2>/dev/null
cat /sys/kernel/debug/block/"$dev"/hctx*/busy 2>&1 | head -20
section "kernel: last 'Possible stuck request' lines (of $(dmesg | grep -c 'Possible stuck request'))"
dmesg | grep 'Possible stuck request' | tail -4
section "kernel: other nbd lines"
dmesg | grep -E 'nbd|blocked for' | grep -v 'Possible stuck' | tail -12
for pid in $(pgrep -x rbd-nbd); do
  section "rbd-nbd $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" | cut -c1-120)"
  grep -E '^State' "/proc/$pid/status"
  for t in /proc/"$pid"/task/*; do
    printf '%s %s %s\n' "${t##*/}" "$(cat "$t/comm")" "$(awk '{print $3}' "$t/stat")"
  done | sort -k3 | awk '{print}' | head -40
  for asok in /var/run/ceph/*."$pid".*.asok; do
    [ -S "$asok" ] || continue
    section "rbd-nbd $pid: objecter_requests ($asok)"
    timeout 10 ceph --admin-daemon "$asok" objecter_requests 2>&1 | head -60
  done
done
section "tasks in D state and their kernel stacks"
for s in /proc/[0-9]*/stat; do
  p=${s#/proc/}; p=${p%/stat}
  [ "$(awk '{print $3}' "$s" 2>/dev/null)" = D ] || continue
  echo "pid $p $(cat "/proc/$p/comm" 2>/dev/null)"; cat "/proc/$p/stack" 2>/dev/null | head -12
done
section "osd: ops in flight (\"waiting for readable\": a laggy PG, docs/design/kernel-timeouts.md)"
for asok in /var/run/ceph/ceph-osd.*.asok; do
  timeout 10 ceph --admin-daemon "$asok" dump_ops_in_flight 2>&1 | head -40
done
