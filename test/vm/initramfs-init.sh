#!/bin/busybox sh
# /init of the VM's initramfs (busybox only). Its one job: load the modules,
# make the host's / the VM's root (read-only 9p under a tmpfs overlay) and
# switch_root to stage 2, guest-init.sh from the repository. Everything else
# lives in stage 2 so that editing it needs no initramfs rebuild.
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
  echo "nbdk-initramfs: $*"
  # With -no-reboot and panic=-1 a dead init makes qemu exit, so the host
  # notices at once instead of waiting for its timeout.
  echo o >/proc/sysrq-trigger
  sleep 5
  exit 1
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# Written by kernel.sh in dependency order: "<module file> [params...]".
while read -r ko params; do
  insmod "/modules/$ko" $params || fail "insmod $ko failed"
done </modules/order

stage2= disk= work=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    nbdk.stage2=*) stage2=${arg#nbdk.stage2=} ;;
    nbdk.disk=*) disk=${arg#nbdk.disk=} ;;
    nbdk.work=*) work=${arg#nbdk.work=} ;;
  esac
done
[ -n "$stage2" ] || fail "no nbdk.stage2= on the kernel command line"

mkdir -p /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /lower ||
  fail "cannot mount the host root over 9p"
# The overlay's upper layer: tmpfs, or with nbdk.disk=<dev> an ext4 disk
# that keeps what the VM wrote (installed files, the node journal) across a
# power cut and the next boot, as a host's root disk does.
if [ -n "$disk" ]; then
  mount -t ext4 "/dev/$disk" /rw || fail "cannot mount /dev/$disk"
else
  mount -t tmpfs -o mode=0755 tmpfs /rw
fi
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
  fail "cannot mount the overlay root"
# A platform's own root (not the host's) does not hold the repository: the
# host's directory around it comes as a second share, at its own path,
# read-only under an overlay of its own as the root is.
if [ -n "$work" ]; then
  mkdir -p /work-lower /rw/work-upper /rw/work-work "/newroot$work"
  mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostwork /work-lower ||
    fail "cannot mount the host's $work over 9p"
  mount -t overlay overlay -o lowerdir=/work-lower,upperdir=/rw/work-upper,workdir=/rw/work-work "/newroot$work" ||
    fail "cannot mount the overlay on $work"
fi
for d in proc sys dev; do
  mount --move "/$d" "/newroot/$d" || fail "cannot move /$d"
done
[ -x "/newroot$stage2" ] || fail "stage 2 $stage2 is missing or not executable"
exec switch_root /newroot "$stage2"
