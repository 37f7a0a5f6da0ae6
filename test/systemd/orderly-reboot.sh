#!/usr/bin/env bash
# The orderly reboot (CTest systemd_reboot, the systemd VM's last suite):
# the bare-metal quick start and its persisted volumes (BeforeReboot),
# `systemctl reboot` in the VM (qemu runs with -no-reboot, so it exits once
# the guest's orderly shutdown is done), the same disk booted again, then
# AfterReboot. Needs NBDK_VM_DIR and NBDK_VM_STATE (CTest sets both).
#   orderly-reboot.sh <reboot_vm_test binary>
set -euo pipefail
vm=${NBDK_VM_DIR:?} test_bin=${1:?usage: orderly-reboot.sh <reboot_vm_test>}
source "$vm/lib.sh"

"$vm/vm-exec" --timeout 600 -- "$test_bin" --gtest_filter='BeforeReboot.*'
# The next boot starts from an empty share: keep this one's output.
rm -rf "$NBDK_VM_STATE/before-reboot"
cp -r "$NBDK_VM_STATE/share/out" "$NBDK_VM_STATE/before-reboot"
pid=$(vm_qemu_pid) || vm_die "the VM is not running"
start=$(date +%s%N)
# From a timer, so that this job's answer reaches the host before the agent stops.
"$vm/vm-exec" --timeout 60 -- systemd-run --on-active=2 systemctl reboot
for ((i = 0; i < 3000; i++)); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  vm_log "the VM did not finish its shutdown within 300 s"
  vm_console_tail 80
  vm_kill_qemu "$pid" || true
  exit 1
fi
echo "orderly-reboot: the guest shut down in $((($(date +%s%N) - start) / 1000000)) ms"
rm -f "$NBDK_VM_STATE/qemu.pid"
"$vm/vm-start" --systemd --boot-again --timeout 540
exec "$vm/vm-exec" --timeout 600 -- "$test_bin" --gtest_filter='AfterReboot.*'
