#!/usr/bin/python3
"""The cluster half of ceph-up.sh, in one python process.

Every `ceph` or `rbd` CLI run costs seconds under TCG (process start,
loading librados over 9p), so the monitor commands, the OSD start, the pool
initialisation and the test client's check all go through the python
bindings in this one process. ceph-up.sh starts it before the monitor: the
imports overlap with the monitor's mkfs, and connect() waits for the
monitor to answer.

Usage: ceph-up.py <osd uuids,...> <pool> <client name> <t0 us> <osd mkfs rc prefix> <data pool>
          (OSD i's mkfs status is read from <prefix>.<i>)
       ceph-up.py --again <pool> <client name> <t0 us> <osds>
          (a cluster made before: start its OSDs, wait until the pool serves)
"""
import json
import os
import subprocess
import sys
import time

import rados
import rbd

CONF = "/etc/ceph/ceph.conf"
TIMEOUT = 180


def make_step(t0):
    def step(what):
        print(f"ceph-up: +{(time.time_ns() // 1000 - int(t0)) // 1000} ms {what}", flush=True)
    return step


def check_client(pool, client, step):
    """The test client's caps are enough to use the pool (its PGs active)."""
    user = rados.Rados(conffile=CONF, name=f"client.{client}")
    user.connect(timeout=TIMEOUT)
    with user.open_ioctx(pool) as ioctx:
        rbd.RBD().list(ioctx)
    user.shutdown()
    step(f"client.{client} can list pool {pool}")


def again():
    pool, client, t0, osds = sys.argv[2:6]
    step = make_step(t0)
    for i in range(int(osds)):
        subprocess.run(["ceph-osd", "-i", str(i)], check=True)
    step(f"{osds} OSD(s) started")
    check_client(pool, client, step)


def main():
    if sys.argv[1] == "--again":
        again()
        return
    osd_uuids, pool, client, t0, mkfs_rc_prefix, data_pool = sys.argv[1:7]
    osd_uuids = osd_uuids.split(",")
    step = make_step(t0)

    step("python bindings loaded")
    admin = rados.Rados(conffile=CONF, name="client.admin")
    admin.connect(timeout=TIMEOUT)

    def command(**cmd):
        ret, _, err = admin.mon_command(json.dumps(cmd), b"", timeout=TIMEOUT)
        if ret != 0:
            sys.exit(f"ceph-up: '{cmd['prefix']}' failed ({ret}): {err}")

    for i, uuid in enumerate(osd_uuids):
        command(prefix="osd new", uuid=uuid, id=i)
    command(prefix="osd pool create", pool=pool, pg_num=8, pgp_num=8)
    command(prefix="osd pool create", pool=data_pool, pg_num=8, pgp_num=8)
    step(f"{len(osd_uuids)} OSD(s) and pools {pool}, {data_pool} created")

    # ceph-up.sh runs the OSDs' mkfs in parallel and leaves each status here.
    deadline = time.monotonic() + TIMEOUT
    for i in range(len(osd_uuids)):
        rc_file = f"{mkfs_rc_prefix}.{i}"
        while not os.path.exists(rc_file):
            if time.monotonic() > deadline:
                sys.exit(f"ceph-up: the mkfs of osd.{i} did not finish")
            time.sleep(0.1)
        with open(rc_file) as f:
            if f.read().strip() != "0":
                sys.exit(f"ceph-up: ceph-osd --mkfs of osd.{i} failed (osd-mkfs.{i}.log in the Ceph log directory)")
        subprocess.run(["ceph-osd", "-i", str(i)], check=True)
    step(f"{len(osd_uuids)} OSD(s) started")

    # pool_init writes to the pool, so it returns only once the pool's PGs
    # are active: the cluster really serves IO.
    for name in (pool, data_pool):
        with admin.open_ioctx(name) as ioctx:
            rbd.RBD().pool_init(ioctx, False)
    step(f"pools {pool}, {data_pool} initialised")
    admin.shutdown()
    check_client(pool, client, step)


if __name__ == "__main__":
    main()
