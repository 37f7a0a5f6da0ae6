// The kustomize base (deploy/kubernetes) and each overlay (deploy/overlays),
// rendered by `kubectl kustomize` ($KUBECTL: any kubectl, Debian 12's 1.20
// with kustomize v2.0.3 the oldest), pass the schema and the rules that the
// files themselves pass, and each overlay changes what it is for.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const yaml = require('js-yaml');
const { parseObjects, loadManifests, loadScrapeConfig, schemaProblems, daemonFlags, controllerCapabilities } =
  require('./manifests');
const { checkAll } = require('./manifest_rules');

const base = process.env.NBDK_MANIFESTS;
const overlays = process.env.NBDK_OVERLAYS;
const options = {
  daemonFlags: daemonFlags(process.env.NBDKEEPERD),
  version: process.env.NBDK_VERSION,
  controllerCapabilities: controllerCapabilities(process.env.NBDK_CONTROLLER_SERVICE),
  scrapeConfig: loadScrapeConfig(base),
};
const files = loadManifests(base);
const examples = files.filter((o) => o.file.startsWith('example/'));

// kubectl's stderr (newer ones warn of the fields v2.0.3 needs) is kept
// for a failure's message.
function render(dir) {
  const kubectl = process.env.KUBECTL;
  if (!kubectl || kubectl.endsWith('NOTFOUND')) {
    throw new Error('no kubectl on the PATH: scripts/setup.sh installs Debian\'s kubernetes-client');
  }
  const out = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseObjects(out, `kustomize ${path.relative(path.dirname(base), dir)}`);
}

function key(o) {
  return `${o.kind} ${o.metadata.namespace || ''}/${o.metadata.name}`;
}

function byKey(objects) {
  return Object.fromEntries(objects.map((o) => [key(o), o]));
}

function daemonSet(objects) {
  return objects.find((o) => o.kind === 'DaemonSet').spec.template.spec;
}

// Every string of an object that names the default kubelet root as a path
// or a flag's value.
function defaultKubeletPaths(value) {
  if (typeof value === 'string') return /(^|=)\/var\/lib\/kubelet(\/|$)/.test(value) ? [value] : [];
  if (value && typeof value === 'object') return Object.values(value).flatMap(defaultKubeletPaths);
  return [];
}

test('the base renders every file beside its kustomization.yaml, as written', () => {
  const rendered = render(base);
  assert.deepStrictEqual(byKey(rendered), byKey(files.filter((o) => !o.file.startsWith('example/'))));
});

test('the kubelet-root overlay moves every kubelet path, and the render passes the schema and rules', () => {
  const rendered = render(path.join(overlays, 'kubelet-root'));
  const objects = [...rendered, ...examples];
  assert.deepStrictEqual(schemaProblems(objects), []);
  assert.deepStrictEqual(checkAll(objects, options), []);
  const root = daemonSet(rendered).containers[0].args.find((a) => a.startsWith('--kubelet-root='));
  assert.notStrictEqual(root, '--kubelet-root=/var/lib/kubelet');
  assert.deepStrictEqual(defaultKubeletPaths(rendered), []);

  // One place left at the default is what the rules are there for.
  const copy = structuredClone(objects);
  daemonSet(copy).volumes.find((v) => v.name === 'registration-dir').hostPath.path = '/var/lib/kubelet/plugins_registry';
  assert.ok(checkAll(copy, options).some((p) => /registrar: \/registration must be .*plugins_registry/.test(p)));
});

test('the image overlay runs both pods from its registry, pulled when missing, and passes the schema and rules', () => {
  const kustomization = yaml.load(fs.readFileSync(path.join(overlays, 'image/kustomization.yaml'), 'utf8'));
  const repository = kustomization.images.find((i) => i.name === 'localhost/nbdkeeperd').newName;
  const rendered = render(path.join(overlays, 'image'));
  const objects = [...rendered, ...examples];
  assert.deepStrictEqual(schemaProblems(objects), []);
  assert.deepStrictEqual(checkAll(objects, { ...options, imageRepository: repository }), []);
  // The same objects as the files otherwise: only the image and its policy.
  const strip = (objs) => byKey(structuredClone(objs).map((o) => {
    for (const c of ((o.spec && o.spec.template && o.spec.template.spec.containers) || [])) {
      if (c.name === 'nbdkeeperd') { delete c.image; delete c.imagePullPolicy; }
    }
    return o;
  }));
  assert.deepStrictEqual(strip(rendered), strip(files.filter((o) => !o.file.startsWith('example/'))));
  assert.ok(checkAll(objects, options).some((p) => p.includes(`image ${repository}:`)),
    'checkImages takes the overlay\'s repository for the base\'s');
});

test('the topology overlay gives the node its labels file and domain labels, and passes the schema and rules', () => {
  const rendered = render(path.join(overlays, 'topology'));
  const objects = [...rendered, ...examples];
  assert.deepStrictEqual(schemaProblems(objects), []);
  assert.deepStrictEqual(checkAll(objects, options), []);
  const node = daemonSet(rendered);
  const args = node.containers[0].args;
  const file = args.find((a) => a.startsWith('--node-labels-file='));
  assert.ok(file, 'the daemon reads its labels file');
  const mount = node.containers[0].volumeMounts.find((m) => file.slice(file.indexOf('=') + 1).startsWith(`${m.mountPath}/`));
  assert.ok(mount && mount.readOnly, 'the labels file is on a read-only mount');
  const volume = node.volumes.find((v) => v.name === mount.name);
  assert.deepStrictEqual(volume.hostPath, { path: mount.mountPath, type: 'Directory' });
  assert.ok(args.some((a) => a.startsWith('--domain-labels=')));
  // Nothing else differs from the base.
  const base = daemonSet(files.filter((o) => !o.file.startsWith('example/')));
  assert.deepStrictEqual(args.slice(0, base.containers[0].args.length), base.containers[0].args);
});

test('the ceph-csi-driver-name overlay serves as rbd.csi.ceph.com everywhere, and passes the schema and rules', () => {
  const name = 'rbd.csi.ceph.com';
  const rendered = render(path.join(overlays, 'ceph-csi-driver-name'));
  // A ceph-csi user's classes already name ceph-csi's driver.
  const classes = structuredClone(examples).map((o) => {
    if (o.kind === 'StorageClass') o.provisioner = name;
    if (o.kind === 'VolumeSnapshotClass') o.driver = name;
    return o;
  });
  const objects = [...rendered, ...classes];
  assert.deepStrictEqual(schemaProblems(objects), []);
  assert.deepStrictEqual(checkAll(objects, options), []);
  assert.ok(!JSON.stringify(rendered).includes('rbd.nbdkeeper.io'), 'no place keeps the base\'s name');
  assert.strictEqual(rendered.find((o) => o.kind === 'CSIDriver').metadata.name, name);
  const node = daemonSet(rendered);
  assert.ok(node.containers[0].args.includes(`--driver-name=${name}`));
  assert.strictEqual(node.volumes.find((v) => v.name === 'socket-dir').hostPath.path, `/var/lib/kubelet/plugins/${name}`);
  // The CSIDriver's fields that Kubernetes keeps immutable match ceph-csi's
  // own object of that name (deploy/rbd/kubernetes/csidriver.yaml in
  // ceph-csi): attachRequired true, podInfoOnMount false.
  const spec = rendered.find((o) => o.kind === 'CSIDriver').spec;
  assert.strictEqual(spec.attachRequired, true);
  assert.strictEqual(spec.podInfoOnMount, false);
  // Only the name differs from the base.
  const renamed = JSON.parse(JSON.stringify(files.filter((o) => !o.file.startsWith('example/'))).split('rbd.nbdkeeper.io').join(name));
  assert.deepStrictEqual(byKey(rendered), byKey(renamed));

  // A class left at the base's name is what the rules are there for.
  const stale = structuredClone(objects);
  stale.find((o) => o.kind === 'StorageClass').provisioner = 'rbd.nbdkeeper.io';
  assert.ok(checkAll(stale, options).some((p) => /provisioner rbd.nbdkeeper.io is not the CSIDriver/.test(p)));
});
