// What the rules of manifest_rules.js, controller_sidecar_rules.js and
// container_rules.js look up in the loaded manifests: an object by kind and
// name, a pod's container, its flags, where a path inside it lies, and the
// pods of the DaemonSets and Deployments.
'use strict';

const path = require('node:path');

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

function podsOf(objects) {
  return objects
    .filter((o) => o.kind === 'DaemonSet' || o.kind === 'Deployment')
    .map((o) => [`${o.kind} ${o.metadata.name}`, o.spec.template.spec]);
}

module.exports = { find, container, flagsOf, unixPath, resolve, podsOf };
