#!/usr/bin/env bash
# Installs everything nbdkeeper needs to build, run and test on Debian 12.
# Idempotent: safe to run again; apt-get skips what is already installed.
#   scripts/setup.sh               everything
#   scripts/setup.sh --build-only  what building the daemon needs
#   scripts/setup.sh --image       that, and what scripts/image.sh needs
#   scripts/setup.sh --print LIST  LIST's packages, one a line (build,
#                                  vm-guest), for test/vm/platform-root.sh
set -euo pipefail

# What compiling the daemon and its tests needs.
build_packages=(
  build-essential cmake pkg-config
  libuv1-dev libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  rapidjson-dev librbd-dev librados-dev libnl-genl-3-dev libnl-3-dev
  libgtest-dev libgmock-dev libsystemd-dev libhttp-parser-dev libmount-dev libblkid-dev
  libssl-dev libcryptsetup-dev  # encryption/: scrypt and AES-GCM, LUKS2 through libcryptsetup
  help2man  # the man pages, made of each binary's --help
)
# The host's own checks.
check_packages=(
  systemd  # systemd-analyze verify checks the unit file
  clang libclang-rt-dev  # scripts/fuzz.sh: libFuzzer, ASan and UBSan
  ninja-build mold ccache  # the build: ninja, mold for the tests, a compile cache outside the checkout
  lintian  # test/deploy checks the Debian package (scripts/package.sh)
  spin  # test/supervisor/one-writer-model.sh checks supervisor/one_writer.pml
  clang-format  # scripts/format.sh: the sources' one layout (CTest source_format)
)
# The real-kernel VM harness (test/vm): qemu boots Debian's kernel, which has
# nbd (the host side), and a one-node Ceph and the tests' tools run inside it
# from the host's own packages (the guest side; a platform with a root of its
# own installs these there).
vm_host_packages=(qemu-system-x86 busybox-static cpio)
vm_guest_packages=(
  kmod ceph-mon ceph-osd ceph-common rbd-nbd
  e2fsprogs xfsprogs fio util-linux iproute2 procps curl
  python3-yaml  # test/container reads the DaemonSet's manifest
  iptables      # test/chaos/fault_suite cuts the node off from Ceph
  podman conmon runc  # test/container runs the node image in the VM
  cryptsetup-bin python3-cryptography  # encrypted volumes made and opened as ceph-csi does (test/csi/controller)
)
# scripts/image.sh: mmdebstrap builds the root filesystem (gpg lets it check
# the archive keys), podman makes and runs the image; runc runs it where
# crun cannot (test/image).
image_packages=(mmdebstrap gpg podman conmon runc)

if [[ ${1:-} == --print ]]; then
  case "${2:-}" in
    build) printf '%s\n' "${build_packages[@]}" ;;
    vm-guest) printf '%s\n' "${vm_guest_packages[@]}" ;;
    *) echo "setup.sh --print: expected build or vm-guest" >&2; exit 2 ;;
  esac
  exit 0
fi

want=("${build_packages[@]}" "${check_packages[@]}")
case "${1:-}" in
  --build-only) ;;
  --image) want+=("${image_packages[@]}") ;;
  *) want+=("${vm_host_packages[@]}" "${vm_guest_packages[@]}" "${image_packages[@]}") ;;
esac

sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
refresh=
# The VM tests' second kernel (Linux 6.12, test/vm/kernel.sh's "backports"
# line) comes from bookworm-backports. apt never installs from it unless asked
# (priority 100): the source only lets `apt-get download` fetch that kernel.
if [[ -z "${1:-}" ]] && ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' 'Components: main' \
    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
    $sudo tee /etc/apt/sources.list.d/nbdkeeper-bookworm-backports.sources >/dev/null
  refresh=1
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The manifest check (test/deploy) runs node; any node and npm on the PATH
# serve, else Debian's.
if [[ -z "${1:-}" ]] && ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
# It renders the kustomize overlays with `kubectl kustomize`: any kubectl on
# the PATH serves, else Debian's kubernetes-client (1.20, kustomize v2.0.3;
# it would clash with another package's /usr/bin/kubectl).
if [[ -z "${1:-}" ]] && ! command -v kubectl >/dev/null; then
  missing+=(kubernetes-client)
fi
if ((${#missing[@]})) || [[ -n $refresh ]]; then
  $sudo apt-get update -qq
fi
if ((${#missing[@]})); then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
