#!/usr/bin/env bash
# Makes the unity sources CMake generated in a build tree include their
# files by path from the source root ("csi/x.cc", found through the
# project's -I of the root) instead of by absolute path, so that the compile
# cache (ccache, with CCACHE_BASEDIR at the checkout) hits in a clean clone
# in any folder: an absolute path in a unity source is part of what ccache
# hashes. Run after each configure (scripts/test.sh, platform-build.sh,
# fuzz.sh). CMake writes each unity source again at every configure: one
# whose rewrite is what it was gets back the time of that first rewrite
# (kept in <source>.relative), so that nothing it includes is rebuilt.
#   relative-unity-includes.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: relative-unity-includes.sh BUILD_DIR}
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
[[ -n $source_dir ]] || { echo "relative-unity-includes.sh: $build is not a configured build tree" >&2; exit 1; }
while IFS= read -r -d '' unity; do
  sed -i "s|^#include \"$source_dir/|#include \"|" "$unity"
  if cmp -s "$unity" "$unity.relative"; then
    touch -r "$unity.relative" "$unity"
  else
    cp -p "$unity" "$unity.relative"
  fi
done < <(find "$build" -path '*/Unity/*' -type f \( -name 'unity_*_cxx.cxx' -o -name 'unity_*_c.c' \) -print0)
