// Loads deploy/kubernetes and checks each object against the Kubernetes API
// schema that the kubernetes-models package bundles.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const yaml = require('js-yaml');

// Every YAML document under dir, each with the file it came from.
function loadManifests(dir) {
  const objects = [];
  for (const entry of fs.readdirSync(dir, { recursive: true }).sort()) {
    if (!entry.endsWith('.yaml')) continue;
    const file = path.join(dir, entry);
    for (const doc of yaml.loadAll(fs.readFileSync(file, 'utf8'))) {
      if (doc) objects.push(Object.defineProperty(doc, 'file', { value: entry, enumerable: false }));
    }
  }
  return objects;
}

// kubernetes-models has one module per API group version ("v1", "apps/v1")
// with one class per kind; validate() throws on the first schema violation.
function schemaProblems(objects) {
  const problems = [];
  for (const o of objects) {
    const where = `${o.file}: ${o.kind}/${o.metadata && o.metadata.name}`;
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

// The flags the daemon's --help lists.
function daemonFlags(nbdkeeperd) {
  const help = execFileSync(nbdkeeperd, ['--help'], { encoding: 'utf8' });
  return new Set([...help.matchAll(/^ {2}(--[a-z0-9-]+)/gm)].map((m) => m[1]));
}

module.exports = { loadManifests, schemaProblems, daemonFlags };
