// What each container of the two pods must say for itself: the liveness
// probes reach the livenessprobe sidecar in time, every sidecar flag and
// feature gate is one its pinned tag has, and every container names its
// imagePullPolicy. Each rule returns problems as strings; none is fine.
'use strict';

const { container, flagsOf, unixPath, resolve, podsOf } = require('./manifest_lookups');

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

// Every container names its imagePullPolicy (docs/operate/kubernetes.md says
// which): Never for the localhost/ image loaded into each node by hand,
// which no registry has; IfNotPresent for a registry image at a pinned tag.
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

module.exports = { checkProbes, checkSidecarFlags, checkPullPolicies };
