#!/usr/bin/env bash
# Runs the nbdkeeperd image (scripts/image.sh) with podman:
#   image_test.sh IMAGE VERSION
# --version and --help; every program the daemon runs is there and links;
# then the daemon as the container's main process, as Kubernetes starts it:
# an orphan reparented to PID 1 is reaped, and SIGTERM stops it with status 0,
# also in the host's PID namespace.
# The same run with the daemon itself as PID 1 shows why tini is there: the
# orphan stays a zombie (the daemon reaps only its own children).
set -euo pipefail
image=$1 version=$2
fail() { echo "image_test: FAIL: $*" >&2; exit 1; }

# runc, not crun: crun 1.8 refuses hosts whose cgroup2 mount has controllers
# beside cgroup v1 ones. Modest rlimits: podman's rootful defaults cannot be
# set where the runtime lacks CAP_SYS_RESOURCE.
podman_run() {
  podman --runtime runc run --network none --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "$@"
}

out=$(podman_run --rm "$image" --version)
[[ $out == "nbdkeeperd $version" ]] || fail "--version printed '$out', want 'nbdkeeperd $version'"
[[ $(podman_run --rm "$image" --help) == *--csi-endpoint* ]] || fail "--help does not list --csi-endpoint"
podman_run --rm --entrypoint /bin/sh "$image" -c '
  set -e
  for p in rbd-nbd modprobe blkid mkfs.ext4 mkfs.xfs resize2fs xfs_growfs mount umount; do
    command -v "$p" >/dev/null || { echo "missing $p"; exit 1; }
  done
  if ldd /usr/local/bin/nbdkeeperd "$(command -v rbd-nbd)" | grep "not found"; then exit 1; fi
  rbd-nbd --version >/dev/null' || fail "a program the daemon runs is missing or does not link"

container=nbdk-image-test-$$
trap 'podman rm -f "$container" >/dev/null 2>&1 || true' EXIT

# Starts the daemon in $container (extra podman options first) and waits
# until it is ready.
start_daemon() {
  podman_run -d --name "$container" "$@" "$image" --health-listen 127.0.0.1:9810 >/dev/null
  for _ in $(seq 100); do
    [[ $(podman logs "$container" 2>&1) == *event=ready* ]] && return 0
    sleep 0.1
  done
  podman logs "$container" >&2
  fail "the daemon did not become ready"
}

# Makes a process whose parent exits at once, so it reparents to PID 1,
# then counts the zombies once it has exited.
zombies_after_orphan() {
  podman exec "$container" /bin/sh -c 'sleep 0.2 & exit 0'
  sleep 1
  podman exec "$container" /bin/sh -c 'grep -l "^State:.*Z" /proc/[0-9]*/status 2>/dev/null | wc -l'
}

# podman stop sends SIGTERM to PID 1; the daemon must stop itself with 0
# well inside the 20 s before podman would SIGKILL it.
stop_daemon() {
  podman stop -t 20 "$container" >/dev/null
  local code
  code=$(podman inspect --format '{{.State.ExitCode}}' "$container")
  [[ $code == 0 ]] || fail "$1: exit status $code after SIGTERM, want 0"
  [[ $(podman logs "$container" 2>&1) == *'event=stopping signal=SIGTERM'* ]] || fail "$1: no SIGTERM stop in the log"
  podman rm "$container" >/dev/null
}

start_daemon
[[ $(podman exec "$container" cat /proc/1/comm) == tini ]] || fail "PID 1 is not tini"
[[ $(zombies_after_orphan) == 0 ]] || fail "an orphan was left a zombie under tini"
stop_daemon "under tini"

# The DaemonSet's hostPID: tini is no PID 1 there and must still forward.
start_daemon --pid=host
stop_daemon "in the host's PID namespace"

start_daemon --entrypoint /usr/local/bin/nbdkeeperd
[[ $(zombies_after_orphan) != 0 ]] || fail "the zombie check saw nothing with the daemon as PID 1"
stop_daemon "daemon as PID 1"
echo "image_test: PASS ($image)"
