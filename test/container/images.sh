#!/usr/bin/env bash
# Prepares the container VM test on the host (CTest fixture container_images,
# after image_build made localhost/nbdkeeperd:<version>):
#   images.sh NBDKEEPERD UPGRADE_IMAGE STORAGE_CONF PLATFORM
# - UPGRADE_IMAGE: the same daemon under a new tag, for the upgrade scenario
#   (scripts/image.sh --tag), on PLATFORM's userland (--platform);
# - STORAGE_CONF: podman's storage.conf for the VM. The VM sees the host's
#   / read-only under an overlay, so the host's image store is there, but
#   podman cannot keep its own store on that overlay (overlayfs cannot be an
#   upper layer) and `podman load` of the 206 MB image takes ~160 s under
#   TCG: the VM's store lives on its /run (tmpfs) and reads the images from
#   the host's store as an additional, read-only image store.
set -euo pipefail
binary=$1 upgrade=$2 conf=$3 platform=$4
root=$(cd "$(dirname "$0")/../.." && pwd)

[[ $upgrade == */*:* ]] || { echo "images.sh: $upgrade: want localhost/NAME:TAG" >&2; exit 2; }
"$root/scripts/image.sh" --platform "$platform" --binary "$binary" --tag "${upgrade##*:}"
read -r driver graphroot < <(podman info --format '{{.Store.GraphDriverName}} {{.Store.GraphRoot}}')
# The VM's podman runs as root with the overlay driver: an additional image
# store must be of the same driver.
if [[ $driver != overlay ]]; then
  echo "images.sh: the host's podman store ($graphroot) uses $driver; the VM test needs overlay" >&2
  exit 1
fi
cat >"$conf.tmp" <<CONF
# Written by test/container/images.sh for podman in the test VM.
[storage]
driver = "overlay"
graphroot = "/run/nbdk-podman/storage"
runroot = "/run/nbdk-podman/run"

[storage.options]
additionalimagestores = [ "$graphroot" ]
CONF
mv "$conf.tmp" "$conf"
echo "images.sh: the VM's podman reads images from $graphroot (storage.conf: $conf)"
