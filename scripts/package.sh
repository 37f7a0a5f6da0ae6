#!/usr/bin/env bash
# Builds the Debian package of this tree's build (deploy/debian: cpack from
# the CMake install rules) and prints its path. The platform is the build's:
# Debian 12's from the host's tree, Debian 13's from build-debian13
# (scripts/platform-build.sh).
#   scripts/package.sh [BUILD_DIR]   default build/; the package goes to
#                                    BUILD_DIR/packages/
# Then: apt-get install ./build/packages/nbdkeeper_*.deb
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-${NBDK_BUILD_DIR:-$root/build}}")
[[ -f $build/CPackConfig.cmake ]] || {
  echo "package.sh: $build is not a configured build tree (cmake -S . -B build first)" >&2
  exit 2
}
# The binaries, their man pages and the changelog; the tests are not needed.
cmake --build "$build" -j"$(nproc)" --target nbdkeeperd nbdkeeperctl nbdkeeperd_man_page nbdkeeperctl_man_page \
  debian_changelog >/dev/null
rm -rf "$build/packages"
(cd "$build" && cpack --config CPackConfig.cmake >/dev/null)
ls "$build"/packages/nbdkeeper_*.deb
