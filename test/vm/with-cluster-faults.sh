#!/bin/bash
# Runs a command in the test VM whose faults stop the cluster's own
# processes (fault_vm: the monitor, every OSD), where the VM's Ceph is the
# native cluster (NBDK_VM_CLUSTER_STATE). Runs on the host: it serves the
# command's requests, each a file <id>.req in the VM's share (the guest's
# /run/nbdk-vm/share/faults, NBDK_CLUSTER_FAULTS in the command's
# environment) holding "STOP|CONT ceph-mon|ceph-osd", by signalling those
# processes inside the cluster's namespaces, and answers in <id>.done ("ok"
# or why not). Nothing else is accepted. Whatever the command left stopped
# is continued when it ends.
#   with-cluster-faults.sh [--timeout SECONDS] -- COMMAND [ARG]...
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
vm_wrapper_args "$@"
faults=$NBDK_VM_STATE/share/faults

serve() {
  local req verb program
  shopt -s nullglob
  while :; do
    for req in "$faults"/*.req; do
      read -r verb program <"$req" || true
      case "$verb $program" in
        "STOP ceph-mon" | "STOP ceph-osd" | "CONT ceph-mon" | "CONT ceph-osd")
          if vm_in_cluster pkill "-$verb" -x "$program"; then echo ok; else echo "no $program runs in the cluster"; fi ;;
        *) echo "not a request this serves: '$verb $program'" ;;
      esac >"${req%.req}.answer"
      rm -f "$req"
      mv "${req%.req}.answer" "${req%.req}.done"
    done
    sleep 0.1
  done
}

# However this ends, the server first (no STOP after the CONTs), then every
# Ceph process it may have left stopped goes on.
server=
finish() {
  [[ -z $server ]] || { kill "$server"; wait "$server"; } 2>/dev/null
  vm_in_cluster pkill -CONT -x ceph-mon
  vm_in_cluster pkill -CONT -x ceph-osd
  rm -rf "$faults"
}
trap finish EXIT
rm -rf "$faults"
mkdir -p "$faults"
serve &
server=$!
"${VM_EXEC[@]}" --env NBDK_CLUSTER_FAULTS=/run/nbdk-vm/share/faults -- "${WRAPPED[@]}"
exit $?  # the command's status; finish runs on the way out
