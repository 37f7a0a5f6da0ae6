# Shared by the host-side VM scripts (kernel.sh, vm-start, vm-exec, vm-stop,
# vm-run). Sourced, never executed. The guest side does not use it: inside
# the VM only guest-init.sh, ceph-up.sh and the tests run.

NBDK_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NBDK_REPO=$(cd "$NBDK_VM_DIR/../.." && pwd)
# The kernel and initramfs cache. The guest sees the host's / read-only at
# the same paths, so guest-init.sh links its modules from here too.
NBDK_VM_CACHE=${NBDK_VM_CACHE:-$NBDK_REPO/.vm-cache}
# One running VM per state directory: pid file, console log and the writable
# 9p share (jobs in, output and status out). CTest points it into the build
# tree; by hand it defaults to one place in the cache.
NBDK_VM_STATE=${NBDK_VM_STATE:-$NBDK_VM_CACHE/state}

# Exit codes of the harness itself, kept apart from a job's own status.
readonly NBDK_RC_TIMEOUT=124   # same as timeout(1)
readonly NBDK_RC_HARNESS=125   # VM not running, died, or failed to boot

vm_log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
vm_die() { vm_log "ERROR: $*"; exit "$NBDK_RC_HARNESS"; }

# The qemu pid recorded by vm-start, printed only if that process is still a
# qemu of this state directory (a recycled pid must never be killed).
vm_qemu_pid() {
  local pid
  pid=$(cat "$NBDK_VM_STATE/qemu.pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  local cmdline
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == qemu-system-* && $cmdline == *"path=$NBDK_VM_STATE/share,"* ]] || return 1
  echo "$pid"
}

vm_console_tail() {
  local n=${1:-40}
  echo "----- VM console (last $n lines of $NBDK_VM_STATE/console.log) -----" >&2
  tail -n "$n" "$NBDK_VM_STATE/console.log" 2>/dev/null | tr -d '\r' >&2 || echo "(no console log)" >&2
  echo "----- end of console -----" >&2
}

# Stops a qemu (TERM, then KILL) and waits until it is gone.
vm_kill_qemu() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  vm_log "qemu $pid did not exit after SIGKILL"
  return 1
}

# Sets QEMU_ARGV for a VM in mode $1 (agent|console; see guest-init.sh).
# Needs KERNEL, INITRD and MODDIR from kernel.sh. TCG only: KVM does not
# work on these machines. No network device: Ceph talks over lo.
vm_qemu_argv() {
  local mode=$1
  QEMU_ARGV=(
    qemu-system-x86_64 -accel tcg,thread=multi -cpu max
    -m "${NBDK_VM_MEM:-2048}" -smp "${NBDK_VM_CPUS:-2}"
    -no-reboot -nic none
    -kernel "$KERNEL" -initrd "$INITRD"
    -append "console=ttyS0 quiet panic=-1 nbdk.stage2=$NBDK_VM_DIR/guest-init.sh nbdk.moddir=$MODDIR nbdk.mode=$mode"
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
    -virtfs "local,path=$NBDK_VM_STATE/share,mount_tag=nbdkshare,security_model=none,multidevs=remap"
  )
}

# Loads KVER, KERNEL, INITRD, MODDIR (fetching/building them if needed).
vm_load_kernel() {
  local out
  out=$("$NBDK_VM_DIR/kernel.sh") || vm_die "kernel.sh failed"
  eval "$out"
}

# A fresh state directory: a stale VM still using it is stopped first.
vm_fresh_state() {
  local pid
  if pid=$(vm_qemu_pid); then
    vm_log "stopping a stale VM (qemu pid $pid) left in $NBDK_VM_STATE"
    vm_kill_qemu "$pid" || vm_die "cannot stop the stale qemu $pid"
  fi
  rm -rf "$NBDK_VM_STATE"
  mkdir -p "$NBDK_VM_STATE"/share/{jobs,out}
}

# Prints the Ceph bring-up output and log tails the guest left in the share.
vm_ceph_logs() {
  local f
  for f in "$NBDK_VM_STATE"/share/ceph-up.log "$NBDK_VM_STATE"/share/ceph-logs/*; do
    [[ -f $f ]] || continue
    echo "----- $(basename "$f") (last 30 lines) -----" >&2
    tail -n 30 "$f" >&2
  done
}
