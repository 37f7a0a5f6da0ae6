#!/usr/bin/env bash
# Prepares the container VM test on the host (CTest fixture container_images,
# after image_build made IMAGE):
#   images.sh NBDKEEPERD IMAGE UPGRADE_IMAGE STORAGE_CONF PLATFORM
# - UPGRADE_IMAGE: the same daemon under a new tag, for the upgrade scenario
#   (scripts/image.sh --tag), on PLATFORM's userland (--platform);
# - STORAGE_CONF: podman's storage.conf for the VM. Podman cannot keep its
#   own store on the VM's shared, overlaid root (overlayfs cannot be an
#   upper layer) and `podman load` of the 206 MB image takes ~160 s under
#   TCG: the VM's store lives on its /run (tmpfs) and reads the images from
#   a host store as an additional, read-only image store. A VM that boots
#   the host's root sees the host's own store; one that boots a platform's
#   root (test/vm/lib.sh's NBDK_VM_ROOT) sees only the shared directory
#   around the repository, so the two images are copied to a store beside
#   STORAGE_CONF (~6 s).
set -euo pipefail
binary=$1 image=$2 upgrade=$3 conf=$4 platform=$5
root=$(cd "$(dirname "$0")/../.." && pwd)
[[ $upgrade == */*:* ]] || { echo "images.sh: $upgrade: want localhost/NAME:TAG" >&2; exit 2; }
"$root/scripts/image.sh" --platform "$platform" --binary "$binary" --tag "${upgrade##*:}"
read -r driver store < <(podman info --format '{{.Store.GraphDriverName}} {{.Store.GraphRoot}}')
# The VM's podman runs as root with the overlay driver: an additional image
# store must be of the same driver.
if [[ $driver != overlay ]]; then
  echo "images.sh: the host's podman store ($store) uses $driver; the VM test needs overlay" >&2
  exit 1
fi
source "$root/test/vm/lib.sh"
vm_platform "$platform"
if [[ -n ${NBDK_VM_ROOT:-} ]]; then
  store=$(dirname "$conf")/image-store
  archive=$(dirname "$conf")/images.tar
  # Podman refuses a runroot path over 50 characters: a short one, for the load only.
  runroot=$(mktemp -d /tmp/nbdk-podman-run.XXXXXX)
  trap 'rm -rf "$runroot" "$archive"' EXIT
  rm -rf "$store" "$archive"
  podman save --multi-image-archive -o "$archive" "$image" "$upgrade" >/dev/null
  podman --root "$store" --runroot "$runroot" --storage-driver overlay load -i "$archive" >/dev/null
fi
cat >"$conf.tmp" <<CONF
# Written by test/container/images.sh for podman in the test VM.
[storage]
driver = "overlay"
graphroot = "/run/nbdk-podman/storage"
runroot = "/run/nbdk-podman/run"
[storage.options]
additionalimagestores = [ "$store" ]
CONF
mv "$conf.tmp" "$conf"
echo "images.sh: the VM's podman reads images from $store (storage.conf: $conf)"
