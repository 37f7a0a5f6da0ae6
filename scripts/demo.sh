#!/usr/bin/env bash
# One command shows nbdkeeper doing its job on a real kernel: sets up a
# Debian 12 machine, builds, boots the test VM (Debian's kernel with nbd and
# a one-node Ceph, under qemu) and runs the narrated demo in it
# (test/demo/keeper_demo.cc): stage a volume through CSI, kill -9 its
# rbd-nbd while a writer runs, SIGKILL the daemon itself, clean up.
#   scripts/demo.sh            narrated
#   scripts/demo.sh --quiet    only the summary line
# Exits with the demo's status (0: every check passed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NBDK_BUILD_DIR:-$root/build}
quiet=
demo_args=()
case "${1:-}" in
  "") ;;
  --quiet) quiet=1; demo_args+=(--quiet) ;;
  *) echo "usage: scripts/demo.sh [--quiet]" >&2; exit 2 ;;
esac

say() { [[ -n $quiet ]] || printf '%s demo.sh: %s\n' "$(date -u +%H:%M:%S)" "$*"; }
# Quiet: a step's output is kept in a file and shown only if it fails.
run_step() {
  if [[ -z $quiet ]]; then
    "$@"
    return
  fi
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

say "under software emulation this takes: setup seconds (minutes if apt must install), build ~10-15 min the"
say "first time on 2 cores (seconds after), VM boot + Ceph 30-60 s, the demo itself ~1.5-2 min"
run_step "$root/scripts/setup.sh"
run_step cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
# Only what the demo runs: keeper_demo and the nbdkeeperd it starts.
run_step cmake --build "$build" -j"$(nproc)" --target keeper_demo

# Its own VM state directory: the share (with the copied daemon log) stays
# after the VM is gone, until the next demo run.
export NBDK_VM_STATE=$build/demo-vm
vm=$root/test/vm
# One VM at a time on this machine (CTest and other runs take the same lock).
exec 9>/tmp/nbdk-vm.lock
if ! flock -n 9; then
  say "another VM run holds /tmp/nbdk-vm.lock; waiting for it"
  flock 9
fi
trap 'run_step "$vm/vm-stop" || true' EXIT

say "booting the VM: Debian's kernel under qemu (no KVM here), then a one-node Ceph inside it"
boot_log=$(mktemp)
"$vm/vm-start" 2>"$boot_log" &
boot_pid=$!
# vm-start says nothing until Ceph is ready: show what the guest is doing.
t0=$SECONDS
while kill -0 "$boot_pid" 2>/dev/null; do
  sleep 5
  kill -0 "$boot_pid" 2>/dev/null || break
  line=$(grep '^ceph-up:' "$NBDK_VM_STATE/share/ceph-up.log" 2>/dev/null | tail -n 1 || true)
  [[ -n $line ]] || line="kernel booting"
  say "  $((SECONDS - t0)) s: ${line:0:100}"
done
rc=0
wait "$boot_pid" || rc=$?
if ((rc != 0)); then
  cat "$boot_log" >&2
  rm -f "$boot_log"
  echo "demo.sh: the VM did not come up (vm-start exit $rc)" >&2
  exit "$rc"
fi
say "$(tail -n 1 "$boot_log" | cut -d' ' -f2-)"
rm -f "$boot_log"

# The demo prints in-VM paths; the share is $NBDK_VM_STATE/share on this side.
rc=0
"$vm/vm-exec" --timeout 600 -- "$build/test/demo/keeper_demo" "${demo_args[@]}" |
  sed -u "s|/run/nbdk-vm/share|$NBDK_VM_STATE/share|g" || rc=$?
exit "$rc"
