#!/usr/bin/python3
"""podman's view of the node DaemonSet's nbdkeeperd container.

Reads deploy/kubernetes/node-daemonset.yaml and prints, as JSON, what
`podman run` needs to start that container as kubelet would on this node:
  {"image": ..., "options": [...], "args": [...], "create_dirs": [...],
   "csi_endpoint": ..., "health_port": ...}
options: privileged, the pod's hostPID/hostNetwork, NODE_ID, the pod IP
(--pod-ip: on hostNetwork the node's address, where the test reaches
--health-listen) and the other env entries, one -v per volumeMount
(hostPath volumes at their host path, Bidirectional as rshared, readOnly as
ro; a configMap volume at the host directory given with --config-map
NAME=DIR). args: the container's args
with $(VAR) expanded from that env, as kubelet does. create_dirs: the host
paths of DirectoryOrCreate volumes (kubelet creates them; podman does not).
csi_endpoint: --csi-endpoint as a client outside the container reaches it
(the socket's host path); health_port: --health-listen's port (hostNetwork).
Whatever the manifest says that this cannot map fails, so the test cannot
drift from the manifest silently.
  daemonset_podman.py MANIFEST --node-name NAME --pod-ip ADDR [--config-map NAME=DIR]...
"""
import argparse
import json
import re
import sys

import yaml

CONTAINER = "nbdkeeperd"


def fail(message):
    sys.exit(f"daemonset_podman.py: {message}")


def env_of(container, fields):
    env = {}
    for e in container.get("env", []):
        field = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if "value" in e:
            env[e["name"]] = e["value"]
        elif field in fields:
            env[e["name"]] = fields[field]
        else:
            fail(f"env {e['name']}: only values and fieldRefs {', '.join(fields)} are mapped")
    return env


def expand(arg, env):
    # kubelet's $(VAR) expansion; an unknown name stays as written.
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), arg)


def volume_mounts(pod, container, config_maps):
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    options, create = [], []
    for m in container.get("volumeMounts", []):
        v = volumes.get(m["name"])
        if v is None:
            fail(f"volumeMount {m['name']}: no such volume")
        if "hostPath" in v:
            source = v["hostPath"]["path"]
            if v["hostPath"].get("type") == "DirectoryOrCreate":
                create.append(source)
        elif "configMap" in v:
            source = config_maps.get(v["configMap"]["name"])
            if source is None:
                fail(f"volume {m['name']}: pass --config-map {v['configMap']['name']}=DIR")
        else:
            fail(f"volume {m['name']}: only hostPath and configMap volumes are mapped")
        if "subPath" in m:
            fail(f"volumeMount {m['name']}: subPath is not mapped")
        flags = []
        if m.get("readOnly"):
            flags.append("ro")
        propagation = m.get("mountPropagation", "None")
        if propagation == "Bidirectional":
            flags.append("rshared")
        elif propagation == "HostToContainer":
            flags.append("rslave")
        elif propagation != "None":
            fail(f"volumeMount {m['name']}: mountPropagation {propagation}")
        spec = f"{source}:{m['mountPath']}" + (":" + ",".join(flags) if flags else "")
        options += ["--volume", spec]
    return options, create


def flag(args, name):
    values = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    if len(values) != 1:
        fail(f"want one --{name}=VALUE in the container's args")
    return values[0]


def host_endpoint(endpoint, mounts):
    # The socket's path in the container, moved to the host path of the
    # deepest mount that holds it.
    if not endpoint.startswith("unix://"):
        fail(f"--csi-endpoint {endpoint}: not unix://")
    path = endpoint[len("unix://"):]
    best = None
    for spec in mounts[1::2]:
        source, target = spec.split(":")[:2]
        if path.startswith(target.rstrip("/") + "/") and (best is None or len(target) > len(best[1])):
            best = (source, target)
    if best is None:
        fail(f"--csi-endpoint {endpoint}: on no mounted host path")
    return "unix://" + best[0] + path[len(best[1]):]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("manifest")
    p.add_argument("--node-name", required=True)
    p.add_argument("--pod-ip", required=True)
    p.add_argument("--config-map", action="append", default=[], metavar="NAME=DIR")
    a = p.parse_args()
    config_maps = dict(c.split("=", 1) for c in a.config_map)
    with open(a.manifest) as f:
        daemonsets = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "DaemonSet"]
    if len(daemonsets) != 1:
        fail(f"{a.manifest}: want one DaemonSet, found {len(daemonsets)}")
    pod = daemonsets[0]["spec"]["template"]["spec"]
    containers = [c for c in pod["containers"] if c["name"] == CONTAINER]
    if len(containers) != 1:
        fail(f"no container {CONTAINER} in the DaemonSet")
    c = containers[0]
    if c.get("command"):
        fail("command (an entrypoint override) is not mapped")
    options = []
    security = c.get("securityContext", {})
    if security.get("privileged"):
        options.append("--privileged")
    if pod.get("hostPID"):
        options.append("--pid=host")
    if pod.get("hostNetwork"):
        options.append("--network=host")
    env = env_of(c, {"spec.nodeName": a.node_name, "status.podIP": a.pod_ip})
    for name, value in env.items():
        options += ["--env", f"{name}={value}"]
    mounts, create = volume_mounts(pod, c, config_maps)
    options += mounts
    args = [expand(x, env) for x in c.get("args", [])]
    json.dump({"image": c["image"], "options": options, "args": args, "create_dirs": create,
               "csi_endpoint": host_endpoint(flag(args, "csi-endpoint"), mounts),
               "health_port": int(flag(args, "health-listen").rsplit(":", 1)[1])}, sys.stdout, indent=1)
    print()


main()
