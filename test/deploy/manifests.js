// Loads deploy/kubernetes and checks each object against the Kubernetes API
// schema that the kubernetes-models package bundles.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const yaml = require('js-yaml');

// The YAML documents of a text, each with the file it came from.
function parseObjects(text, file) {
  return yaml.loadAll(text).filter((doc) => doc)
    .map((doc) => Object.defineProperty(doc, 'file', { value: file, enumerable: false }));
}

// The objects of dir's YAML files (the kustomize base; its
// kustomization.yaml is not one) and of dir/example's, which `kubectl apply
// -f` takes; not their subdirectories (example/prometheus is Prometheus's
// configuration, loadScrapeConfig).
function loadManifests(dir) {
  const objects = [];
  for (const sub of ['', 'example']) {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.yaml') || entry.name === 'kustomization.yaml') continue;
      const file = path.join(sub, entry.name);
      objects.push(...parseObjects(fs.readFileSync(path.join(dir, file), 'utf8'), file));
    }
  }
  return objects.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

// The example Prometheus scrape config (prometheus.yml's scrape_configs).
function loadScrapeConfig(dir) {
  return yaml.load(fs.readFileSync(path.join(dir, 'example/prometheus/scrape-config.yaml'), 'utf8'));
}

// Kinds of CRDs that kubernetes-models does not carry, checked here for
// what their CRD's schema requires. VolumeSnapshotClass
// (snapshot.storage.k8s.io/v1, external-snapshotter's CRD): driver and
// deletionPolicy (Delete or Retain) required, parameters a map of strings,
// no other top-level fields.
const CRD_KINDS = {
  'snapshot.storage.k8s.io/v1': {
    VolumeSnapshotClass(o) {
      const problems = [];
      const fields = new Set(['apiVersion', 'kind', 'metadata', 'driver', 'parameters', 'deletionPolicy']);
      for (const k of Object.keys(o)) if (!fields.has(k)) problems.push(`unknown field ${k}`);
      if (!o.metadata || typeof o.metadata.name !== 'string') problems.push('metadata.name is required');
      if (typeof o.driver !== 'string' || o.driver === '') problems.push('driver is required');
      if (!['Delete', 'Retain'].includes(o.deletionPolicy)) problems.push('deletionPolicy must be Delete or Retain');
      if (o.parameters !== undefined &&
          (typeof o.parameters !== 'object' || Object.values(o.parameters).some((v) => typeof v !== 'string'))) {
        problems.push('parameters must map strings to strings');
      }
      return problems;
    },
  },
};

// kubernetes-models has one module per API group version ("v1", "apps/v1")
// with one class per kind; validate() throws on the first schema violation.
function schemaProblems(objects) {
  const problems = [];
  for (const o of objects) {
    const where = `${o.file}: ${o.kind}/${o.metadata && o.metadata.name}`;
    const crd = CRD_KINDS[o.apiVersion] && CRD_KINDS[o.apiVersion][o.kind];
    if (crd) {
      problems.push(...crd(o).map((p) => `${where}: ${p}`));
      continue;
    }
    let model;
    try {
      model = require(`kubernetes-models/${o.apiVersion}`)[o.kind];
    } catch (e) {
      model = undefined;
    }
    if (!model) {
      problems.push(`${where}: ${o.apiVersion} ${o.kind} is not a Kubernetes API kind`);
      continue;
    }
    try {
      new model(o).validate();
    } catch (e) {
      problems.push(`${where}: ${e.message}`);
    }
  }
  return problems;
}

// The Controller capabilities nbdkeeperd advertises: the Rpc:: names in
// ControllerGetCapabilities of csi/controller/controller_service.cc, read from the
// source so that the manifests are checked against what the code says.
function controllerCapabilities(file) {
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf('ControllerService::ControllerGetCapabilities(');
  const end = text.indexOf('\n}\n', start);
  if (start < 0 || end < 0) throw new Error(`${file}: no ControllerService::ControllerGetCapabilities`);
  const names = [...text.slice(start, end).matchAll(/\bRpc::([A-Z_]+)\b/g)].map((m) => m[1]);
  if (!names.length) throw new Error(`${file}: ControllerGetCapabilities names no Rpc:: capability`);
  return [...new Set(names)];
}

// The flags the daemon's --help lists.
function daemonFlags(nbdkeeperd) {
  const help = execFileSync(nbdkeeperd, ['--help'], { encoding: 'utf8' });
  return new Set([...help.matchAll(/^ {2}(--[a-z0-9-]+)/gm)].map((m) => m[1]));
}

module.exports = { parseObjects, loadManifests, loadScrapeConfig, schemaProblems, daemonFlags, controllerCapabilities };
