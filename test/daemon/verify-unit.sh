#!/usr/bin/env bash
# systemd's own check of systemd/nbdkeeperd.service: unknown keys, bad
# values and a missing ExecStart binary are warnings that
# `systemd-analyze verify` prints but does not fail on, so any output fails.
# Then the hardening: no setting that gives the service a mount namespace of
# its own (its mounts must reach the host), and `systemd-analyze security`'s
# exposure no worse than docs/operate/systemd.md says.
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
# systemd.exec(5): each of these is implemented with a mount namespace.
private_mounts='ProtectSystem|ProtectHome|PrivateTmp|PrivateDevices|PrivateMounts|PrivateIPC|ReadWritePaths|ReadOnlyPaths|InaccessiblePaths|ExecPaths|NoExecPaths|TemporaryFileSystem|BindPaths|BindReadOnlyPaths|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectProc|ProcSubset|MountFlags|MountAPIVFS|RootDirectory|RootImage|LogNamespace'
if grep -En "^($private_mounts)=" "$unit"; then
  echo "$unit: the settings above give the service its own mount namespace; its mounts would not reach the host"
  exit 1
fi
# 50 is an exposure of 5.0 (docs/operate/systemd.md's figure).
if ! out=$(systemd-analyze security --offline=yes --threshold=50 "$dir/nbdkeeperd.service" 2>&1); then
  echo "$out" | tail -40
  echo "systemd-analyze security: exposure above 5.0"
  exit 1
fi
echo "systemd-analyze verify: $unit is clean; $(echo "$out" | grep -o 'Overall exposure level.*')"
