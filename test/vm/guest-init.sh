#!/bin/bash
# Stage 2 of the VM's boot: PID 1 after switch_root (see initramfs-init.sh),
# running from the host's root seen read-only through the overlay. Finishes
# the system setup, brings Ceph up (ceph-up.sh) or joins the native test
# cluster over its tap (nbdk.cluster=, vm-start), then serves jobs. With
# nbdk.init=systemd it only prepares the root and execs systemd, which runs
# the rest as two units: nbdk-vm-ceph.service (`guest-init.sh ceph`: the
# native cluster joined, or a Ceph of its own on the disk; `guest-init.sh
# leave` takes the cluster's link down when it stops), then
# nbdk-vm-agent.service (`guest-init.sh agent`, always agent mode).
#   nbdk.mode=agent    run each new share/jobs/*.job in name order, output
#                      to share/out/<id>.out, status to share/out/<id>.rc,
#                      until share/poweroff appears (vm-start, vm-exec, vm-stop)
#   nbdk.mode=console  run share/console.job on the serial console with a
#                      controlling tty, status to share/console.rc (vm-run)
# Readiness goes to share/ready, a failed bring-up to share/failed (with the
# Ceph logs in share/ceph-logs/); then the VM powers itself off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
readonly SHARE=/run/nbdk-vm/share
readonly HERE=$(dirname "$(readlink -f "$0")")

log() { echo "nbdk-vm: $*"; }

# Sleeps without a process: under TCG every fork+exec costs ~0.2 s, and
# the agent's loops would otherwise spend most of a short job's time there.
# Reads from a FIFO nobody writes to (opened by open_nap).
nap() { if [[ -n ${NAP_FD:-} ]]; then read -r -t "$1" -u "$NAP_FD" || true; else sleep "$1"; fi; }

poweroff_now() {
  sync
  # No init system to ask: the sysrq poweroff ends qemu (-no-reboot). It
  # runs asynchronously, and PID 1 must not exit meanwhile (that panics):
  # wait with a builtin, as programs may no longer load from 9p.
  echo o >/proc/sysrq-trigger
  while :; do nap 10; done
}

arg() {
  local a
  for a in $(cat /proc/cmdline); do
    [[ $a == "nbdk.$1="* ]] && echo "${a#*=}"
  done
}

# modprobe and depmod look in /lib/modules/<running version>: point it at
# the unpacked kernel in the host's cache, visible here at the same path.
link_modules() {
  local moddir
  moddir=$(arg moddir)
  mkdir -p /lib/modules
  ln -sfn "$moddir" "/lib/modules/$(uname -r)"
  # Encrypted volumes need device-mapper's crypt target, as the host setup
  # in docs/operate/systemd.md loads it; only their tests fail without it.
  modprobe dm_crypt || echo "guest-init.sh: modprobe dm_crypt failed" >&2
}

mount_share() {
  mkdir -p "$SHARE"
  # cache=none: files the host writes (jobs) show up at once.
  mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 nbdkshare "$SHARE"
}

# The agent's sleeps read a FIFO nobody writes to (see nap).
open_nap() {
  mkfifo /run/nbdk-vm/nap
  exec {NAP_FD}<>/run/nbdk-vm/nap
}

# What systemd as PID 1 does itself; done here without it.
setup_system() {
  mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts 2>/dev/null ||
    { mkdir -p /dev/pts && mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts; }
  mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
  mkdir -p /dev/shm && mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
  # Without udev these are missing, and bash process substitution needs /dev/fd.
  ln -sfn /proc/self/fd /dev/fd
  ln -sfn /proc/self/fd/0 /dev/stdin
  ln -sfn /proc/self/fd/1 /dev/stdout
  ln -sfn /proc/self/fd/2 /dev/stderr
  mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
  mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null || true
  hostname nbdk-vm
  ip link set lo up
  link_modules
}

# Prepares the root (on its disk, so only once per disk) and becomes
# systemd. The host's own enabled units are masked: its fstab, disks,
# databases and timers are not this VM's. systemd-tmpfiles must not empty
# /tmp: through the overlay that costs minutes.
exec_systemd() {
  (($$ == 1)) || { echo "guest-init.sh: not PID 1 of the test VM" >&2; exit 1; }
  link_modules
  if [[ ! -e /etc/nbdk-vm-root ]]; then
    # A build machine that is itself a container would make systemd take
    # the VM for one too (and skip udev and more).
    rm -f /.dockerenv /run/.containerenv
    echo nbdk-vm >/etc/hostname
    : >/etc/fstab
    mkdir -p /etc/tmpfiles.d
    ln -sf /dev/null /etc/tmpfiles.d/tmp.conf
    # Not targets: remote-fs.target, say, is where a test's units hang.
    local wanted
    for wanted in /etc/systemd/system/*.wants/*; do
      [[ $wanted == *.target ]] && continue
      [[ -e $wanted || -L $wanted ]] && ln -sfn /dev/null "/etc/systemd/system/${wanted##*/}"
    done
    # The cluster comes before network-online.target: to the units under
    # test it is the network storage a host reaches once online, and it
    # goes away after them at shutdown (a volume unmapped late would hang).
    cat >/etc/systemd/system/nbdk-vm-ceph.service <<EOF
[Unit]
Description=nbdkeeper test VM: the Ceph cluster
Before=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
TimeoutStartSec=600
ExecStart=$HERE/guest-init.sh ceph
ExecStop=$HERE/guest-init.sh leave
StandardOutput=journal+console
EOF
    cat >/etc/systemd/system/nbdk-vm-agent.service <<EOF
[Unit]
Description=nbdkeeper test VM: the host's jobs
Requires=nbdk-vm-ceph.service
After=nbdk-vm-ceph.service

[Service]
ExecStart=$HERE/guest-init.sh agent
StandardOutput=journal+console
EOF
    mkdir -p /etc/systemd/system/multi-user.target.wants
    ln -sfn /etc/systemd/system/nbdk-vm-ceph.service /etc/systemd/system/multi-user.target.wants/
    ln -sfn /etc/systemd/system/nbdk-vm-agent.service /etc/systemd/system/multi-user.target.wants/
    touch /etc/nbdk-vm-root
  fi
  exec /lib/systemd/systemd --unit=multi-user.target
}

bring_up_ceph() {
  local t0=$SECONDS rc
  "$HERE/ceph-up.sh" 2>&1 | tee "$SHARE/ceph-up.log"
  rc=${PIPESTATUS[0]}
  [[ $rc -eq 0 ]] && return 0
  log "Ceph bring-up failed after $((SECONDS - t0)) s"
  mkdir -p "$SHARE/ceph-logs"
  cp -r /run/nbdk-ceph/log/. "$SHARE/ceph-logs/" 2>/dev/null
  echo "ceph-up.sh failed" >"$SHARE/failed"
  return 1
}

# The native test cluster's client side (test/vm/cluster): the guest's one
# network device on the cluster's link, and its conf, keys and env as the
# cluster wrote them. Returns once the monitor accepts a connection.
join_cluster() {
  local dir t0=${EPOCHREALTIME/./} addr dev i
  dir=$(arg cluster) addr=$(arg cluster_addr)
  modprobe virtio_net || { echo "modprobe virtio_net failed" >"$SHARE/failed"; return 1; }
  for ((i = 0; i < 100; i++)); do
    for dev in /sys/class/net/*; do [[ ${dev##*/} != lo ]] && break 2; done
    nap 0.1
  done
  dev=${dev##*/}
  [[ $dev != lo ]] && ip addr add "$(arg addr)/24" dev "$dev" && ip link set "$dev" up ||
    { echo "no network device for the cluster's link" >"$SHARE/failed"; return 1; }
  mkdir -p /etc/ceph /run/ceph /run/nbdk-test /run/nbdk-ceph/log
  cp -p "$dir"/etc-ceph/* /etc/ceph/ && cp "$dir/env" /run/nbdk-test/env ||
    { echo "cannot read the cluster's conf in $dir" >"$SHARE/failed"; return 1; }
  for ((i = 0; i < 300; i++)); do
    if (exec 3<>"/dev/tcp/$addr/3300") 2>/dev/null; then
      echo "ceph-up: Ceph ready in $(((${EPOCHREALTIME/./} - t0) / 1000)) ms (the native cluster in $dir, over $dev)" \
        >"$SHARE/ceph-up.log"
      return 0
    fi
    nap 0.1
  done
  echo "the cluster's monitor at $addr:3300 did not answer over $dev" >"$SHARE/failed"
  return 1
}

# Sets NBD_CONFIGURED to the nbd devices the kernel has configured (their
# sysfs "pid" exists while configured, also with a dead connection).
nbd_configured() {
  local f
  NBD_CONFIGURED=()
  for f in /sys/block/nbd*/pid; do
    [[ -e $f ]] || continue
    f=${f#/sys/block/}
    NBD_CONFIGURED+=("/dev/${f%/pid}")
  done
}

# Tests share this VM: a device a job leaves configured is reported in its
# output (naming the culprit) and cleaned up, so later tests start clean.
clean_up_after_job() {
  local out=$1 dev src mnt rest
  shift
  # A job that leaves its volumes for the next one on purpose (a power cut
  # with volumes staged) says so with this file.
  if [[ -e /run/nbdk-vm/keep-devices ]]; then
    rm -f /run/nbdk-vm/keep-devices
    return
  fi
  nbd_configured
  for dev in "${NBD_CONFIGURED[@]}"; do
    [[ " $* " == *" $dev "* ]] && continue
    echo "vm-exec: WARNING: the job left $dev configured; unmounting and unmapping it" >>"$out"
    while read -r src mnt rest; do
      [[ $src == "$dev" ]] && umount -l "$mnt" >>"$out" 2>&1
    done </proc/mounts
    timeout 60 rbd-nbd unmap "$dev" >>"$out" 2>&1
  done
}

# Runs one agent job; a share/jobs/<id>.cancel written meanwhile kills it.
# The status goes to out/<id>.rc in one write ("<n>\n"): vm-exec accepts
# the file only once it holds a full line.
run_job() {
  local id=$1 pid rc
  nbd_configured
  local before=("${NBD_CONFIGURED[@]}")
  # setsid: the job leads its own process group, so a cancel reaches all of
  # it (not what it daemonized, e.g. rbd-nbd map without -f).
  setsid bash "$SHARE/jobs/$id.job" </dev/null >>"$SHARE/out/$id.out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [[ -e $SHARE/jobs/$id.cancel ]]; then
      log "cancelling job $id"
      kill -KILL -- "-$pid" 2>/dev/null
      rm -f "$SHARE/jobs/$id.cancel"
      break
    fi
    nap 0.1
  done
  wait "$pid"
  rc=$?
  clean_up_after_job "$SHARE/out/$id.out" "${before[@]}"
  echo "$rc" >"$SHARE/out/$id.rc"
}

serve_jobs() {
  local job id
  declare -A seen=()
  shopt -s nullglob
  while [[ ! -e $SHARE/poweroff ]]; do
    for job in "$SHARE"/jobs/*.job; do
      id=${job##*/}
      id=${id%.job}
      [[ -n ${seen[$id]:-} ]] && continue
      seen[$id]=1
      run_job "$id"
    done
    nap 0.1
  done
  log "poweroff requested"
}

run_console_job() {
  local rc
  # -c: the console becomes the job's controlling tty, so ^C and job
  # control work in an interactive shell.
  setsid -c -w bash "$SHARE/console.job" <>/dev/ttyS0 >&0 2>&0
  rc=$?
  echo "$rc" >"$SHARE/console.rc"
}

# Ready: the env for jobs, then the host is told.
announce_ready() {
  set -a
  source /run/nbdk-test/env
  set +a
  cp /run/nbdk-test/env "$SHARE/ready"
}

case "${1:-}" in
  ceph)  # nbdk-vm-ceph.service
    mount_share
    log "up after $(cut -d' ' -f1 /proc/uptime) s of guest time; kernel $(uname -r)"
    if [[ -n $(arg cluster) ]]; then
      join_cluster && exit 0
    else
      export NBDK_CEPH_STATE=/var/lib/nbdk-ceph NBDK_CEPH_STORE=bluestore
      bring_up_ceph && exit 0
    fi
    poweroff_now
    ;;
  leave)  # nbdk-vm-ceph.service's stop
    for dev in /sys/class/net/*; do
      [[ ${dev##*/} == lo ]] || ip link set "${dev##*/}" down
    done
    exit 0
    ;;
  agent)  # nbdk-vm-agent.service
    open_nap
    announce_ready
    serve_jobs
    poweroff_now
    ;;
esac
[[ $(arg init) == systemd ]] && exec_systemd
setup_system
mount_share
open_nap
log "up after $(cut -d' ' -f1 /proc/uptime) s of guest time; kernel $(uname -r)"
if [[ -n $(arg cluster) ]]; then ceph=join_cluster; else ceph=bring_up_ceph; fi
if "$ceph"; then
  announce_ready
  case "$(arg mode)" in
    console) run_console_job ;;
    *) serve_jobs ;;
  esac
fi
poweroff_now
