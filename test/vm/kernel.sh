#!/usr/bin/env bash
# Provides a kernel with nbd for the test VM: Debian's linux-image package,
# unpacked (never installed) into the cache, plus an initramfs built from
# busybox-static, initramfs-init.sh and the modules the VM needs.
#
# Prints on stdout, for vm-start (shell-quoted, to eval):
#   KVER=<version>  KERNEL=<vmlinuz path>  INITRD=<initramfs path>  MODDIR=<dir>
# Progress goes to stderr. Re-uses the cache when the kernel version and the
# initramfs inputs (init script, module list) are unchanged.
# NBDK_VM_KERNEL picks the kernel line: "stable" (default: the distribution's
# own, Debian 12's 6.1) or "backports" (bookworm-backports' 6.12, from the apt
# source scripts/setup.sh adds). With NBDK_VM_ROOT (a platform's root
# filesystem, test/vm/platform-root.sh) the kernel comes from that root's apt
# instead: Debian 13's own 6.12. NBDK_VM_KERNEL_VERSION pins a version (e.g.
# 6.1.0-56-amd64).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Modules to insert, in this order, with parameters. Their dependencies are
# looked up in modules.dep and inserted first. The kernel may have some of
# them built in; those are skipped. crc32c_generic is a soft dependency
# (modules.softdep: "jbd2 pre: crypto-crc32c"), which modules.dep omits;
# libcrc32c allocates it when inserted, before modprobe works in the VM.
# A leading "?" marks a module that newer kernels merged into another (6.12
# has no fscache: netfs took it in).
readonly MODULES=(
  virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk
  9pnet 9pnet_virtio netfs ?fscache 9p overlay
  "nbd nbds_max=16"
  crc32c_generic crc16 mbcache jbd2 ext4
  libcrc32c xfs
)

line=${NBDK_VM_KERNEL:-stable}
root=${NBDK_VM_ROOT:-}
case "$line" in
  stable) metapackage=linux-image-amd64 ;;
  backports) metapackage=linux-image-amd64/bookworm-backports ;;
  *) vm_die "NBDK_VM_KERNEL=$line: expected stable or backports" ;;
esac
# The cache keeps one kernel per line: a root's kernel is its own line.
[[ -z $root ]] || line=$(basename "$root")

# The line a cached kernel belongs to (kernels cached before lines were
# recorded are the stable line's).
line_of() { cat "$1/.line" 2>/dev/null || echo stable; }

# apt of the host, or of the platform's root.
apt_of_line() {
  if [[ -n $root ]]; then
    chroot "$root" "$@"
  else
    "$@"
  fi
}

# The version the line's linux-image-amd64 depends on, e.g. 6.1.0-56-amd64.
wanted_version() {
  if [[ -n ${NBDK_VM_KERNEL_VERSION:-} ]]; then
    echo "$NBDK_VM_KERNEL_VERSION"
    return
  fi
  apt_of_line apt-cache depends "$metapackage" 2>/dev/null |
    sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n1
}

newest_cached_version() {
  local d
  for d in "$NBDK_VM_CACHE"/kernel-*/.complete; do
    [[ -e $d && $(line_of "$(dirname "$d")") == "$line" ]] && basename "$(dirname "$d")"
  done | sed 's/^kernel-//' | sort -V | tail -n1
}

# Downloads and unpacks linux-image-$1 into kernel-$1/.
fetch_kernel() {
  local kver=$1 dest=$NBDK_VM_CACHE/kernel-$1 tmp
  # apt-get download drops privileges to _apt when run as root: download in
  # a directory _apt can reach and write.
  # A root's apt downloads inside the root.
  tmp=$(mktemp -d "${root:-/tmp}/kernel.XXXXXX")
  chmod 0777 "$tmp"
  vm_log "downloading linux-image-$kver (line $line; once; cached in $NBDK_VM_CACHE)"
  if ! apt_of_line env -C "${tmp#"$root"}" apt-get download -q "linux-image-$kver" >&2; then
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$dest"
  dpkg -x "$tmp"/linux-image-"$kver"_*.deb "$dest"
  rm -rf "$tmp"
  # Debian 13's packages ship /usr/lib/modules only (merged /usr).
  [[ -e $dest/lib ]] || ln -s usr/lib "$dest/lib"
  depmod -b "$dest" "$kver"
  echo "$line" >"$dest/.line"
  touch "$dest/.complete"
  # The line's older kernels are kept no longer (~400 MB each once unpacked).
  local d
  for d in "$NBDK_VM_CACHE"/kernel-*; do
    if [[ $d != "$dest" && $(line_of "$d") == "$line" ]]; then rm -rf "$d"; fi
  done
}

kver=$(wanted_version)
mkdir -p "$NBDK_VM_CACHE"
# Two builds starting VMs at once must not unpack into the same directory.
exec 9>"$NBDK_VM_CACHE/.lock"
flock 9

if [[ -z $kver && -z $root ]] && [[ $(id -u) -eq 0 ]]; then
  vm_log "apt does not know linux-image-amd64; running apt-get update"
  apt-get update -qq >&2 || true
  kver=$(wanted_version)
fi
if [[ -n $kver && ! -e $NBDK_VM_CACHE/kernel-$kver/.complete ]]; then
  # Stale package lists name a kernel the mirror no longer serves: refresh
  # them once and ask again before falling back to the cache.
  if ! fetch_kernel "$kver" && [[ $(id -u) -eq 0 ]]; then
    vm_log "download failed; running apt-get update and retrying"
    apt_of_line apt-get update -qq >&2 || true
    kver=$(wanted_version)
    [[ -n $kver && -e $NBDK_VM_CACHE/kernel-$kver/.complete ]] || fetch_kernel "$kver" || kver_failed=1
  fi
  if [[ -n ${kver_failed:-} ]] || [[ ! -e $NBDK_VM_CACHE/kernel-$kver/.complete ]]; then
    fallback=$(newest_cached_version)
    [[ -n $fallback ]] || vm_die "cannot download linux-image-$kver and nothing is cached"
    vm_log "WARNING: cannot download linux-image-$kver; using cached $fallback"
    kver=$fallback
  fi
fi
if [[ -z $kver ]]; then
  kver=$(newest_cached_version)
  [[ -n $kver ]] || vm_die "apt knows no linux-image-amd64 (run apt-get update) and nothing is cached"
  vm_log "WARNING: apt knows no linux-image-amd64; using cached $kver"
fi

kdir=$NBDK_VM_CACHE/kernel-$kver
moddir=$kdir/lib/modules/$kver
kernel=$kdir/boot/vmlinuz-$kver
[[ -r $kernel ]] || vm_die "no $kernel in the unpacked package"

inputs_hash=$({
  cat "$NBDK_VM_DIR/initramfs-init.sh"
  printf '%s\n' "${MODULES[@]}"
} | sha256sum | cut -c1-16)
initrd=$NBDK_VM_CACHE/initramfs-$kver-$inputs_hash.cpio.gz

# Path (relative to $moddir) of module $1, or nothing if it is built in.
module_path() {
  local name=${1//-/_}
  awk -F: -v n="$name" '{
      f = $1; sub(/.*\//, "", f); sub(/\.ko(\.[a-z]+)?$/, "", f); gsub(/-/, "_", f)
      if (f == n) { print $1; exit }
    }' "$moddir/modules.dep"
}

module_deps() {
  awk -F: -v p="$1" '$1 == p { print $2; exit }' "$moddir/modules.dep"
}

is_builtin() {
  grep -Eq "/${1//_/[_-]}\.ko\$" "$moddir/modules.builtin" 2>/dev/null
}

declare -A placed=()
order=()
# Depth-first: a module's dependencies are placed before it.
place() {
  local path=$1 params=${2:-} dep
  [[ -n ${placed[$path]:-} ]] && return
  placed[$path]=1
  for dep in $(module_deps "$path"); do
    place "$dep"
  done
  order+=("$path${params:+ $params}")
}

build_initramfs() {
  local spec name params path staging entry file optional
  for spec in "${MODULES[@]}"; do
    read -r name params <<<"$spec"
    optional=
    [[ $name == \?* ]] && optional=1 name=${name#\?}
    path=$(module_path "$name")
    if [[ -z $path ]]; then
      is_builtin "$name" && continue
      [[ -n $optional ]] && continue
      vm_die "module $name is neither in modules.dep nor built into $kver"
    fi
    place "$path" "$params"
  done

  staging=$(mktemp -d)
  mkdir -p "$staging"/{bin,dev,proc,sys,modules}
  cp /bin/busybox "$staging/bin/busybox"
  install -m 0755 "$NBDK_VM_DIR/initramfs-init.sh" "$staging/init"
  for entry in "${order[@]}"; do
    read -r path params <<<"$entry"
    file=$(basename "$path")
    # busybox insmod loads only plain .ko files.
    case "$file" in
      *.ko.xz) xz -dc "$moddir/$path" >"$staging/modules/${file%.xz}"; file=${file%.xz} ;;
      *.ko.zst) zstd -qdc "$moddir/$path" >"$staging/modules/${file%.zst}"; file=${file%.zst} ;;
      *.ko.gz) gzip -dc "$moddir/$path" >"$staging/modules/${file%.gz}"; file=${file%.gz} ;;
      *) cp "$moddir/$path" "$staging/modules/$file" ;;
    esac
    echo "$file${params:+ $params}" >>"$staging/modules/order"
  done
  (cd "$staging" && find . | cpio -o -H newc --quiet | gzip -1) >"$initrd.tmp"
  mv "$initrd.tmp" "$initrd"
  rm -rf "$staging"
  # This kernel's older initramfs, and those of kernels no longer cached.
  local f v
  for f in "$NBDK_VM_CACHE"/initramfs-*.cpio.gz; do
    v=${f#"$NBDK_VM_CACHE"/initramfs-}
    v=${v%-*.cpio.gz}
    [[ $f == "$initrd" ]] && continue
    if [[ $v == "$kver" || ! -e $NBDK_VM_CACHE/kernel-$v ]]; then rm -f "$f"; fi
  done
  vm_log "built $(basename "$initrd") with ${#order[@]} modules"
}

[[ -s $initrd ]] || build_initramfs

printf "KVER=%q\n" "$kver"
printf "KERNEL=%q\n" "$kernel"
printf "INITRD=%q\n" "$initrd"
printf "MODDIR=%q\n" "$moddir"
