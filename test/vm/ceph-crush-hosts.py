#!/usr/bin/python3
"""Three more OSDs for the tests that need CRUSH hosts, and their pools.

  ceph-crush-hosts.py add      three OSDs, numbered after the cluster's own,
                               each a host of its own (h1, h2, h3) under the
                               CRUSH root nbdk-hosts, and the pools; prints
                               "crush hosts: h1=N,h2=N,h3=N" (their ids)
  ceph-crush-hosts.py remove   stops and purges them, deletes the pools

The plain VMs' native cluster (test/vm/cluster, run in its namespaces by
`cluster exec`) has three OSDs on one CRUSH host, which neither an
erasure-coded pool (k=2, m=1 over hosts) nor read affinity (a replica on
the client's own host) can use. The new OSDs sit under a root of their
own, so the pools of the default root never move onto them. Pools:
  ec-data    erasure-coded 2+1 over the three hosts, overwrites allowed
             (RBD needs them; memstore is allowed by a debug option that
             lifts the BlueStore requirement)
  affine     replicated, size 3 over the three hosts: every object on
             every host, so a localized read can be served on any one
  topo-east, topo-west   replicated on the default root: pools for
             topologyConstrainedPools
client.nbdk gets `profile rbd` on each. One python process, as in
ceph-up.py, and librados's mon commands rather than the `ceph` CLI.
"""
import base64
import json
import os
import struct
import subprocess
import sys
import time
import uuid

import rados
import rbd

CONF = "/etc/ceph/ceph.conf"
STATE = os.environ.get("NBDK_CEPH_STATE", "/run/nbdk-ceph")
ROOT = "nbdk-hosts"
HOSTS = ("h1", "h2", "h3")
# The ids `add` gave the OSDs, for `remove`.
IDS_FILE = f"{STATE}/crush-hosts.json"
EC_POOL, AFFINE_POOL, TOPOLOGY_POOLS = "ec-data", "affine", ("topo-east", "topo-west")
BASE_CAPS = "profile rbd pool=rbd, profile rbd pool=rbd-data"
TIMEOUT = 180
t0 = time.monotonic()


def step(what):
    print(f"ceph-crush-hosts: +{int((time.monotonic() - t0) * 1000)} ms {what}", flush=True)


def new_key():
    """A cephx secret as ceph-authtool makes it (see ceph-up.sh)."""
    header = struct.pack("<HIIH", 1, int(time.time()), 0, 16)
    return base64.b64encode(header + os.urandom(16)).decode()


class Cluster:
    def __init__(self):
        self.admin = rados.Rados(conffile=CONF, name="client.admin")
        self.admin.connect(timeout=TIMEOUT)

    def command(self, inbuf=b"", ok=(0,), **cmd):
        ret, out, err = self.admin.mon_command(json.dumps(cmd), inbuf, timeout=TIMEOUT)
        if ret not in ok:
            sys.exit(f"ceph-crush-hosts: '{cmd['prefix']}' failed ({ret}): {err}")
        return out

    def client_caps(self, pools):
        osd = ", ".join([BASE_CAPS] + [f"profile rbd pool={p}" for p in pools])
        self.command(prefix="auth caps", entity="client.nbdk", caps=["mon", "profile rbd", "osd", osd])


def pid_file(n):
    return f"/run/ceph/nbdk-osd.{n}.pid"


def add():
    c = Cluster()
    first = max(json.loads(c.command(prefix="osd ls", format="json")), default=-1) + 1
    osds = {first + i: host for i, host in enumerate(HOSTS)}
    with open(IDS_FILE, "w") as f:
        json.dump({str(n): host for n, host in osds.items()}, f)
    mkfs = {}
    for n in osds:
        osd_uuid, key = str(uuid.uuid4()), new_key()
        c.command(inbuf=json.dumps({"cephx_secret": key}).encode(), prefix="osd new", uuid=osd_uuid, id=n)
        data = f"{STATE}/osd/ceph-{n}"
        os.makedirs(data, exist_ok=True)
        with open(f"{data}/keyring", "w") as f:
            f.write(f"[osd.{n}]\n\tkey = {key}\n")
        log = open(f"{STATE}/log/osd-{n}-mkfs.log", "w")
        mkfs[n] = subprocess.Popen(["ceph-osd", "-i", str(n), "--mkfs", "--osd-uuid", osd_uuid, "--no-mon-config"],
                                   stdout=log, stderr=log)
    for n, p in mkfs.items():
        if p.wait() != 0:
            sys.exit(f"ceph-crush-hosts: ceph-osd -i {n} --mkfs failed (osd-{n}-mkfs.log in {STATE}/log)")
    step(f"osd.{first}-{first + 2} made")
    for n, host in osds.items():
        with open(f"{STATE}/log/osd-{n}-start.log", "w") as log:
            subprocess.run(["ceph-osd", "-i", str(n), "--pid-file", pid_file(n),
                            "--crush-location", f"root={ROOT} host={host}"], check=True, stdout=log, stderr=log)
    step(f"osd.{first}-{first + 2} started")

    c.command(prefix="osd crush rule create-replicated", name=ROOT, root=ROOT, type="host")
    c.command(prefix="osd pool create", pool=AFFINE_POOL, pg_num=8, pgp_num=8, rule=ROOT)
    c.command(prefix="osd pool set", pool=AFFINE_POOL, var="size", val="3")
    c.command(prefix="config set", who="mon", name="mon_debug_no_require_bluestore_for_ec_overwrites", value="true")
    c.command(prefix="osd erasure-code-profile set", name="nbdk-ec21",
              profile=["k=2", "m=1", "crush-failure-domain=host", f"crush-root={ROOT}"])
    c.command(prefix="osd pool create", pool=EC_POOL, pg_num=8, pgp_num=8, pool_type="erasure",
              erasure_code_profile="nbdk-ec21")
    c.command(prefix="osd pool set", pool=EC_POOL, var="allow_ec_overwrites", val="true")
    c.command(prefix="osd pool application enable", pool=EC_POOL, app="rbd")
    for pool in TOPOLOGY_POOLS:
        c.command(prefix="osd pool create", pool=pool, pg_num=8, pgp_num=8)
    c.client_caps((EC_POOL, AFFINE_POOL) + TOPOLOGY_POOLS)
    step("pools created")
    # Each returns once the pool's PGs are active: the pools serve IO.
    for pool in (AFFINE_POOL,) + TOPOLOGY_POOLS:
        with c.admin.open_ioctx(pool) as io:
            rbd.RBD().pool_init(io, False)
    with c.admin.open_ioctx(EC_POOL) as io:
        io.write_full("nbdk-ready", b"x")
        io.write("nbdk-ready", b"y", 1)  # an overwrite, which RBD needs
        io.remove_object("nbdk-ready")
    step("pools serve IO")
    c.admin.shutdown()
    print("crush hosts: " + ",".join(f"{host}={n}" for n, host in osds.items()), flush=True)


def remove():
    if not os.path.exists(IDS_FILE):
        step("nothing to remove: no add got as far as numbering its OSDs")
        return
    with open(IDS_FILE) as f:
        osds = {int(n): host for n, host in json.load(f).items()}
    c = Cluster()
    c.client_caps(())
    c.command(prefix="config set", who="mon", name="mon_allow_pool_delete", value="true")
    for pool in (EC_POOL, AFFINE_POOL) + TOPOLOGY_POOLS:
        c.command(prefix="osd pool rm", pool=pool, pool2=pool, yes_i_really_really_mean_it=True, ok=(0, -2))
    c.command(prefix="config rm", who="mon", name="mon_allow_pool_delete")
    pids = []
    for n in osds:
        try:
            with open(pid_file(n)) as f:
                pids.append(int(f.read().strip()))
            os.kill(pids[-1], 15)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
    # The monitor purges only an OSD that is down: wait until each is gone.
    deadline = time.monotonic() + TIMEOUT
    while any(os.path.exists(f"/proc/{pid}") for pid in pids):
        if time.monotonic() > deadline:
            sys.exit(f"ceph-crush-hosts: osd {sorted(osds)} did not stop")
        time.sleep(0.2)
    for n, host in osds.items():
        c.command(prefix="osd down", ids=[str(n)], ok=(0, -2))
        # `osd purge` is the manager's (none runs here): its three steps.
        c.command(prefix="osd crush remove", name=f"osd.{n}", ok=(0, -2))
        c.command(prefix="auth del", entity=f"osd.{n}", ok=(0, -2))
        c.command(prefix="osd rm", ids=[str(n)], ok=(0, -2))
        c.command(prefix="osd crush rm", name=host, ok=(0, -2))
    # The replicated rule, and the one the erasure-coded pool was given.
    for rule in (ROOT, EC_POOL):
        c.command(prefix="osd crush rule rm", name=rule, ok=(0, -2))
    c.command(prefix="osd crush rm", name=ROOT, ok=(0, -2))
    c.command(prefix="osd erasure-code-profile rm", name="nbdk-ec21", ok=(0, -2))
    c.command(prefix="config rm", who="mon", name="mon_debug_no_require_bluestore_for_ec_overwrites")
    os.remove(IDS_FILE)
    step(f"osd {sorted(osds)} and their pools removed")
    c.admin.shutdown()


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("add", "remove"):
        sys.exit(__doc__)
    add() if sys.argv[1] == "add" else remove()
