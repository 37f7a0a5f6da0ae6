#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds nbdkeeper and runs every test: the host
# unit and integration tests, the fuzzers (label `fuzz`, scripts/fuzz.sh),
# the real-kernel VM tests (label `vm`: qemu boots Debian's kernel with nbd
# and a Ceph cluster), then the tests that cover what differs between
# platforms (label `platform`) on Debian 13: its Linux 6.12 and Ceph 18,
# with the tree built in a Debian 13 root (scripts/platform-build.sh).
# Ends with a time table of every phase, VM boot and test
# (scripts/time-table.py; the reports stay in <build>/times).
#   scripts/test.sh            everything
#   scripts/test.sh -LE 'vm|fuzz'   host tests only (any ctest arguments pass through)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NBDK_BUILD_DIR:-$root/build}
d13=$root/build-debian13
times=$build/times
# The compile cache lives outside the checkout, so a clean clone on a
# machine that built before compiles only what changed.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nbdkeeper/ccache}

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

mkdir -p "$build"
rm -rf "$times"
mkdir -p "$times"
phase setup "$root/scripts/setup.sh"
mkdir -p "$CCACHE_DIR"
phase configure cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
phase build cmake --build "$build" -j"$(nproc)"

if (($#)); then
  exec ctest --test-dir "$build" --output-on-failure "$@"
fi
export NBDK_VM_TIMES=$times/boots.tsv
print_table() { python3 "$root/scripts/time-table.py" "$times" || true; }
trap print_table EXIT

# What needs no VM goes on meanwhile, at the lowest priority: the VM tests
# often wait (on Ceph, the kernel's timers, heals) and these take the idle
# cores. With autogroup scheduling the kernel weighs sessions, not
# processes, against each other (and qemu daemonizes into a session of its
# own): each chain runs in a session whose group is niced too.
#   background [--not-niced] NAME COMMAND...: a phase of its own, its
#   output in <times>/NAME.log; `wait_for NAME` waits and shows that log on
#   failure. --not-niced: for what mostly waits and must not starve (a Ceph
#   cluster's heartbeats and leases).
declare -A background_pid
background() {
  local nice=19
  [[ $1 == --not-niced ]] && { nice=0; shift; }
  local name=$1
  shift
  setsid -w bash -c '{ echo "$0" >/proc/self/autogroup; } 2>/dev/null; exec nice -n "$0" bash -c "phase \"\$0\" \"\$@\"" "$@"' \
    "$nice" "$name" "$@" >"$times/$name.log" 2>&1 &
  background_pid[$name]=$!
}
wait_for() {
  wait "${background_pid[$1]}" && return 0
  echo "scripts/test.sh: $1 failed; its log ($times/$1.log):" >&2
  cat "$times/$1.log" >&2
  return 1
}
# Debian 13: its root, the build of what its tests run, then its images.
debian13_chain() {
  NBDK_PLATFORM_TARGET=platform_tests "$root/scripts/platform-build.sh" debian13 &&
    ctest_phase debian13-images "$d13" -L image
}
export -f phase ctest_phase debian13_chain
export root build d13 times
background debian13-build-and-images debian13_chain
# Debian 12's image (built and run on the host, no VM).
background debian12-images ctest --test-dir "$build" --output-on-failure --output-junit "$times/debian12-images.xml" \
  -L image
# The fuzzers' clang build.
background fuzz-build env NBDK_FUZZ_BUILD_DIR="$build/fuzz" "$root/scripts/fuzz.sh" --build

failed=0
ctest_phase host "$build" -LE 'vm|fuzz|image|cluster' -j"$(nproc)" || failed=1
# The tests on the native cluster (test/vm/cluster) wait on Ceph far more
# than they compute: beside the VM tests.
background --not-niced cluster ctest --test-dir "$build" --output-on-failure --output-junit "$times/cluster.xml" \
  -L cluster
ctest_phase debian12-vm "$build" -L vm || failed=1
wait_for cluster || failed=1
wait_for debian12-images || failed=1
if wait_for fuzz-build; then
  ctest_phase fuzz "$build" -L fuzz --verbose || failed=1  # the table of runs and exec/s
else
  failed=1
fi
wait_for debian13-build-and-images || {
  echo "scripts/test.sh: the Debian 13 build or its images failed (above)" >&2
  exit 1
}
# Run even after a failure above: CI keeps one log, make it say everything.
# Its images were made and run in the background: their fixtures are not
# set up again (-FS).
ctest_phase debian13-vm "$d13" -L platform -LE image -FS '^(image|container_images)$' || failed=1
exit "$failed"
