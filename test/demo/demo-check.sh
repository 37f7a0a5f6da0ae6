#!/usr/bin/env bash
# CTest's demo_vm (runs in the VM): keeper_demo --quiet must exit 0 AND
# print a PASS summary with zero IO errors. CTest alone could check only one
# of the two (a pass regex makes it ignore the exit status).
#   demo-check.sh KEEPER_DEMO
set -uo pipefail
out=$("$1" --quiet)
rc=$?
echo "$out"
if ((rc != 0)); then
  echo "demo-check: keeper_demo exited $rc" >&2
  exit 1
fi
if ! grep -q '^keeper_demo: PASS - IO errors: 0 ' <<<"$out"; then
  echo "demo-check: no PASS summary with 0 IO errors" >&2
  exit 1
fi
