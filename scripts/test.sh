#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds nbdkeeper and runs every test. First
# what needs no VM, side by side: the host's build, then its unit and
# integration tests; the Debian 13 root and the build of what its tests run
# (scripts/platform-build.sh); both platforms' images (label `image`); the
# fuzzers' clang build. Then the real-kernel VM tests on Debian 12 (label
# `vm`: qemu boots Debian's kernel with nbd; its Ceph is a native cluster
# reached over a tap, test/vm/README.md), with the
# tests on the native test cluster beside them (label `cluster`:
# test/vm/cluster); the fuzzers (label `fuzz`, scripts/fuzz.sh); last the
# tests of what differs between platforms (label `platform`) on Debian 13:
# its Linux 6.12 and Ceph 18. Ends with a time table of every phase, VM boot
# and test (scripts/time-table.py; the reports stay in <build>/times).
#   scripts/test.sh            everything
#   scripts/test.sh -LE 'vm|fuzz'   host tests only (any ctest arguments pass through)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NBDK_BUILD_DIR:-$root/build}
d13=$root/build-debian13
times=$build/times
# The compile cache lives outside the checkout, keyed by paths relative to
# it (the unity sources' too: relative-unity-includes.sh), so a clean clone
# in any folder of a machine that built before compiles only what changed.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nbdkeeper/ccache}
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true

# phase NAME COMMAND...: runs COMMAND, and records its wall time and status
# in the time table.
phase() {
  local name=$1 start rc=0
  shift
  start=$(date +%s.%N)
  "$@" || rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$start" "$(date +%s.%N)" "$rc" >>"$times/phases.tsv"
  return "$rc"
}
# ctest_phase NAME DIR ARGS...: one ctest run as a phase, with its JUnit
# report (each test's time) in the table.
ctest_phase() {
  local name=$1 dir=$2
  shift 2
  phase "$name" ctest --test-dir "$dir" --output-on-failure --output-junit "$times/$name.xml" "$@"
}

# vm_phase NAME DIR ARGS...: a phase of VM tests. A test whose guest kernel
# died of an emulator fault (test/vm/emulator-faults.py) proved nothing
# about nbdkeeper: it runs once more, with its fixtures, as phase NAME-again;
# the table shows both runs, and for that test only the second counts.
vm_phase() {
  local name=$1 dir=$2 again rc=0
  ctest_phase "$@" && return 0
  # 1: another test failed too; the phase fails whatever the rerun does.
  again=$(python3 "$root/test/vm/emulator-faults.py" "$times/$name.xml" | paste -sd'|') || rc=1
  [[ -n $again ]] || return 1
  echo "scripts/test.sh: a guest kernel died of an emulator fault (an int3 oops under TCG); once more: $again" >&2
  ctest_phase "$name-again" "$dir" "${@:3}" -R "^($again)\$" || rc=1
  return "$rc"
}

mkdir -p "$build"
rm -rf "$times"
mkdir -p "$times"
phase setup "$root/scripts/setup.sh"
mkdir -p "$CCACHE_DIR"
# The tested build is the shipped one (-O2) with line tables for its debug
# information (-g1): backtraces keep their files and lines, and the compile
# takes about a quarter less time than with full -g.
configure_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The configure, its unity sources made cache-friendly (relative-unity-includes.sh).
configure() {
  cmake -S "$root" -B "$build" "${configure_args[@]}" >/dev/null && "$root/scripts/relative-unity-includes.sh" "$build"
}
if (($#)); then
  phase configure configure
  phase build cmake --build "$build" -j"$(nproc)"
  exec ctest --test-dir "$build" --output-on-failure "$@"
fi
export NBDK_VM_TIMES=$times/boots.tsv
print_table() { python3 "$root/scripts/time-table.py" "$times" || true; }
trap print_table EXIT

# Everything that needs no VM is done before the VM tests, not beside
# them: under TCG a VM test runs 2.5-4.5x slower beside a compile, even a
# niced one (node_vm: 62 s alone, 291 s beside the Debian 13 and fuzz
# builds), which costs more than the compile saves.
#   background NAME COMMAND...: a phase of its own, its output in
#   <times>/NAME.log; `wait_for NAME` waits and shows that log on failure.
declare -A background_pid
background() {
  local name=$1
  shift
  phase "$name" "$@" >"$times/$name.log" 2>&1 &
  background_pid[$name]=$!
}
wait_for() {
  wait "${background_pid[$1]}" && return 0
  echo "scripts/test.sh: $1 failed; its log ($times/$1.log):" >&2
  cat "$times/$1.log" >&2
  return 1
}
# images TREE NAME: a tree's image tests. Both platforms' images carry the
# same tag (localhost/nbdkeeperd:VERSION), so one tree's build, run and copy
# of it (container_images) must not interleave with the other's.
images() {
  flock "$times/podman.lock" ctest --test-dir "$1" --output-on-failure --output-junit "$times/$2.xml" -L image
}
# Debian 13: its root, the build of what its tests run, then its images.
debian13_chain() {
  NBDK_PLATFORM_TARGET=platform_tests "$root/scripts/platform-build.sh" debian13 &&
    phase debian13-images images "$d13" debian13-images
}
# The root's download overlaps the host's build.
background debian13-build-and-images debian13_chain
phase configure configure
phase build cmake --build "$build" -j"$(nproc)"
# Debian 12's image (built and run on the host, no VM), and the fuzzers'
# clang build, beside the host tests.
background debian12-images images "$build" debian12-images
background fuzz-build env NBDK_FUZZ_BUILD_DIR="$build/fuzz" "$root/scripts/fuzz.sh" --build

failed=0
ctest_phase host "$build" -LE 'vm|fuzz|image|cluster' -j"$(nproc)" || failed=1
wait_for debian12-images || failed=1
fuzz_built=0
wait_for fuzz-build && fuzz_built=1 || failed=1
wait_for debian13-build-and-images || {
  echo "scripts/test.sh: the Debian 13 build or its images failed (above)" >&2
  exit 1
}
# The tests on the native cluster (test/vm/cluster) wait on Ceph far more
# than they compute: beside the VM tests.
background cluster ctest --test-dir "$build" --output-on-failure --output-junit "$times/cluster.xml" -L cluster
vm_phase debian12-vm "$build" -L vm || failed=1
wait_for cluster || failed=1
if ((fuzz_built)); then
  ctest_phase fuzz "$build" -L fuzz --verbose || failed=1  # the table of runs and exec/s
fi
# Run even after a failure above: CI keeps one log, make it say everything.
# Its images were made and run before: their fixtures are not set up again
# (-FS).
vm_phase debian13-vm "$d13" -L platform -LE image -FS '^(image|container_images)$' || failed=1
exit "$failed"
