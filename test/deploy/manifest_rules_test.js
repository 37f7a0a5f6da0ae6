// deploy/kubernetes passes the schema and the rules of manifest_rules.js,
// and each check catches the mistake it is there for, made in a copy.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { loadManifests, schemaProblems, daemonFlags } = require('./manifests');
const { checkAll } = require('./manifest_rules');

const options = { daemonFlags: daemonFlags(process.env.NBDKEEPERD), version: process.env.NBDK_VERSION };
const manifests = loadManifests(process.env.NBDK_MANIFESTS);

function problemsAfter(change) {
  const copy = structuredClone(manifests);
  change(copy);
  return checkAll(copy, options);
}

function nodePod(objects) {
  return objects.find((o) => o.kind === 'DaemonSet').spec.template.spec;
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
