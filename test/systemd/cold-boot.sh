#!/usr/bin/env bash
# The power cut (CTest systemd_cold_boot, after systemd_vm left volumes
# staged): cuts the systemd VM's power, boots the same root disk again and
# runs the ColdBoot tests there. Needs NBDK_VM_DIR and NBDK_VM_STATE (CTest
# sets both).
#   cold-boot.sh <systemd_vm_test binary>
set -euo pipefail
vm=${NBDK_VM_DIR:?} test_bin=${1:?usage: cold-boot.sh <systemd_vm_test>}

# The next boot starts from an empty share: keep the earlier jobs' output.
rm -rf "$NBDK_VM_STATE/before-power-cut"
cp -r "$NBDK_VM_STATE/share/out" "$NBDK_VM_STATE/before-power-cut"
"$vm/vm-stop" --power-cut
start=$(date +%s%N)
"$vm/vm-start" --systemd --boot-again --timeout 540
echo "cold-boot: booted again, Ceph ready, after $((($(date +%s%N) - start) / 1000000000)) s"
exec "$vm/vm-exec" --timeout 600 -- "$test_bin" --gtest_filter='ColdBoot.*'
