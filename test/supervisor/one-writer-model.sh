#!/usr/bin/env bash
# CTest one_writer_model: spin checks every interleaving of
# supervisor/one_writer.pml (two nodes, a Controller, Ceph's watches, lock,
# expiry and blocklist): no stale write and no fence without a takeover,
# under the model's two timing assumptions. Then the check must fail where
# the rule has a hole: each mutant (a rule the code once had, or one
# taken out) and the model without TAKEOVERS_LAST each give a
# counterexample, of the property named.
set -euo pipefail
model=$(cd "$(dirname "$0")/../../supervisor" && pwd)/one_writer.pml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# verify FLAGS...: spin's verdict on the model built with FLAGS: "ok", or
# the assertion its first counterexample violates.
verify() {
  spin "$@" -a "$model" >spin.log 2>&1 || { cat spin.log >&2; exit 1; }
  gcc -O2 -DSAFETY -w -o pan pan.c
  # -E: a node that waits forever (refused, fenced) is a valid end.
  ./pan -E -m1000000 >pan.log 2>&1 || true
  grep -q 'Full statespace search' pan.log || { tail -20 pan.log >&2; echo "one-writer-model: pan did not finish" >&2; exit 1; }
  if grep -q 'errors: 0$' pan.log; then
    echo ok
  else
    sed -n 's/^pan:[0-9]*: assertion violated *\(.*\) (at depth.*/\1/p' pan.log | head -1
  fi
}
fail() { echo "one-writer-model: FAIL: $*" >&2; exit 1; }

got=$(verify)
[[ $got == ok ]] || fail "the model breaks a property: $got (spin -a $model; gcc pan.c; ./pan -E; spin -t -p)"
states=$(sed -n 's/^ *\([0-9][0-9]*\) states, stored.*/\1/p' pan.log | head -1)
echo "one-writer-model: ok: no stale write and no fence without a takeover, over $states states"

expect() {
  local property=$1 why=$2
  shift 2
  got=$(verify "$@")
  [[ $got == *"$property"* ]] || fail "$* ($why): want a violation of $property, got: $got"
  echo "one-writer-model: ok: $* ($why) breaks $property"
}
expect '[me]' 'no --exclusive, clients by difference: two mounts' -DPRE_FIX
expect 'stale' 'a re-attach of a mount another node wrote since' -DNO_REATTACH_CHECK
expect 'taken' 'a Controller call beside a re-attach fences it' -DFENCE_ON_WATCHERS
expect 'stale' 'a takeover let go before the re-attach looked twice' -DSHORT_TAKEOVERS
