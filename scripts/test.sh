#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds nbdkeeper and runs every test: the host
# unit and integration tests, the fuzzers (label `fuzz`, scripts/fuzz.sh),
# then the real-kernel VM tests (label `vm`: qemu boots Debian's kernel with
# nbd and a one-node Ceph cluster), then the tests that cover what differs
# between platforms (label `platform`) on Debian 13: its Linux 6.12 and Ceph
# 18, with the tree built in a Debian 13 root (scripts/platform-build.sh).
#   scripts/test.sh            everything
#   scripts/test.sh -LE 'vm|fuzz'   host tests only (any ctest arguments pass through)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NBDK_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"

if (($#)); then
  exec ctest --test-dir "$build" --output-on-failure "$@"
fi
# Host tests in parallel; then the VM tests, which share one VM, one at a
# time; then the fuzzers (label fuzz: their clang build, every core) and
# the Debian 13 platform tests.
ctest --test-dir "$build" --output-on-failure -LE 'vm|fuzz' -j"$(nproc)"
# Debian 13's root and the build of what its tests run, and the fuzzers'
# clang build, go on meanwhile, at the lowest priority: the VM tests often
# wait (on Ceph, the kernel's timers, heals), and the builds take the idle
# cores. With autogroup scheduling the kernel weighs sessions, not
# processes, against each other (and qemu daemonizes into a session of its
# own): each build runs in a session whose group is niced too.
background() {
  local log=$1
  shift
  setsid -w bash -c '{ echo 19 >/proc/self/autogroup; } 2>/dev/null; exec nice -n 19 "$@"' background "$@" >"$log" 2>&1 &
}
platform_log=$build/platform-build-debian13.log
background "$platform_log" env NBDK_PLATFORM_TARGET=platform_tests "$root/scripts/platform-build.sh" debian13
platform_build=$!
fuzz_log=$build/fuzz-build.log
background "$fuzz_log" env NBDK_FUZZ_BUILD_DIR="$build/fuzz" "$root/scripts/fuzz.sh" --build
fuzz_build=$!
failed=0
ctest --test-dir "$build" --output-on-failure -L vm || failed=1
if ! wait "$fuzz_build"; then
  cat "$fuzz_log" >&2
  failed=1
fi
ctest --test-dir "$build" --output-on-failure -L fuzz --verbose || failed=1  # the table of runs and exec/s
if ! wait "$platform_build"; then
  cat "$platform_log" >&2
  echo "scripts/test.sh: the Debian 13 build failed (above)" >&2
  exit 1
fi
# Run even after a failure above: CI keeps one log, make it say everything.
ctest --test-dir "$root/build-debian13" --output-on-failure -L platform || failed=1
exit "$failed"
