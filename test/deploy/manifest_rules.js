// What the Kubernetes schema cannot check in deploy/kubernetes, gathered by
// checkAll. Here: that the paths nbdkeeperd's flags name are the host paths
// its sidecars and kubelet use, with the mounts and propagation they need;
// that every flag is one nbdkeeperd --help lists; that the names the
// objects share agree; and that both pods run the project version's image.
// In controller_sidecar_rules.js: that every Controller capability the
// daemon advertises (read from csi/controller/controller_service.cc) and
// attachRequired have their sidecar and its RBAC. In container_rules.js:
// that the liveness probes reach the livenessprobe sidecar in time; that
// every sidecar flag is one its pinned tag has; and that every container
// names its imagePullPolicy. In metrics_rules.js: that both pods' /metrics
// is where a cluster's Prometheus scrapes it, and the example scrape config
// keeps it. Each rule returns problems as strings; none is fine.
'use strict';

const { find, container, flagsOf, unixPath, resolve } = require('./manifest_lookups');
const { checkControllerSidecars, checkAttach } = require('./controller_sidecar_rules');
const { checkProbes, checkSidecarFlags, checkPullPolicies } = require('./container_rules');
const { checkMetricsEndpoint, checkScrapeConfig } = require('./metrics_rules');

const DEFAULT_KUBELET_ROOT = '/var/lib/kubelet';
const DEFAULT_DRIVER = 'rbd.nbdkeeper.io';

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
  problems.push(...checkMetricsEndpoint(pod, 'node'));
  problems.push(...checkCephConfig(objects, pod, daemon, 'node'));
  return problems;
}

function checkControllerDeployment(objects, daemonFlags, capabilities) {
  const deployment = find(objects, 'Deployment', 'nbdkeeper-controller');
  if (!deployment) return ['no Deployment nbdkeeper-controller'];
  const pod = deployment.spec.template.spec;
  const daemon = container(pod, 'nbdkeeperd');
  if (!daemon) return ['the controller pod needs a container nbdkeeperd'];
  return [
    ...checkFlagsKnown('nbdkeeperd (controller)', daemon, daemonFlags),
    ...checkControllerSidecars(objects, deployment, capabilities),
    ...checkProbes(pod, 'controller'),
    ...checkMetricsEndpoint(pod, 'controller'),
    ...checkCephConfig(objects, pod, daemon, 'controller'),
  ];
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

// Both pods run the image scripts/image.sh tags from the project version,
// from `repository` (an overlay's registry) or loaded by hand (localhost/).
function checkImages(objects, version, repository = 'localhost/nbdkeeperd') {
  const want = `${repository}:${version}`;
  return objects
    .filter((o) => o.kind === 'DaemonSet' || o.kind === 'Deployment')
    .map((o) => [o, container(o.spec.template.spec, 'nbdkeeperd')])
    .filter(([, c]) => c && c.image !== want)
    .map(([o, c]) => `${o.kind} ${o.metadata.name}: image ${c.image}, want ${want}`);
}

function checkAll(objects, { daemonFlags, version, controllerCapabilities, scrapeConfig, imageRepository }) {
  return [
    ...checkNodeDaemonSet(objects, daemonFlags),
    ...checkControllerDeployment(objects, daemonFlags, controllerCapabilities),
    ...checkAttach(objects),
    ...checkSidecarFlags(objects),
    ...checkPullPolicies(objects),
    ...checkNames(objects),
    ...checkImages(objects, version, imageRepository),
    ...checkScrapeConfig(objects, scrapeConfig),
  ];
}

module.exports = { checkAll, checkFlagsKnown };
