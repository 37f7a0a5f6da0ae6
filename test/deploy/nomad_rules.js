// What docs/operate/nomad.md says of deploy/nomad, as rules over the parsed files
// (nomad_files.js): the node plugin is a privileged system job in the
// host's PID and network namespaces; its CSI socket is where Nomad looks
// (mount_dir/csi.sock, plugins/csi/client.go's socket name); its --csi-root
// is the stage_publish_base_dir beneath which Nomad sends every path
// (client/pluginmanager/csimanager/volume.go); the host paths its flags name
// are bound from the host, and Nomad's own binds (mount_dir,
// stage_publish_base_dir, /dev) are left to Nomad; health_timeout gives the
// heal as long as the DaemonSet's startup probe does. Both jobs run the
// project version's image with flags nbdkeeperd --help lists, one plugin ID,
// one driver name and one cluster list; the volume specifications name that
// plugin, a cluster of that list, Nomad's access and attachment modes, and
// the register one a ceph-csi volume ID its volume context agrees with.
// Each rule returns problems as strings; none is fine.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { flagsOf, unixPath } = require('./manifest_lookups');
const { checkFlagsKnown } = require('./manifest_rules');
const { jobOf, block, tasksOf } = require('./nomad_files');

// Nomad's socket name in mount_dir (nomad/structs CSISocketName).
const SOCKET_NAME = 'csi.sock';
// What Nomad binds into every CSI plugin task besides mount_dir and
// stage_publish_base_dir (plugin_supervisor_hook.go).
const NOMAD_DEV_MOUNT = '/dev';
const ACCESS_MODES = ['single-node-reader-only', 'single-node-writer', 'multi-node-reader-only',
  'multi-node-single-writer', 'multi-node-multi-writer'];
const ATTACHMENT_MODES = ['file-system', 'block-device'];
// The keys api.CSIVolume has for a volume specification (api/csi.go).
const VOLUME_KEYS = ['id', 'name', 'namespace', 'type', 'plugin_id', 'external_id', 'capacity_min', 'capacity_max',
  'capability', 'mount_options', 'secrets', 'parameters', 'context', 'topology_request', 'snapshot_id', 'clone_id'];

const beneath = (p, dir) => p === dir || p.startsWith(dir + '/');

// Go's time.ParseDuration for the units a job file uses; NaN otherwise.
function durationSeconds(text) {
  const units = { h: 3600, m: 60, s: 1, ms: 0.001 };
  const parts = [...String(text).matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== String(text)) return NaN;
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]], 0);
}

// The task directories the Docker driver binds into every task.
const TASK_DIR_BINDS = ['local', 'secrets', 'alloc'].map((d) => ({ source: d, target: `/${d}`, readonly: false }));

// The Docker driver's binds, `volumes` ("src:dst[:ro]") and `mount` blocks
// alike, and the task directories: { source, target, readonly }; a
// relative source is in the task dir.
function bindsOf(config) {
  const binds = [...TASK_DIR_BINDS];
  binds.push(...(config.volumes || []).map((v) => {
    const [source, target, opts = ''] = v.split(':');
    return { source, target, readonly: opts.split(',').includes('ro') };
  }));
  for (const m of config.mount || []) {
    binds.push({ source: m.source, target: m.target, readonly: m.readonly === true });
  }
  return binds;
}

// Where a container path lies: the deepest bind covering it, and for a host
// bind the host path.
function resolveBind(binds, file) {
  const best = binds.filter((b) => beneath(file, b.target)).sort((a, b) => b.target.length - a.target.length)[0];
  if (!best) return undefined;
  const host = best.source.startsWith('/') ? path.posix.join(best.source, file.slice(best.target.length)) : undefined;
  return { bind: best, host };
}

// The plugin task of a job file: { job, task, plugin, config, flags }.
function pluginTask(parsed, file) {
  const job = jobOf(parsed);
  if (!job) return { problems: [`${file}: must hold exactly one job`] };
  const tasks = tasksOf(job).filter((t) => block(t.task, 'csi_plugin'));
  if (tasks.length !== 1) return { problems: [`${file}: job ${job.name} needs exactly one task with a csi_plugin`] };
  const { task } = tasks[0];
  const config = block(task, 'config') || {};
  return { job, task, plugin: block(task, 'csi_plugin'), config, flags: flagsOf({ args: config.args }), problems: [] };
}

// The JSON cluster list a template renders to `file` inside the task: the
// template's data is file("NAME"), which `nomad job run` reads beside the
// job file (jobspec2's file(), relative to the job file's directory).
function clusterList(p, file, dir) {
  const binds = bindsOf(p.config);
  const at = resolveBind(binds, file);
  if (!at || at.host) return { problem: `--ceph-csi-config ${file}: must lie on a bind of the task dir` };
  const source = path.posix.join(at.bind.source, file.slice(at.bind.target.length));
  const tpl = (p.task.template || []).find((t) => t.destination === source);
  if (!tpl) return { problem: `--ceph-csi-config ${file}: no template renders ${source}` };
  const name = /^\$\{file\("([^"]+)"\)\}$/.exec(tpl.data || '');
  if (!name) return { problem: `${source}: the template must read the cluster list with file("...")` };
  try {
    const list = JSON.parse(fs.readFileSync(path.join(dir, name[1]), 'utf8'));
    if (!Array.isArray(list) || !list.every((c) => c.clusterID && Array.isArray(c.monitors) && c.monitors.length)) {
      return { problem: `${name[1]}: must be a list of { clusterID, monitors }` };
    }
    return { list, file: name[1] };
  } catch (e) {
    return { problem: `${name[1]}: ${e.message}` };
  }
}

// Whatever both plugin jobs share: the docker driver, the image, known
// flags, the socket in mount_dir, and the cluster list.
function checkPluginTask(p, where, { daemonFlags, version }, dir) {
  const problems = [];
  if (p.task.driver !== 'docker') problems.push(`${where}: driver must be docker`);
  const want = `localhost/nbdkeeperd:${version}`;
  if (p.config.image !== want) problems.push(`${where}: image ${p.config.image}, want ${want}`);
  problems.push(...checkFlagsKnown(where, { args: p.config.args }, daemonFlags));
  const socket = unixPath(p.flags.get('--csi-endpoint') || '');
  if (socket !== path.posix.join(p.plugin.mount_dir || '', SOCKET_NAME)) {
    problems.push(`${where}: --csi-endpoint ${socket} is not mount_dir/${SOCKET_NAME}, where Nomad connects`);
  }
  const clusters = clusterList(p, p.flags.get('--ceph-csi-config') || '', dir);
  if (clusters.problem) problems.push(`${where}: ${clusters.problem}`);
  return { problems, clusters: clusters.list || [], clusterFile: clusters.file };
}

function checkNodeJob(p, { startupWindowS }) {
  const problems = [];
  const where = `node job ${p.job.name}`;
  if (p.job.body.type !== 'system') problems.push(`${where}: type must be system (a plugin on every client)`);
  if (p.plugin.type !== 'node') problems.push(`${where}: csi_plugin type must be node`);
  if (p.config.privileged !== true) problems.push(`${where}: must be privileged (mounts, nbd devices)`);
  if (p.config.pid_mode !== 'host') problems.push(`${where}: pid_mode must be host (rbd-nbd's pids are the host's)`);
  if (p.config.network_mode !== 'host') problems.push(`${where}: network_mode must be host`);
  if (!/^\$\{node\.unique\.(name|id)\}$/.test(p.flags.get('--node-id') || '')) {
    problems.push(`${where}: --node-id must be \${node.unique.name} or \${node.unique.id}`);
  }

  const base = p.plugin.stage_publish_base_dir;
  const mountDir = p.plugin.mount_dir || '';
  if (!base || p.flags.get('--csi-root') !== base) {
    problems.push(`${where}: --csi-root ${p.flags.get('--csi-root')} must be stage_publish_base_dir ${base}`);
  } else if (beneath(base, mountDir) || beneath(mountDir, base)) {
    problems.push(`${where}: stage_publish_base_dir and mount_dir must not lie in one another (Nomad refuses it)`);
  }

  const binds = bindsOf(p.config);
  for (const own of [mountDir, base, NOMAD_DEV_MOUNT].filter(Boolean)) {
    for (const b of binds.filter((x) => beneath(x.target, own) || beneath(own, x.target))) {
      problems.push(`${where}: bind ${b.source}:${b.target} meets ${own}, which Nomad binds itself`);
    }
  }
  const hostBind = (flag, file, why, hostDir = file) => {
    const at = resolveBind(binds, file);
    if (!at || !at.host || !beneath(at.host, hostDir) || at.bind.readonly) {
      problems.push(`${where}: ${flag} ${file} must be on a writable bind of the host's ${hostDir} (${why})`);
    }
  };
  hostBind('--state-dir', p.flags.get('--state-dir') || '', 'the node journal outlives the task');
  hostBind('--key-dir', p.flags.get('--key-dir') || '', 'key files on the host\'s tmpfs', '/run');
  const bus = /^unix:path=(.*)$/.exec(p.flags.get('--systemd-bus') || '');
  if (!bus) problems.push(`${where}: --systemd-bus must be unix:path=... (the host systemd's private socket)`);
  else hostBind('--systemd-bus', bus[1], 'rbd-nbd in scopes of its own', '/run/systemd');
  for (const dir of ['/sys', '/lib/modules']) {
    const at = resolveBind(binds, dir);
    if (!at || at.host !== dir) problems.push(`${where}: ${dir} must be bound from the host's ${dir}`);
  }

  const timeout = durationSeconds(p.plugin.health_timeout);
  if (!(timeout >= startupWindowS)) {
    problems.push(`${where}: health_timeout ${p.plugin.health_timeout} is shorter than the heal's ` +
      `${startupWindowS} s (the DaemonSet's startup probe)`);
  }
  return problems;
}

function checkControllerJob(p) {
  const problems = [];
  const where = `controller job ${p.job.name}`;
  if (p.job.body.type !== 'service') problems.push(`${where}: type must be service`);
  if (p.plugin.type !== 'controller') problems.push(`${where}: csi_plugin type must be controller`);
  if (p.config.privileged) problems.push(`${where}: needs no privileges (it only talks to Ceph)`);
  return problems;
}

// ceph-csi's volume ID: version, cluster ID length (hex), cluster ID, pool
// ID (16 hex digits), the image's UUID.
function decodeCephCsiId(id) {
  const m = /^([0-9a-f]{4})-([0-9a-f]{4})-(.+)-([0-9a-f]{16})-([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})$/.exec(id);
  if (!m || parseInt(m[2], 16) !== m[3].length) return undefined;
  return { clusterID: m[3], poolID: parseInt(m[4], 16), uuid: m[5] };
}

function checkVolume(spec, where, { pluginId, clusterIDs }) {
  const problems = [];
  for (const key of Object.keys(spec)) {
    if (!VOLUME_KEYS.includes(key)) problems.push(`${where}: ${key} is not a key of Nomad's volume specification`);
  }
  if (spec.type !== 'csi') problems.push(`${where}: type must be csi`);
  if (spec.plugin_id !== pluginId) problems.push(`${where}: plugin_id ${spec.plugin_id}, the plugins' id is ${pluginId}`);
  if (!spec.id || !spec.name) problems.push(`${where}: needs id and name`);
  const caps = spec.capability || [];
  if (!caps.length) problems.push(`${where}: needs a capability`);
  for (const c of caps) {
    if (!ACCESS_MODES.includes(c.access_mode)) problems.push(`${where}: access_mode ${c.access_mode} is not Nomad's`);
    if (!ATTACHMENT_MODES.includes(c.attachment_mode)) {
      problems.push(`${where}: attachment_mode ${c.attachment_mode} is not Nomad's`);
    }
  }
  for (const m of spec.mount_options || []) {
    const extra = Object.keys(m).filter((k) => k !== 'fs_type' && k !== 'mount_flags');
    if (extra.length) problems.push(`${where}: mount_options has ${extra.join(', ')}`);
  }
  const secrets = block(spec, 'secrets') || {};
  if (!secrets.userID || !secrets.userKey) problems.push(`${where}: secrets need userID and userKey`);
  const checkCluster = (id, what) => {
    if (!clusterIDs.includes(id)) problems.push(`${where}: ${what} ${id} is not in the plugins' config.json`);
  };
  if (spec.external_id === undefined) {
    const params = block(spec, 'parameters') || {};
    checkCluster(params.clusterID, 'parameters.clusterID');
    if (!params.pool) problems.push(`${where}: parameters need pool`);
    return problems;
  }
  const ctx = block(spec, 'context') || {};
  const id = decodeCephCsiId(spec.external_id);
  if (!id) return [...problems, `${where}: external_id ${spec.external_id} is not a ceph-csi volume ID`];
  checkCluster(id.clusterID, 'the cluster of external_id');
  if (ctx.clusterID !== id.clusterID) problems.push(`${where}: context.clusterID must be external_id's cluster`);
  if (!ctx.pool) problems.push(`${where}: context needs pool`);
  if (ctx.imageName !== undefined && ctx.imageName !== `csi-vol-${id.uuid}`) {
    problems.push(`${where}: context.imageName ${ctx.imageName} is not csi-vol-<external_id's UUID>`);
  }
  if (ctx.mounter !== undefined && ctx.mounter !== 'rbd-nbd') problems.push(`${where}: context.mounter must be rbd-nbd`);
  return problems;
}

// files: loadNomadFiles's (with its dir); options: daemonFlags, version,
// startupWindowS.
function checkNomad(files, options) {
  const node = pluginTask(files.node, 'node.nomad.hcl');
  const controller = pluginTask(files.controller, 'controller.nomad.hcl');
  if (node.problems.length || controller.problems.length) return [...node.problems, ...controller.problems];
  const nodeTask = checkPluginTask(node, 'node job', options, files.dir);
  const controllerTask = checkPluginTask(controller, 'controller job', options, files.dir);
  const problems = [...nodeTask.problems, ...controllerTask.problems, ...checkNodeJob(node, options),
    ...checkControllerJob(controller)];
  if (node.plugin.id !== controller.plugin.id) problems.push('the node and controller csi_plugin ids differ');
  if (node.flags.get('--driver-name') !== controller.flags.get('--driver-name')) {
    problems.push('the node and controller --driver-name differ');
  }
  if (nodeTask.clusterFile !== controllerTask.clusterFile) problems.push('the node and controller cluster lists differ');
  const shared = { pluginId: node.plugin.id, clusterIDs: nodeTask.clusters.map((c) => c.clusterID) };
  problems.push(...checkVolume(files.volumeCreate, 'volume-create.hcl', shared));
  problems.push(...checkVolume(files.volumeRegister, 'volume-register.hcl', shared));
  if (files.volumeCreate.external_id !== undefined) problems.push('volume-create.hcl: a new volume has no external_id');
  if (files.volumeRegister.external_id === undefined) problems.push('volume-register.hcl: needs external_id');
  return problems;
}

module.exports = { checkNomad, durationSeconds, decodeCephCsiId };
