#!/usr/bin/env bash
# systemd's own check of systemd/nbdkeeper-volumes.service (any warning
# fails, as for nbdkeeperd.service), then what its shutdown side rests on:
# a stop command that unmaps the persisted volumes, run while nbdkeeperd and
# the network are still up (stop order is the reverse of the start order).
#   verify-volumes-unit.sh <unit file> <nbdkeeperctl binary>
set -euo pipefail
unit=$1 binary=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The installed paths (/usr/local/bin) do not exist here: point at the
# build. nbdkeeperd.service beside it, which it requires (verify-unit.sh
# checks that one).
sed "s#=/usr/local/bin/nbdkeeperctl #=$binary #" "$unit" >"$dir/nbdkeeper-volumes.service"
sed "s#^ExecStart=/usr/local/bin/nbdkeeperd #ExecStart=$binary #" "$(dirname "$unit")/nbdkeeperd.service" \
  >"$dir/nbdkeeperd.service"
out=$(systemd-analyze verify "$dir/nbdkeeper-volumes.service" 2>&1) || { echo "$out"; exit 1; }
if [[ -n $out ]]; then
  echo "systemd-analyze verify $unit:"
  echo "$out"
  exit 1
fi
want() {
  grep -Eq "$1" "$unit" || { echo "$unit: no line matching '$1' ($2)"; exit 1; }
}
want '^ExecStart=.* apply$' "maps the persisted volumes at boot"
want '^ExecStop=.* unmap-all --persisted --force$' "unmounts and unmaps them at shutdown"
want '^After=nbdkeeperd\.service$' "stops before the daemon"
want '^Wants=nbdkeeperd\.service$' "pulls the daemon in"
if grep -Eq '^(Requires|BindsTo|PartOf)=.*nbdkeeperd' "$unit"; then
  echo "$unit: a stop or restart of nbdkeeperd would stop it too, unmapping every persisted volume"
  exit 1
fi
want '^After=network-online\.target$' "stops before the network goes"
want '^Wants=network-online\.target$' "pulls the network in"
want '^Before=remote-fs\.target$' "mounts ready for remote-fs.target's users"
want '^RemainAfterExit=yes$' "active after apply, so that its stop runs"
echo "$unit: verified"
