#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds nbdkeeperd and runs it in the
# foreground with a default configuration: CSI on
# unix:///run/nbdkeeper/csi.sock, health on http://127.0.0.1:9810.
# Extra arguments go to nbdkeeperd (see --help). Ctrl-C stops it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${NBDK_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh" --build-only
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target nbdkeeperd
echo "nbdkeeperd: try  curl -s 127.0.0.1:9810/status  in another terminal" >&2
exec "$build/daemon/nbdkeeperd" "$@"
