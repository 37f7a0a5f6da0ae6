# Shared by the host-side VM scripts (kernel.sh, vm-start, vm-exec, vm-stop,
# vm-run, cluster, and the host wrappers with-crush-hosts.sh and
# with-cluster-faults.sh). Sourced, never executed. The guest side does not
# use it: inside the VM only guest-init.sh, ceph-up.sh and the tests run.

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

# A host wrapper's arguments (with-crush-hosts.sh, with-cluster-faults.sh),
# `[--timeout SECONDS] -- COMMAND [ARG]...`: sets VM_EXEC to vm-exec with
# that timeout and WRAPPED to the command, which the wrapper runs in the VM
# with the native cluster of NBDK_VM_CLUSTER_STATE.
vm_wrapper_args() {
  local usage="usage: ${0##*/} [--timeout SECONDS] -- COMMAND [ARG]..."
  VM_EXEC=("$NBDK_VM_DIR/vm-exec")
  if [[ ${1:-} == --timeout ]]; then
    (($# >= 2)) || vm_die "$usage"
    VM_EXEC+=(--timeout "$2")
    shift 2
  fi
  [[ ${1:-} == -- ]] && shift
  (($#)) || vm_die "$usage"
  [[ -n ${NBDK_VM_CLUSTER_STATE:-} ]] || vm_die "${0##*/}: NBDK_VM_CLUSTER_STATE is not set"
  WRAPPED=("$@")
}

# Runs a command in the namespaces of the VMs' native cluster
# (NBDK_VM_CLUSTER_STATE), as `cluster exec` does.
vm_in_cluster() { NBDK_CLUSTER_STATE=$NBDK_VM_CLUSTER_STATE "$NBDK_VM_DIR/cluster" exec -- "$@"; }

# The native test cluster (cluster): its namespaces hold a tap that the
# plain VMs' qemu opens, and the cluster's address on that link; the guest
# takes the next address (guest-init.sh).
readonly NBDK_CLUSTER_TAP=nbdk-guest NBDK_CLUSTER_ADDR=10.254.254.1 NBDK_GUEST_ADDR=10.254.254.2

# The PID 1 of the cluster in state directory $1 (its namespaces, as the
# host sees it), printed only while it is that directory's (a recycled pid
# must never be killed or entered).
vm_cluster_pid() {
  local pid cmdline
  pid=$(cat "$1/pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *"/cluster init $1 "* ]] || return 1
  echo "$pid"
}

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

# The systemd mode's root disk: the overlay's upper layer (initramfs-init.sh).
vm_disk() { echo "$NBDK_VM_STATE/disk.img"; }

# Sets QEMU_ARGV for a VM in mode $1 (agent|console; see guest-init.sh);
# with $2 = systemd, systemd is PID 1 and the root keeps its writes on
# vm_disk across boots. With $3, the state directory of a running native
# cluster (cluster), qemu runs in that cluster's network namespace and the
# guest's one network device is the cluster's tap: the guest reaches Ceph
# there and nothing else. Without it the guest has no network device and
# brings up its own Ceph on lo (a systemd VM's on its disk). Needs KERNEL,
# INITRD and MODDIR from kernel.sh. TCG only: KVM does not work on these
# machines.
vm_qemu_argv() {
  local mode=$1 init=${2:-plain} cluster=${3:-}
  local append="console=ttyS0 quiet panic=-1 nbdk.stage2=$NBDK_VM_DIR/guest-init.sh nbdk.moddir=$MODDIR nbdk.mode=$mode"
  local nic=(-nic none) prefix=()
  if [[ -n $cluster ]]; then
    local pid
    pid=$(vm_cluster_pid "$cluster") || vm_die "no native test cluster runs in $cluster (test/vm/cluster start)"
    prefix=(nsenter "--net=/proc/$pid/ns/net" --)
    nic=(-netdev "tap,id=cluster,ifname=$NBDK_CLUSTER_TAP,script=no,downscript=no"
      -device virtio-net-pci,netdev=cluster)
    # net.ifnames=0: a systemd VM's udev keeps the link's name while the
    # guest configures it.
    append+=" nbdk.cluster=$cluster nbdk.addr=$NBDK_GUEST_ADDR nbdk.cluster_addr=$NBDK_CLUSTER_ADDR net.ifnames=0"
  fi
  QEMU_ARGV=(
    "${prefix[@]}" qemu-system-x86_64 -accel tcg,thread=multi -cpu max
    -m "${NBDK_VM_MEM:-2048}" -smp "${NBDK_VM_CPUS:-2}"
    -no-reboot "${nic[@]}"
    -kernel "$KERNEL" -initrd "$INITRD"
    -virtfs "local,path=${NBDK_VM_ROOT:-/},mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
    -virtfs "local,path=$NBDK_VM_STATE/share,mount_tag=nbdkshare,security_model=none,multidevs=remap"
  )
  if [[ -n ${NBDK_VM_ROOT:-} ]]; then
    # The repository's parent: the sources, the build trees, the cache and
    # the CSI tools beside it (../shared), at their host paths.
    local work
    work=$(dirname "$NBDK_REPO")
    QEMU_ARGV+=(-virtfs "local,path=$work,mount_tag=hostwork,security_model=none,readonly=on,multidevs=remap")
    append+=" nbdk.work=$work"
  fi
  if [[ $init == systemd ]]; then
    # No getty on the serial console: its device unit never shows up
    # here, and the wait for it keeps the system "starting" for 90 s.
    append+=" nbdk.init=systemd nbdk.disk=vda systemd.getty_auto=0"
    QEMU_ARGV+=(-drive "file=$(vm_disk),if=virtio,format=raw")
  fi
  QEMU_ARGV+=(-append "$append")
}

# The platforms the VM tests run on, by name: a kernel line (kernel.sh) and
# a userland. Sets NBDK_VM_KERNEL for kernel.sh.
#   debian12       Debian 12's kernel (6.1) and the host's Debian 12 (Ceph 16)
#   debian12-k612  bookworm-backports' kernel (6.12), the host's Debian 12
#   debian13       Debian 13's kernel (6.12) and root (Ceph 18), made by
#                  platform-root.sh; sets NBDK_VM_ROOT too
vm_platform() {
  unset NBDK_VM_ROOT
  case "$1" in
    debian12) export NBDK_VM_KERNEL=stable ;;
    debian12-k612) export NBDK_VM_KERNEL=backports ;;
    debian13)
      NBDK_VM_ROOT=$("$NBDK_VM_DIR/platform-root.sh" debian13) || vm_die "no debian13 root"
      export NBDK_VM_ROOT NBDK_VM_KERNEL=stable
      ;;
    *) vm_die "unknown platform $1: expected debian12, debian12-k612 or debian13" ;;
  esac
}

# Loads KVER, KERNEL, INITRD, MODDIR (fetching/building them if needed).
vm_load_kernel() {
  local out
  out=$("$NBDK_VM_DIR/kernel.sh") || vm_die "kernel.sh failed"
  eval "$out"
}

# A fresh state directory: a stale VM still using it is stopped first.
# With $1 = keep-disk the root disk stays (the next boot of the same host).
vm_fresh_state() {
  local pid
  if pid=$(vm_qemu_pid); then
    vm_log "stopping a stale VM (qemu pid $pid) left in $NBDK_VM_STATE"
    vm_kill_qemu "$pid" || vm_die "cannot stop the stale qemu $pid"
  fi
  if [[ ${1:-} == keep-disk ]]; then
    [[ -f $(vm_disk) ]] || vm_die "no root disk to boot again in $NBDK_VM_STATE"
    rm -rf "$NBDK_VM_STATE/share" "$NBDK_VM_STATE/console.log"
  else
    rm -rf "$NBDK_VM_STATE"
  fi
  mkdir -p "$NBDK_VM_STATE"/share/{jobs,out}
}

# A new, empty ext4 root disk (sparse): the overlay's upper layer.
vm_new_disk() {
  truncate -s "${NBDK_VM_DISK_SIZE:-4G}" "$(vm_disk)"
  mkfs.ext4 -q -F -L nbdk-root "$(vm_disk)" || vm_die "mkfs.ext4 of $(vm_disk) failed"
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
