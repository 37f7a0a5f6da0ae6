// What the Kubernetes schema cannot check in deploy/kubernetes: that the
// paths nbdkeeperd's flags name are the host paths its sidecars and kubelet
// use, with the mounts and propagation they need; that the names the
// objects share agree; that every Controller capability the daemon
// advertises (read from csi/controller/controller_service.cc) and attachRequired have
// their sidecar and its RBAC; that the liveness probes reach the
// livenessprobe sidecar in time; that every sidecar flag is one its pinned
// tag has; and that every container names its imagePullPolicy. Each rule
// returns problems as strings; none is fine.
'use strict';

const path = require('node:path');

const DEFAULT_KUBELET_ROOT = '/var/lib/kubelet';
const DEFAULT_DRIVER = 'rbd.nbdkeeper.io';

function find(objects, kind, name) {
  return objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
}

function container(podSpec, name) {
  return (podSpec.containers || []).find((c) => c.name === name);
}

// The "--flag=value" arguments as a map (checkFlagsKnown reports any other
// form).
function flagsOf(c) {
  const flags = new Map();
  for (const arg of c.args || []) {
    const m = /^(--[a-z0-9-]+)=(.*)$/.exec(arg);
    if (m) flags.set(m[1], m[2]);
  }
  return flags;
}

function unixPath(endpoint) {
  return endpoint.replace(/^unix:\/\//, '');
}

// Where a path inside a container lies: the deepest volumeMount covering it,
// its volume, the path within that volume (`place`, comparable across
// containers of a pod) and, for a hostPath volume, the host path.
function resolve(podSpec, c, file) {
  let best;
  for (const m of c.volumeMounts || []) {
    const mp = m.mountPath.replace(/\/$/, '');
    if ((file === mp || file.startsWith(mp + '/')) && (!best || mp.length > best.mountPath.length)) {
      best = { ...m, mountPath: mp };
    }
  }
  if (!best) return undefined;
  const volume = (podSpec.volumes || []).find((v) => v.name === best.name);
  if (!volume) return undefined;
  const rest = file.slice(best.mountPath.length);
  return {
    mount: best,
    volume,
    place: volume.name + ':' + rest,
    hostPath: volume.hostPath ? path.posix.join(volume.hostPath.path, rest) : undefined,
  };
}

function checkNodeDaemonSet(objects, daemonFlags) {
  const problems = [];
  const ds = find(objects, 'DaemonSet', 'nbdkeeper-node');
  if (!ds) return ['no DaemonSet nbdkeeper-node'];
  const pod = ds.spec.template.spec;
  const daemon = container(pod, 'nbdkeeperd');
  const registrar = container(pod, 'node-driver-registrar');
  const liveness = container(pod, 'liveness-probe');
  if (!daemon || !registrar || !liveness) {
    return ['the node pod needs containers nbdkeeperd, node-driver-registrar and liveness-probe'];
  }
  if (!pod.hostPID) problems.push('node pod: hostPID must be true (rbd-nbd and the journal\'s pids are the host\'s)');
  if (!pod.hostNetwork) problems.push('node pod: hostNetwork must be true');
  if (!(daemon.securityContext && daemon.securityContext.privileged)) problems.push('nbdkeeperd must be privileged');

  const flags = flagsOf(daemon);
  problems.push(...checkFlagsKnown('nbdkeeperd (node)', daemon, daemonFlags));
  const nodeId = flags.get('--node-id');
  const nodeEnv = (daemon.env || []).find((e) => nodeId === `$(${e.name})`);
  if (!nodeEnv || !nodeEnv.valueFrom || !nodeEnv.valueFrom.fieldRef ||
      nodeEnv.valueFrom.fieldRef.fieldPath !== 'spec.nodeName') {
    problems.push('--node-id must be $(VAR) with VAR from fieldRef spec.nodeName');
  }

  // kubelet passes host paths: its directory must be seen at the same path,
  // and mounts made there must reach the host (Bidirectional).
  const kubeletRoot = flags.get('--kubelet-root') || DEFAULT_KUBELET_ROOT;
  const kubelet = resolve(pod, daemon, kubeletRoot);
  if (!kubelet || kubelet.hostPath !== kubeletRoot) {
    problems.push(`--kubelet-root ${kubeletRoot}: must be a hostPath mount of the same host path`);
  } else if (kubelet.mount.mountPropagation !== 'Bidirectional') {
    problems.push(`--kubelet-root ${kubeletRoot}: its mount needs mountPropagation Bidirectional`);
  }

  const socket = resolve(pod, daemon, unixPath(flags.get('--csi-endpoint') || ''));
  if (!socket || !socket.hostPath) {
    problems.push('--csi-endpoint: the socket must lie on a hostPath volume');
  } else {
    const registrarFlags = flagsOf(registrar);
    const registration = registrarFlags.get('--kubelet-registration-path');
    if (registration !== socket.hostPath) {
      problems.push(`registrar --kubelet-registration-path ${registration} is not the socket's host path ${socket.hostPath}`);
    }
    if (!socket.hostPath.startsWith(kubeletRoot + '/plugins/')) {
      problems.push(`the socket's host path ${socket.hostPath} is not under ${kubeletRoot}/plugins/`);
    }
    for (const [name, c] of [['node-driver-registrar', registrar], ['liveness-probe', liveness]]) {
      const address = resolve(pod, c, flagsOf(c).get('--csi-address') || '');
      if (!address || address.hostPath !== socket.hostPath) {
        problems.push(`${name} --csi-address does not reach the socket at ${socket.hostPath}`);
      }
    }
    const reg = resolve(pod, registrar, '/registration');
    if (!reg || reg.hostPath !== kubeletRoot + '/plugins_registry') {
      problems.push(`registrar: /registration must be ${kubeletRoot}/plugins_registry`);
    }
  }

  // The journal and the key files outlive the container only on the host.
  for (const [flag, fallback] of [['--state-dir', '/var/lib/nbdkeeper'], ['--key-dir', '/run/nbdkeeper/keys']]) {
    const dir = resolve(pod, daemon, flags.get(flag) || fallback);
    if (!dir || !dir.hostPath) problems.push(`${flag}: must lie on a hostPath volume, so that it outlives the container`);
  }
  const keys = resolve(pod, daemon, flags.get('--key-dir') || '/run/nbdkeeper/keys');
  if (keys && keys.hostPath && !keys.hostPath.startsWith('/run/')) {
    problems.push(`--key-dir: host path ${keys.hostPath} is not under /run (tmpfs)`);
  }
  for (const dir of ['/dev', '/sys', '/lib/modules']) {
    const r = resolve(pod, daemon, dir);
    if (!r || r.hostPath !== dir) problems.push(`nbdkeeperd: ${dir} must be the host's ${dir}`);
  }
  // Child scopes: the bus must be the host's systemd, whose pids are ours.
  const bus = flags.get('--systemd-bus');
  if (bus) {
    const socket = resolve(pod, daemon, bus.replace(/^unix:path=/, ''));
    if (!socket || socket.hostPath !== '/run/systemd/private') {
      problems.push(`--systemd-bus ${bus}: must reach the host's /run/systemd/private`);
    }
  }

  problems.push(...checkProbes(pod, 'node'));
  problems.push(...checkCephConfig(objects, pod, daemon, 'node'));
  return problems;
}

// The RBAC each sidecar needs for what it does, as [apiGroup, resource,
// verbs]; all cluster-wide (the sidecars watch every namespace) except the
// Lease of leader election, which is in the pod's namespace.
const RBAC = {
  provisioner: [
    ['', 'persistentvolumes', ['get', 'list', 'watch', 'create', 'delete', 'patch']],
    ['', 'persistentvolumeclaims', ['get', 'list', 'watch', 'update']],
    ['', 'secrets', ['get']],
    ['', 'events', ['create', 'patch']],
    ['', 'nodes', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'storageclasses', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'csinodes', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'volumeattachments', ['get', 'list', 'watch']],
  ],
  // A restore reads the VolumeSnapshot and its content.
  restore: [
    ['snapshot.storage.k8s.io', 'volumesnapshots', ['get', 'list']],
    ['snapshot.storage.k8s.io', 'volumesnapshotcontents', ['get', 'list']],
  ],
  resizer: [
    ['', 'persistentvolumes', ['get', 'list', 'watch', 'patch']],
    ['', 'persistentvolumeclaims', ['get', 'list', 'watch']],
    ['', 'persistentvolumeclaims/status', ['patch']],
    ['', 'pods', ['get', 'list', 'watch']],
    ['', 'secrets', ['get']],
    ['', 'events', ['create', 'patch']],
  ],
  snapshotter: [
    ['snapshot.storage.k8s.io', 'volumesnapshotclasses', ['get', 'list', 'watch']],
    ['snapshot.storage.k8s.io', 'volumesnapshots', ['get', 'list', 'watch']],
    ['snapshot.storage.k8s.io', 'volumesnapshotcontents', ['get', 'list', 'watch', 'update', 'patch']],
    ['snapshot.storage.k8s.io', 'volumesnapshotcontents/status', ['update', 'patch']],
    ['', 'secrets', ['get']],
    ['', 'events', ['create', 'patch']],
  ],
  attacher: [
    ['', 'persistentvolumes', ['get', 'list', 'watch', 'patch', 'update']],
    ['', 'nodes', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'csinodes', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'volumeattachments', ['get', 'list', 'watch', 'patch', 'update']],
    ['storage.k8s.io', 'volumeattachments/status', ['patch']],
  ],
};
const LEASES = ['coordination.k8s.io', 'leases', ['get', 'create', 'update']];

// The sidecar and RBAC each Controller capability the daemon advertises
// needs. A capability missing here fails the check: decide which sidecar
// serves it (or that none does) and say so here.
const CAPABILITY_SIDECARS = {
  CREATE_DELETE_VOLUME: [['csi-provisioner', RBAC.provisioner]],
  CLONE_VOLUME: [['csi-provisioner', RBAC.provisioner]],
  EXPAND_VOLUME: [['csi-resizer', RBAC.resizer]],
  CREATE_DELETE_SNAPSHOT: [['csi-snapshotter', RBAC.snapshotter], ['csi-provisioner', RBAC.restore]],
  LIST_SNAPSHOTS: [['csi-snapshotter', RBAC.snapshotter]],
  PUBLISH_UNPUBLISH_VOLUME: [['csi-attacher', RBAC.attacher]],
};

// What the Roles and ClusterRoles bound to a ServiceAccount grant: each
// rule with the namespace it holds in (undefined: every namespace).
function grantsOf(objects, namespace, account) {
  const grants = [];
  for (const b of objects.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
    // A RoleBinding's ServiceAccount subject without a namespace is in the
    // binding's.
    const bound = (b.subjects || []).some((s) => s.kind === 'ServiceAccount' && s.name === account &&
      (s.namespace || (b.kind === 'RoleBinding' ? b.metadata.namespace : undefined)) === namespace);
    if (!bound) continue;
    const roleNs = b.roleRef.kind === 'Role' ? b.metadata.namespace : undefined;
    const role = objects.find((o) => o.kind === b.roleRef.kind && o.metadata.name === b.roleRef.name &&
                                     (roleNs === undefined || o.metadata.namespace === roleNs));
    if (!role) continue;
    const where = b.kind === 'RoleBinding' ? b.metadata.namespace : undefined;
    for (const rule of role.rules || []) grants.push({ namespace: where, rule });
  }
  return grants;
}

// The [group, resource, verbs] a set of grants lacks, in `namespace`
// (undefined: cluster-wide).
function missingGrants(grants, [group, resource, verbs], namespace) {
  const has = (list, x) => (list || []).includes(x) || (list || []).includes('*');
  const holds = (ns) => ns === undefined || (namespace !== undefined && ns === namespace);
  return verbs.filter((verb) => !grants.some(({ namespace: ns, rule }) =>
    holds(ns) && has(rule.apiGroups, group) && has(rule.resources, resource) && has(rule.verbs, verb)));
}

function checkControllerDeployment(objects, daemonFlags, capabilities) {
  const deployment = find(objects, 'Deployment', 'nbdkeeper-controller');
  if (!deployment) return ['no Deployment nbdkeeper-controller'];
  const pod = deployment.spec.template.spec;
  const daemon = container(pod, 'nbdkeeperd');
  if (!daemon) return ['the controller pod needs a container nbdkeeperd'];
  const problems = checkFlagsKnown('nbdkeeperd (controller)', daemon, daemonFlags);
  const socket = resolve(pod, daemon, unixPath(flagsOf(daemon).get('--csi-endpoint') || ''));

  // Which sidecars, with which RBAC, and why.
  const needs = [];
  for (const cap of capabilities) {
    const sidecars = CAPABILITY_SIDECARS[cap];
    if (!sidecars) {
      problems.push(`controller capability ${cap}: no sidecar is known to serve it (CAPABILITY_SIDECARS)`);
      continue;
    }
    for (const [name, rules] of sidecars) needs.push({ name, rules, why: cap });
  }
  const driver = find(objects, 'CSIDriver');
  if (driver && driver.spec.attachRequired) needs.push({ name: 'csi-attacher', rules: RBAC.attacher, why: 'attachRequired' });

  const namespace = deployment.metadata.namespace;
  const account = pod.serviceAccountName || 'default';
  const grants = grantsOf(objects, namespace, account);
  const checked = new Set();
  for (const { name, rules, why } of needs) {
    const c = container(pod, name);
    if (!c) {
      problems.push(`${why}: the controller pod needs a container ${name}`);
      continue;
    }
    for (const rule of rules) {
      const missing = missingGrants(grants, rule, undefined);
      if (missing.length) {
        problems.push(`${why}: ${name} needs ${missing.join(',')} on ${rule[0] || 'core'}/${rule[1]} cluster-wide for ServiceAccount ${namespace}/${account}`);
      }
    }
    if (checked.has(name)) continue;
    checked.add(name);
    const f = flagsOf(c);
    const address = resolve(pod, c, f.get('--csi-address') || '');
    if (!socket || !address || address.place !== socket.place) {
      problems.push(`${name} --csi-address does not reach nbdkeeperd's socket`);
    }
    if (f.get('--leader-election') !== 'true') problems.push(`${name}: --leader-election=true is needed with 2 replicas`);
    const missing = missingGrants(grants, LEASES, namespace);
    if (missing.length) problems.push(`${name}: leader election needs ${missing.join(',')} on leases in ${namespace}`);
  }
  problems.push(...checkProbes(pod, 'controller'));
  problems.push(...checkCephConfig(objects, pod, daemon, 'controller'));
  return problems;
}

// A Go duration ("3s", "500ms", "1m30s") in seconds; NaN if it is none.
function seconds(duration) {
  const unit = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  const parts = [...(duration || '').matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== duration) return NaN;
  return parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u], 0);
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const PROBES = ['livenessProbe', 'startupProbe', 'readinessProbe'];

// nbdkeeperd has a liveness probe, and every HTTP probe of the pod reaches
// the livenessprobe sidecar: its port (a named port resolves among the
// probed container's own ports), an address kubelet reaches, and a
// timeoutSeconds longer than the sidecar's --probe-timeout, so that a slow
// CSI Probe is the sidecar's answer, not kubelet's timeout. kubelet probes
// from the node: without a host, the pod IP. On hostNetwork that is the
// node's IP, so the sidecar listens on loopback only and the probes name it
// as their host; on the pod network 127.0.0.1 would be the node's loopback,
// so the probes name no host and the sidecar does not listen on loopback
// alone.
function checkProbes(pod, where) {
  const problems = [];
  const daemon = container(pod, 'nbdkeeperd');
  const sidecar = container(pod, 'liveness-probe');
  if (!sidecar) return [`${where} pod: no liveness-probe sidecar`];
  if (!daemon.livenessProbe) problems.push(`${where} pod: nbdkeeperd has no livenessProbe`);
  const f = flagsOf(sidecar);
  const endpoint = f.get('--http-endpoint') || '';
  const colon = endpoint.lastIndexOf(':');
  const host = endpoint.slice(0, Math.max(colon, 0));
  const port = Number(endpoint.slice(colon + 1));
  if (colon < 0 || !port) return [...problems, `${where} liveness-probe: --http-endpoint=HOST:PORT is needed`];
  if (pod.hostNetwork && !LOOPBACK.has(host)) {
    problems.push(`${where} liveness-probe --http-endpoint ${endpoint}: on hostNetwork it must listen on loopback, not on the node's addresses`);
  }
  if (!pod.hostNetwork && LOOPBACK.has(host)) {
    problems.push(`${where} liveness-probe --http-endpoint ${endpoint}: kubelet probes the pod IP, which loopback does not answer`);
  }
  const timeout = seconds(f.get('--probe-timeout'));
  if (Number.isNaN(timeout)) problems.push(`${where} liveness-probe: --probe-timeout=DURATION is needed`);
  const socket = resolve(pod, daemon, unixPath(flagsOf(daemon).get('--csi-endpoint') || ''));
  const address = resolve(pod, sidecar, f.get('--csi-address') || '');
  if (!socket || !address || address.place !== socket.place) {
    problems.push(`${where} liveness-probe --csi-address does not reach nbdkeeperd's socket`);
  }
  const health = flagsOf(daemon).get('--health-listen') || '';
  if (Number(health.split(':').pop()) === port) {
    problems.push(`${where}: --health-listen and the liveness-probe share port ${port}`);
  }
  for (const c of pod.containers) {
    for (const kind of PROBES) {
      const get = c[kind] && c[kind].httpGet;
      if (!get) continue;
      const what = `${where} ${c.name} ${kind}`;
      const named = typeof get.port === 'string' ? (c.ports || []).find((p) => p.name === get.port) : undefined;
      const target = typeof get.port === 'string' ? named && named.containerPort : get.port;
      if (target !== port) {
        problems.push(`${what}: port ${get.port} is not the liveness-probe --http-endpoint port ${port}`);
      }
      if (pod.hostNetwork && LOOPBACK.has(host) && get.host !== host) {
        problems.push(`${what}: host ${get.host || '(none)'} is not the liveness-probe's ${host} (without one kubelet probes the node IP)`);
      }
      if (!pod.hostNetwork && get.host !== undefined) {
        problems.push(`${what}: host ${get.host}: kubelet would probe it from the node, not the pod`);
      }
      const limit = c[kind].timeoutSeconds === undefined ? 1 : c[kind].timeoutSeconds;
      if (!(timeout < limit)) {
        problems.push(`${what}: timeoutSeconds ${limit} must be longer than the liveness-probe --probe-timeout ${f.get('--probe-timeout')}`);
      }
    }
  }
  return problems;
}

// Kubernetes enforces ReadWriteOnce across nodes (Multi-Attach) only for a
// driver whose volumes are attached: VolumeAttachments, which csi-attacher
// marks attached (checkControllerDeployment requires it and its RBAC).
function checkAttach(objects) {
  const driver = find(objects, 'CSIDriver');
  if (!driver || driver.spec.attachRequired !== true) {
    return ['CSIDriver: attachRequired must be true, or Kubernetes lets a ReadWriteOnce volume attach on two nodes'];
  }
  return [];
}

// --ceph-csi-config names a file of the ceph-csi-config ConfigMap that the
// StorageClass's clusterID is listed in.
function checkCephConfig(objects, pod, daemon, where) {
  const file = flagsOf(daemon).get('--ceph-csi-config') || '/etc/ceph-csi-config/config.json';
  const r = resolve(pod, daemon, file);
  if (!r || !r.volume || !r.volume.configMap) return [`${where}: --ceph-csi-config ${file} is not on a ConfigMap volume`];
  const cm = find(objects, 'ConfigMap', r.volume.configMap.name);
  const key = file.slice(r.mount.mountPath.length + 1);
  if (!cm || !cm.data || cm.data[key] === undefined) return [`${where}: ConfigMap ${r.volume.configMap.name} has no ${key}`];
  let clusters;
  try {
    clusters = JSON.parse(cm.data[key]);
  } catch (e) {
    return [`ConfigMap ${cm.metadata.name} ${key}: ${e.message}`];
  }
  if (!Array.isArray(clusters)) return [`ConfigMap ${cm.metadata.name} ${key}: not a JSON array`];
  const problems = [];
  for (const sc of objects.filter((o) => o.kind === 'StorageClass' || o.kind === 'VolumeSnapshotClass')) {
    const id = (sc.parameters || {}).clusterID;
    if (!clusters.some((c) => c.clusterID === id && Array.isArray(c.monitors))) {
      problems.push(`${sc.kind} ${sc.metadata.name}: clusterID ${id} has no entry with monitors in ${key}`);
    }
  }
  return problems;
}

// Every flag a manifest passes is one the daemon's --help lists.
function checkFlagsKnown(where, c, daemonFlags) {
  return (c.args || [])
    .filter((arg) => !daemonFlags.has(arg.split('=')[0]) || !arg.includes('='))
    .map((arg) => `${where}: ${arg} is not --flag=value with a flag nbdkeeperd --help lists`);
}

// The cephx secret a class's csi.storage.k8s.io/<which>-secret-* names.
function secretProblems(objects, cls, which) {
  const params = cls.parameters || {};
  const name = params[`csi.storage.k8s.io/${which}-secret-name`];
  const ns = params[`csi.storage.k8s.io/${which}-secret-namespace`];
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === name && o.metadata.namespace === ns);
  const data = secret && (secret.stringData || secret.data);
  if (!data || !data.userID || !data.userKey) {
    return [`${cls.kind} ${cls.metadata.name}: ${which} secret ${ns}/${name} with userID and userKey is missing`];
  }
  return [];
}

// The driver name agrees everywhere; the classes' secrets exist.
function checkNames(objects) {
  const problems = [];
  const driver = find(objects, 'CSIDriver');
  const names = objects
    .filter((o) => o.kind === 'DaemonSet' || o.kind === 'Deployment')
    .map((o) => flagsOf(container(o.spec.template.spec, 'nbdkeeperd') || {}).get('--driver-name') || DEFAULT_DRIVER);
  for (const n of names) {
    if (!driver || driver.metadata.name !== n) problems.push(`--driver-name ${n} has no CSIDriver of that name`);
  }
  for (const sc of objects.filter((o) => o.kind === 'StorageClass')) {
    if (!driver || sc.provisioner !== driver.metadata.name) {
      problems.push(`StorageClass ${sc.metadata.name}: provisioner ${sc.provisioner} is not the CSIDriver`);
    }
    if (sc.parameters.mounter !== 'rbd-nbd') problems.push(`StorageClass ${sc.metadata.name}: mounter must be rbd-nbd`);
    for (const which of ['provisioner', 'controller-expand', 'node-stage']) {
      problems.push(...secretProblems(objects, sc, which));
    }
  }
  for (const vsc of objects.filter((o) => o.kind === 'VolumeSnapshotClass')) {
    if (!driver || vsc.driver !== driver.metadata.name) {
      problems.push(`VolumeSnapshotClass ${vsc.metadata.name}: driver ${vsc.driver} is not the CSIDriver`);
    }
    problems.push(...secretProblems(objects, vsc, 'snapshotter'));
  }
  return problems;
}

// Both pods run the image scripts/image.sh tags from the project version.
function checkImages(objects, version) {
  const want = `localhost/nbdkeeperd:${version}`;
  return objects
    .filter((o) => o.kind === 'DaemonSet' || o.kind === 'Deployment')
    .map((o) => [o, container(o.spec.template.spec, 'nbdkeeperd')])
    .filter(([, c]) => c && c.image !== want)
    .map(([o, c]) => `${o.kind} ${o.metadata.name}: image ${c.image}, want ${want}`);
}

// The flags and feature gates of each pinned sidecar image that these
// manifests use, each read in that tag's source (cmd/*/main.go, its
// pkg/features and the vendored csi-lib-utils standardflags). A sidecar
// flag or gate missing here, or a new tag, fails the check until it has been
// looked up in that tag: a sidecar exits on a flag or gate it does not know.
const SIDECAR_FLAGS = {
  'registry.k8s.io/sig-storage/csi-provisioner:v5.3.0': {
    flags: ['--v', '--csi-address', '--leader-election', '--timeout', '--retry-interval-start', '--default-fstype',
      '--extra-create-metadata', '--feature-gates', '--prevent-volume-mode-conversion'],
    gates: ['Topology', 'HonorPVReclaimPolicy', 'CrossNamespaceVolumeDataSource', 'VolumeAttributesClass'],
  },
  'registry.k8s.io/sig-storage/csi-resizer:v1.14.0': {
    flags: ['--v', '--csi-address', '--leader-election', '--timeout', '--handle-volume-inuse-error', '--feature-gates'],
    gates: ['AnnotateFsResize', 'RecoverVolumeExpansionFailure', 'VolumeAttributesClass'],
  },
  'registry.k8s.io/sig-storage/csi-snapshotter:v8.6.0': {
    flags: ['--v', '--csi-address', '--leader-election', '--timeout', '--extra-create-metadata', '--feature-gates'],
    gates: ['CSIVolumeGroupSnapshot', 'ReleaseLeaderElectionOnExit'],
  },
  'registry.k8s.io/sig-storage/csi-attacher:v4.12.0': {
    flags: ['--v', '--csi-address', '--leader-election', '--timeout', '--feature-gates'],
    gates: ['MutableCSINodeAllocatableCount', 'ReleaseLeaderElectionOnExit'],
  },
  'registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.11.1': {
    flags: ['--v', '--csi-address', '--kubelet-registration-path'],
    gates: [],
  },
  'registry.k8s.io/sig-storage/livenessprobe:v2.13.1': {
    flags: ['--v', '--csi-address', '--http-endpoint', '--probe-timeout'],
    gates: [],
  },
};

function podsOf(objects) {
  return objects
    .filter((o) => o.kind === 'DaemonSet' || o.kind === 'Deployment')
    .map((o) => [`${o.kind} ${o.metadata.name}`, o.spec.template.spec]);
}

function checkSidecarFlags(objects) {
  const problems = [];
  for (const [where, pod] of podsOf(objects)) {
    for (const c of pod.containers.filter((x) => x.name !== 'nbdkeeperd')) {
      const known = SIDECAR_FLAGS[c.image];
      if (!known) {
        problems.push(`${where} ${c.name}: image ${c.image} has no flag list (read that tag's flags into SIDECAR_FLAGS)`);
        continue;
      }
      for (const arg of c.args || []) {
        const m = /^(--[a-z0-9-]+)=(.*)$/.exec(arg);
        if (!m || !known.flags.includes(m[1])) {
          problems.push(`${where} ${c.name}: ${arg} is not --flag=value with a flag ${c.image} is known to have`);
          continue;
        }
        if (m[1] !== '--feature-gates') continue;
        for (const gate of m[2].split(',').map((g) => g.split('=')[0])) {
          if (!known.gates.includes(gate)) problems.push(`${where} ${c.name}: ${c.image} has no feature gate ${gate}`);
        }
      }
    }
  }
  return problems;
}

// Every container names its imagePullPolicy (the README says which):
// Never for the localhost/ image loaded into each node by hand, which no
// registry has; IfNotPresent for a registry image at a pinned tag.
function checkPullPolicies(objects) {
  const problems = [];
  for (const [where, pod] of podsOf(objects)) {
    for (const c of [...(pod.initContainers || []), ...pod.containers]) {
      const want = c.image.startsWith('localhost/') ? 'Never' : 'IfNotPresent';
      if (c.imagePullPolicy !== want) {
        problems.push(`${where} ${c.name}: imagePullPolicy ${c.imagePullPolicy}, want ${want} for ${c.image}`);
      }
    }
  }
  return problems;
}

function checkAll(objects, { daemonFlags, version, controllerCapabilities }) {
  return [
    ...checkNodeDaemonSet(objects, daemonFlags),
    ...checkControllerDeployment(objects, daemonFlags, controllerCapabilities),
    ...checkAttach(objects),
    ...checkSidecarFlags(objects),
    ...checkPullPolicies(objects),
    ...checkNames(objects),
    ...checkImages(objects, version),
  ];
}

module.exports = { checkAll };
