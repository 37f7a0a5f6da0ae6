#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz) with clang, ASan and UBSan in a
# build directory of their own and runs each for a bounded time, printing
# its runs and executions per second. Exits non-zero when any target
# crashes, leaks, times out or breaks an invariant; the input that did it is
# kept as <build dir>/artifacts/<target>-crash-* (replay: the target binary
# with that file as its argument).
#   scripts/fuzz.sh                   every target, 20 s each
#   scripts/fuzz.sh 3600 stash http_request   those targets, an hour each
#   scripts/fuzz.sh --build           builds every target, runs none
# NBDK_FUZZ_BUILD_DIR: the build directory (default build-fuzz); its corpus/
# keeps what a run found for the next run. NBDK_FUZZ_JOBS: targets run at
# once (default: the number of cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NBDK_FUZZ_BUILD_DIR:-$root/build-fuzz}
build_only=0
if [[ ${1:-} == --build ]]; then
  build_only=1
  shift
fi
seconds=${1:-20}
(($#)) && shift
jobs=${NBDK_FUZZ_JOBS:-$(nproc)}

targets=("$@")
if ((${#targets[@]} == 0)); then
  for source in "$root"/test/fuzz/fuzz_*.cc; do
    name=${source##*/fuzz_}
    targets+=("${name%.cc}")
  done
fi

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DNBDK_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  "${launcher[@]}" >/dev/null
"$root/scripts/relative-unity-includes.sh" "$build"
cmake --build "$build" -j"$jobs" --target "${targets[@]/#/fuzz_}" >/dev/null
((build_only)) && exit 0

mkdir -p "$build/corpus" "$build/artifacts" "$build/logs"
# One target: the tree's seeds are read, never written; new finds go to the
# build directory's corpus. The exit status lands in logs/<target>.rc.
run_target() {
  local name=$1 rc=0
  mkdir -p "$build/corpus/$name"
  "$build/test/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$name-" "$build/corpus/$name" "$root/test/fuzz/corpus/$name" \
    >"$build/logs/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$build/logs/$name.rc"
}
export -f run_target
export build root seconds
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_target {}'

failed=0
printf '%-20s %12s %10s  %s\n' target runs exec/s result
for name in "${targets[@]}"; do
  log=$build/logs/$name.log
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  result=ok
  if [[ $(cat "$build/logs/$name.rc") != 0 ]]; then
    result="FAILED (log: $log)"
    failed=1
  fi
  printf '%-20s %12s %10s  %s\n' "$name" "${runs:--}" "${rate:--}" "$result"
done
if ((failed)); then
  for name in "${targets[@]}"; do
    [[ $(cat "$build/logs/$name.rc") == 0 ]] || { echo "--- $name"; tail -n 40 "$build/logs/$name.log"; }
  done
fi
exit "$failed"
