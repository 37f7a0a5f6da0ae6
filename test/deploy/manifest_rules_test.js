// deploy/kubernetes passes the schema and the rules of manifest_rules.js,
// and each check catches the mistake it is there for, made in a copy.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { loadManifests, loadScrapeConfig, schemaProblems, daemonFlags, controllerCapabilities } = require('./manifests');
const { checkAll } = require('./manifest_rules');

const capabilities = controllerCapabilities(process.env.NBDK_CONTROLLER_SERVICE);
const options = {
  daemonFlags: daemonFlags(process.env.NBDKEEPERD),
  version: process.env.NBDK_VERSION,
  controllerCapabilities: capabilities,
  scrapeConfig: loadScrapeConfig(process.env.NBDK_MANIFESTS),
};
const manifests = loadManifests(process.env.NBDK_MANIFESTS);

function problemsAfter(change) {
  const copy = structuredClone(manifests);
  change(copy);
  return checkAll(copy, options);
}

function nodePod(objects) {
  return objects.find((o) => o.kind === 'DaemonSet').spec.template.spec;
}

function controllerPod(objects) {
  return objects.find((o) => o.kind === 'Deployment').spec.template.spec;
}

function clusterRole(objects) {
  return objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'nbdkeeper-controller');
}

// Takes `verb` off every rule of the controller's ClusterRole that grants it
// on group/resource.
function revoke(objects, group, resource, verb) {
  for (const rule of clusterRole(objects).rules) {
    if (rule.apiGroups.includes(group) && rule.resources.includes(resource)) {
      rule.verbs = rule.verbs.filter((v) => v !== verb);
    }
  }
}

function containerOf(pod, name) {
  return pod.containers.find((c) => c.name === name);
}

function setFlag(c, flag, value) {
  c.args = c.args.filter((a) => !a.startsWith(flag + '=')).concat(value === undefined ? [] : [`${flag}=${value}`]);
}

function assertCaught(problems, pattern) {
  assert.ok(problems.some((p) => pattern.test(p)), `no problem matching ${pattern} in ${JSON.stringify(problems)}`);
}

test('the manifests as they are pass', () => {
  assert.deepStrictEqual(checkAll(manifests, options), []);
});

test('the schema rejects a wrong value and an unknown kind', () => {
  const copy = structuredClone(manifests);
  containerOf(nodePod(copy), 'nbdkeeperd').volumeMounts[0].mountPropagation = 'Bidi';
  copy.push({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDrivers', metadata: { name: 'x' } });
  const problems = schemaProblems(copy);
  assertCaught(problems, /mountPropagation must be equal to one of the allowed values/);
  assertCaught(problems, /CSIDrivers is not a Kubernetes API kind/);
});

test('the kubelet directory without Bidirectional propagation', () => {
  const problems = problemsAfter((o) => {
    delete containerOf(nodePod(o), 'nbdkeeperd').volumeMounts.find((m) => m.name === 'kubelet-dir').mountPropagation;
  });
  assertCaught(problems, /Bidirectional/);
});

test('a kubelet root mounted elsewhere than its host path', () => {
  const problems = problemsAfter((o) => { nodePod(o).volumes.find((v) => v.name === 'kubelet-dir').hostPath.path = '/srv/kubelet'; });
  assertCaught(problems, /--kubelet-root/);
});

test('a socket the registrar registers at another host path', () => {
  const problems = problemsAfter((o) => {
    setFlag(containerOf(nodePod(o), 'nbdkeeperd'), '--csi-endpoint', 'unix:///run/nbdkeeper/csi.sock');
  });
  assertCaught(problems, /kubelet-registration-path/);
  assertCaught(problems, /liveness-probe --csi-address/);
});

test('the journal on an emptyDir, which dies with the pod', () => {
  const problems = problemsAfter((o) => {
    const v = nodePod(o).volumes.find((v) => v.name === 'state-dir');
    delete v.hostPath;
    v.emptyDir = {};
  });
  assertCaught(problems, /--state-dir/);
});

test('a key dir on disk rather than under /run', () => {
  const problems = problemsAfter((o) => { nodePod(o).volumes.find((v) => v.name === 'run-dir').hostPath.path = '/var/run-keys'; });
  assertCaught(problems, /--key-dir.*tmpfs/);
});

test('a systemd bus that is not the host systemd\'s socket', () => {
  const problems = problemsAfter((o) => {
    setFlag(containerOf(nodePod(o), 'nbdkeeperd'), '--systemd-bus', 'unix:path=/run/nbdkeeper/private');
  });
  assertCaught(problems, /--systemd-bus/);
});

test('a flag nbdkeeperd does not know', () => {
  const problems = problemsAfter((o) => { containerOf(nodePod(o), 'nbdkeeperd').args.push('--keydir=/run/keys'); });
  assertCaught(problems, /--keydir/);
});

test('a node id that is not the node name', () => {
  const problems = problemsAfter((o) => { setFlag(containerOf(nodePod(o), 'nbdkeeperd'), '--node-id', 'node-1'); });
  assertCaught(problems, /--node-id/);
});

test('a driver name the CSIDriver does not carry', () => {
  const problems = problemsAfter((o) => { o.find((x) => x.kind === 'CSIDriver').metadata.name = 'rbd.csi.ceph.com'; });
  assertCaught(problems, /no CSIDriver/);
  assertCaught(problems, /provisioner/);
});

test('a controller sidecar on another socket, without leader election', () => {
  const problems = problemsAfter((o) => {
    const pod = o.find((x) => x.kind === 'Deployment').spec.template.spec;
    setFlag(containerOf(pod, 'csi-resizer'), '--csi-address', '/tmp/csi.sock');
    setFlag(containerOf(pod, 'csi-provisioner'), '--leader-election', undefined);
  });
  assertCaught(problems, /csi-resizer --csi-address/);
  assertCaught(problems, /csi-provisioner: --leader-election/);
});

test('a VolumeSnapshotClass without deletionPolicy, of another driver, with no snapshotter secret', () => {
  const copy = structuredClone(manifests);
  const vsc = copy.find((x) => x.kind === 'VolumeSnapshotClass');
  delete vsc.deletionPolicy;
  assertCaught(schemaProblems(copy), /VolumeSnapshotClass\/nbdkeeper-rbd: deletionPolicy must be Delete or Retain/);
  const problems = problemsAfter((o) => {
    const v = o.find((x) => x.kind === 'VolumeSnapshotClass');
    v.driver = 'rbd.csi.ceph.com';
    v.parameters['csi.storage.k8s.io/snapshotter-secret-name'] = 'other';
    v.parameters.clusterID = 'other';
  });
  assertCaught(problems, /VolumeSnapshotClass nbdkeeper-rbd: driver rbd.csi.ceph.com is not the CSIDriver/);
  assertCaught(problems, /VolumeSnapshotClass nbdkeeper-rbd: snapshotter secret nbdkeeper\/other/);
  assertCaught(problems, /VolumeSnapshotClass nbdkeeper-rbd: clusterID other/);
});

test('a clusterID missing from config.json', () => {
  const problems = problemsAfter((o) => { o.find((x) => x.kind === 'StorageClass').parameters.clusterID = 'other'; });
  assertCaught(problems, /clusterID other/);
});

test('an image tag other than the version', () => {
  const problems = problemsAfter((o) => { containerOf(nodePod(o), 'nbdkeeperd').image = 'localhost/nbdkeeperd:0.0.1'; });
  assertCaught(problems, /want localhost\/nbdkeeperd:/);
});

test('the capabilities are read from csi/controller/controller_service.cc', () => {
  for (const cap of ['CREATE_DELETE_VOLUME', 'EXPAND_VOLUME', 'CREATE_DELETE_SNAPSHOT']) {
    assert.ok(capabilities.includes(cap), `${cap} missing from ${JSON.stringify(capabilities)}`);
  }
  assert.ok(!capabilities.includes('PUBLISH_UNPUBLISH_VOLUME'), 'docs/design/attach-and-rwo.md says the Controller has no ControllerPublish');
});

test('attachRequired false', () => {
  const problems = problemsAfter((o) => { o.find((x) => x.kind === 'CSIDriver').spec.attachRequired = false; });
  assertCaught(problems, /attachRequired must be true/);
});

test('attachRequired without csi-attacher, or without its VolumeAttachment RBAC', () => {
  let problems = problemsAfter((o) => {
    const pod = controllerPod(o);
    pod.containers = pod.containers.filter((c) => c.name !== 'csi-attacher');
  });
  assertCaught(problems, /attachRequired: the controller pod needs a container csi-attacher/);
  problems = problemsAfter((o) => {
    revoke(o, 'storage.k8s.io', 'volumeattachments', 'patch');
    clusterRole(o).rules = clusterRole(o).rules.filter((r) => !r.resources.includes('volumeattachments/status'));
  });
  assertCaught(problems, /attachRequired: csi-attacher needs patch on storage.k8s.io\/volumeattachments /);
  assertCaught(problems, /attachRequired: csi-attacher needs patch on storage.k8s.io\/volumeattachments\/status/);
});

test('an advertised capability without its sidecar', () => {
  for (const [cap, sidecar] of [['CREATE_DELETE_VOLUME', 'csi-provisioner'], ['CLONE_VOLUME', 'csi-provisioner'],
    ['EXPAND_VOLUME', 'csi-resizer'], ['CREATE_DELETE_SNAPSHOT', 'csi-snapshotter'], ['LIST_SNAPSHOTS', 'csi-snapshotter']]) {
    const problems = problemsAfter((o) => {
      const pod = controllerPod(o);
      pod.containers = pod.containers.filter((c) => c.name !== sidecar);
    });
    assertCaught(problems, new RegExp(`${cap}: the controller pod needs a container ${sidecar}`));
  }
});

test('an advertised capability without its RBAC', () => {
  const problems = problemsAfter((o) => {
    revoke(o, 'snapshot.storage.k8s.io', 'volumesnapshotcontents', 'update');
    revoke(o, 'snapshot.storage.k8s.io', 'volumesnapshots', 'get');
    revoke(o, '', 'persistentvolumeclaims/status', 'patch');
    revoke(o, '', 'persistentvolumes', 'create');
    revoke(o, '', 'persistentvolumeclaims', 'update');
  });
  assertCaught(problems, /CREATE_DELETE_SNAPSHOT: csi-snapshotter needs update on snapshot.storage.k8s.io\/volumesnapshotcontents /);
  assertCaught(problems, /CREATE_DELETE_SNAPSHOT: csi-provisioner needs get on snapshot.storage.k8s.io\/volumesnapshots /);
  assertCaught(problems, /EXPAND_VOLUME: csi-resizer needs patch on core\/persistentvolumeclaims\/status/);
  assertCaught(problems, /CREATE_DELETE_VOLUME: csi-provisioner needs create on core\/persistentvolumes /);
  assertCaught(problems, /CLONE_VOLUME: csi-provisioner needs update on core\/persistentvolumeclaims /);
});

test('RBAC bound to another ServiceAccount, or granted in one namespace only', () => {
  let problems = problemsAfter((o) => {
    o.find((x) => x.kind === 'ClusterRoleBinding').subjects[0].name = 'someone-else';
  });
  assertCaught(problems, /csi-provisioner needs get,list,watch,create,delete,patch on core\/persistentvolumes/);
  problems = problemsAfter((o) => {
    const b = o.find((x) => x.kind === 'ClusterRoleBinding');
    b.kind = 'RoleBinding';
    b.metadata.namespace = 'nbdkeeper';
  });
  assertCaught(problems, /csi-snapshotter needs .* cluster-wide/);
  problems = problemsAfter((o) => { o.find((x) => x.kind === 'RoleBinding').metadata.namespace = 'default'; });
  assertCaught(problems, /csi-attacher: leader election needs get,create,update on leases in nbdkeeper/);
});

test('a capability no sidecar is known for', () => {
  const problems = checkAll(structuredClone(manifests), { ...options, controllerCapabilities: [...capabilities, 'MODIFY_VOLUME'] });
  assertCaught(problems, /MODIFY_VOLUME: no sidecar is known/);
});

test('the capability parser reads only ControllerGetCapabilities, and fails on none', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'caps-'));
  const file = path.join(dir, 'controller_service.cc');
  fs.writeFileSync(file, 'void Other() { Rpc::GET_VOLUME; }\n' +
    'grpc::ServerUnaryReactor* ControllerService::ControllerGetCapabilities(\n' +
    '  for (auto type : {Rpc::CREATE_DELETE_VOLUME, Rpc::EXPAND_VOLUME}) {}\n}\n' +
    'void After() { Rpc::LIST_VOLUMES; }\n');
  assert.deepStrictEqual(controllerCapabilities(file), ['CREATE_DELETE_VOLUME', 'EXPAND_VOLUME']);
  fs.writeFileSync(file, 'grpc::ServerUnaryReactor* ControllerService::ControllerGetCapabilities(\n}\n');
  assert.throws(() => controllerCapabilities(file), /names no Rpc:: capability/);
  fs.rmSync(dir, { recursive: true });
});

test('a probe timeout not shorter than the kubelet probe\'s', () => {
  let problems = problemsAfter((o) => { setFlag(containerOf(nodePod(o), 'liveness-probe'), '--probe-timeout', '5s'); });
  assertCaught(problems, /node nbdkeeperd livenessProbe: timeoutSeconds 5 must be longer than the liveness-probe --probe-timeout 5s/);
  assertCaught(problems, /node nbdkeeperd startupProbe: timeoutSeconds 5/);
  problems = problemsAfter((o) => { delete containerOf(nodePod(o), 'nbdkeeperd').startupProbe.timeoutSeconds; });
  assertCaught(problems, /node nbdkeeperd startupProbe: timeoutSeconds 1 must be longer/);
  problems = problemsAfter((o) => { setFlag(containerOf(controllerPod(o), 'liveness-probe'), '--probe-timeout', undefined); });
  assertCaught(problems, /controller liveness-probe: --probe-timeout=DURATION is needed/);
});

test('a liveness sidecar on every node address, or a probe that would miss it', () => {
  let problems = problemsAfter((o) => { setFlag(containerOf(nodePod(o), 'liveness-probe'), '--http-endpoint', ':9818'); });
  assertCaught(problems, /node liveness-probe --http-endpoint :9818: on hostNetwork it must listen on loopback/);
  problems = problemsAfter((o) => { delete containerOf(nodePod(o), 'nbdkeeperd').livenessProbe.httpGet.host; });
  assertCaught(problems, /node nbdkeeperd livenessProbe: host \(none\) is not the liveness-probe's 127.0.0.1/);
  problems = problemsAfter((o) => {
    setFlag(containerOf(controllerPod(o), 'liveness-probe'), '--http-endpoint', '127.0.0.1:9819');
    containerOf(controllerPod(o), 'nbdkeeperd').livenessProbe.httpGet.host = '127.0.0.1';
  });
  assertCaught(problems, /controller liveness-probe --http-endpoint 127.0.0.1:9819: kubelet probes the pod IP/);
  assertCaught(problems, /controller nbdkeeperd livenessProbe: host 127.0.0.1: kubelet would probe it from the node/);
});

test('a named port healthz that is not the liveness sidecar\'s, and a controller without a liveness probe', () => {
  let problems = problemsAfter((o) => {
    containerOf(nodePod(o), 'nbdkeeperd').ports.find((p) => p.name === 'healthz').containerPort = 9810;
  });
  assertCaught(problems, /node nbdkeeperd livenessProbe: port healthz is not the liveness-probe --http-endpoint port 9818/);
  problems = problemsAfter((o) => { containerOf(controllerPod(o), 'nbdkeeperd').livenessProbe.httpGet.port = 'health'; });
  assertCaught(problems, /controller nbdkeeperd livenessProbe: port health is not/);
  problems = problemsAfter((o) => { delete containerOf(controllerPod(o), 'nbdkeeperd').livenessProbe; });
  assertCaught(problems, /controller pod: nbdkeeperd has no livenessProbe/);
  problems = problemsAfter((o) => { setFlag(containerOf(controllerPod(o), 'liveness-probe'), '--csi-address', '/tmp/csi.sock'); });
  assertCaught(problems, /controller liveness-probe --csi-address does not reach/);
  problems = problemsAfter((o) => { setFlag(containerOf(controllerPod(o), 'nbdkeeperd'), '--health-listen', '127.0.0.1:9819'); });
  assertCaught(problems, /controller: --health-listen and the liveness-probe share port 9819/);
});

test('a container without imagePullPolicy, or with the wrong one', () => {
  const problems = problemsAfter((o) => {
    delete containerOf(controllerPod(o), 'csi-snapshotter').imagePullPolicy;
    containerOf(nodePod(o), 'nbdkeeperd').imagePullPolicy = 'IfNotPresent';
  });
  assertCaught(problems, /Deployment nbdkeeper-controller csi-snapshotter: imagePullPolicy undefined, want IfNotPresent/);
  assertCaught(problems, /DaemonSet nbdkeeper-node nbdkeeperd: imagePullPolicy IfNotPresent, want Never/);
});

test('a sidecar flag, feature gate or tag not read from the pinned source', () => {
  const problems = problemsAfter((o) => {
    const pod = controllerPod(o);
    containerOf(pod, 'csi-provisioner').args.push('--prevent-volume-mode-convertion=true');
    setFlag(containerOf(pod, 'csi-resizer'), '--feature-gates', 'RecoverVolumeExpansionFailure=true,HonorPVReclaimPolicy=true');
    containerOf(pod, 'csi-attacher').image = 'registry.k8s.io/sig-storage/csi-attacher:v4.13.0';
  });
  assertCaught(problems, /csi-provisioner: --prevent-volume-mode-convertion=true is not --flag=value with a flag/);
  assertCaught(problems, /csi-resizer: registry.k8s.io\/sig-storage\/csi-resizer:v1.14.0 has no feature gate HonorPVReclaimPolicy/);
  assertCaught(problems, /csi-attacher: image registry.k8s.io\/sig-storage\/csi-attacher:v4.13.0 has no flag list/);
});

test('/metrics where Prometheus does not scrape, or on every node interface', () => {
  let problems = problemsAfter((o) => { setFlag(containerOf(nodePod(o), 'nbdkeeperd'), '--health-listen', ':9810'); });
  assertCaught(problems, /node nbdkeeperd --health-listen :9810: must be \$\(VAR\):PORT with VAR from fieldRef status.podIP.*not every interface/);
  problems = problemsAfter((o) => { setFlag(containerOf(controllerPod(o), 'nbdkeeperd'), '--health-listen', '127.0.0.1:9810'); });
  assertCaught(problems, /controller nbdkeeperd --health-listen 127.0.0.1:9810: must be \$\(VAR\):PORT/);
  problems = problemsAfter((o) => {
    containerOf(controllerPod(o), 'nbdkeeperd').env.find((e) => e.name === 'POD_IP').valueFrom.fieldRef.fieldPath = 'status.hostIP';
  });
  assertCaught(problems, /controller nbdkeeperd --health-listen \$\(POD_IP\):9810: must be/);
  problems = problemsAfter((o) => {
    containerOf(nodePod(o), 'nbdkeeperd').ports.find((p) => p.name === 'metrics').containerPort = 9811;
  });
  assertCaught(problems, /node nbdkeeperd: --health-listen port 9810 must be its container port named metrics/);
  problems = problemsAfter((o) => { containerOf(controllerPod(o), 'nbdkeeperd').args.push('--status-output=true'); });
  assertCaught(problems, /controller nbdkeeperd: --status-output=true would show rbd-nbd's raw output/);
});

// checkAll with the example scrape config's first job changed.
function scrapeProblemsAfter(change) {
  const scrapeConfig = structuredClone(options.scrapeConfig);
  change(scrapeConfig.scrape_configs[0]);
  return checkAll(structuredClone(manifests), { ...options, scrapeConfig });
}

test('a scrape config that misses a pod\'s /metrics, or scrapes another port', () => {
  let problems = scrapeProblemsAfter((job) => { job.kubernetes_sd_configs[0].namespaces.names = ['kube-system']; });
  assertCaught(problems, /scrape config: does not scrape DaemonSet nbdkeeper-node nbdkeeperd:metrics/);
  assertCaught(problems, /scrape config: does not scrape Deployment nbdkeeper-controller nbdkeeperd:metrics/);
  problems = scrapeProblemsAfter((job) => { job.relabel_configs[0].regex = 'nbdkeeperd;.*'; });
  assertCaught(problems, /scrape config: scrapes DaemonSet nbdkeeper-node nbdkeeperd:healthz, which is not nbdkeeperd's \/metrics/);
  problems = problemsAfter((o) => { containerOf(controllerPod(o), 'nbdkeeperd').ports.find((p) => p.name === 'metrics').name = 'prom'; });
  assertCaught(problems, /scrape config: does not scrape Deployment nbdkeeper-controller nbdkeeperd:metrics/);
});
