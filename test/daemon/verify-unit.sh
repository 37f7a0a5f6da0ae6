#!/usr/bin/env bash
# systemd's own check of systemd/nbdkeeperd.service: unknown keys, bad
# values and a missing ExecStart binary are warnings that
# `systemd-analyze verify` prints but does not fail on, so any output fails.
#   verify-unit.sh <unit file> <nbdkeeperd binary>
set -euo pipefail
unit=$1 binary=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The installed path (/usr/local/bin) does not exist here: point at the build.
sed "s#^ExecStart=/usr/local/bin/nbdkeeperd #ExecStart=$binary #" "$unit" > "$dir/nbdkeeperd.service"
grep -q "^ExecStart=$binary " "$dir/nbdkeeperd.service" || { echo "no ExecStart=/usr/local/bin/nbdkeeperd in $unit"; exit 1; }
out=$(systemd-analyze verify "$dir/nbdkeeperd.service" 2>&1) || { echo "$out"; exit 1; }
if [[ -n $out ]]; then
  echo "systemd-analyze verify $unit:"
  echo "$out"
  exit 1
fi
echo "systemd-analyze verify: $unit is clean"
