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
# Host tests in parallel; the fuzzers (a clang build of their own, then every
# core); then the VM tests, which share one VM, one at a time.
ctest --test-dir "$build" --output-on-failure -LE 'vm|fuzz' -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -L fuzz --verbose  # the table of runs and exec/s
# Debian 13's root and the build of what its tests run go on meanwhile, at
# the lowest priority: the VM tests often wait (on Ceph, the kernel's
# timers, heals), and the build takes the idle cores. With autogroup
# scheduling the kernel weighs sessions, not processes, against each other
# (and qemu daemonizes into a session of its own): the build runs in a
# session whose group is niced too.
platform_log=$build/platform-build-debian13.log
setsid -w bash -c '{ echo 19 >/proc/self/autogroup; } 2>/dev/null; exec nice -n 19 "$@"' platform-build \
  env NBDK_PLATFORM_TARGET=platform_tests "$root/scripts/platform-build.sh" debian13 >"$platform_log" 2>&1 &
platform_build=$!
failed=0
ctest --test-dir "$build" --output-on-failure -L vm || failed=1
if ! wait "$platform_build"; then
  cat "$platform_log" >&2
  echo "scripts/test.sh: the Debian 13 build failed (above)" >&2
  exit 1
fi
# Run even after a failure above: CI keeps one log, make it say everything.
ctest --test-dir "$root/build-debian13" --output-on-failure -L platform || failed=1
exit "$failed"
