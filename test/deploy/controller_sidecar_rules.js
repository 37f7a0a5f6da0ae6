// The controller pod's sidecars: every Controller capability the daemon
// advertises (read from csi/controller/controller_service.cc) and
// attachRequired have their sidecar, on nbdkeeperd's socket with leader
// election, and the RBAC it needs, granted to the pod's ServiceAccount.
// Each rule returns problems as strings; none is fine.
'use strict';

const { find, container, flagsOf, unixPath, resolve } = require('./manifest_lookups');

// The RBAC each sidecar needs for what it does, as [apiGroup, resource,
// verbs]; all cluster-wide (the sidecars watch every namespace) except the
// Lease of leader election, which is in the pod's namespace.
const RBAC = {
  provisioner: [
    ['', 'persistentvolumes', ['get', 'list', 'watch', 'create', 'delete', 'patch']],
    ['', 'persistentvolumeclaims', ['get', 'list', 'watch']],
    ['', 'secrets', ['get']],
    ['', 'events', ['create', 'patch']],
    ['', 'nodes', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'storageclasses', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'csinodes', ['get', 'list', 'watch']],
    ['storage.k8s.io', 'volumeattachments', ['get', 'list', 'watch']],
  ],
  // A clone reads its source PVC and holds it with a finalizer until the
  // clone is provisioned (an update of the source PVC).
  clone: [
    ['', 'persistentvolumeclaims', ['get', 'list', 'watch', 'update']],
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
  CLONE_VOLUME: [['csi-provisioner', RBAC.provisioner], ['csi-provisioner', RBAC.clone]],
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

// The sidecars the Deployment's Controller capabilities and attachRequired
// need, each with its RBAC, its socket and its leader election.
function checkControllerSidecars(objects, deployment, capabilities) {
  const pod = deployment.spec.template.spec;
  const daemon = container(pod, 'nbdkeeperd');
  const socket = resolve(pod, daemon, unixPath(flagsOf(daemon).get('--csi-endpoint') || ''));
  const problems = [];

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
  return problems;
}

// Kubernetes enforces ReadWriteOnce across nodes (Multi-Attach) only for a
// driver whose volumes are attached: VolumeAttachments, which csi-attacher
// marks attached (checkControllerSidecars requires it and its RBAC).
function checkAttach(objects) {
  const driver = find(objects, 'CSIDriver');
  if (!driver || driver.spec.attachRequired !== true) {
    return ['CSIDriver: attachRequired must be true, or Kubernetes lets a ReadWriteOnce volume attach on two nodes'];
  }
  return [];
}

module.exports = { checkControllerSidecars, checkAttach };
