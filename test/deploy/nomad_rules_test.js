// deploy/nomad parses as HCL and passes the rules of nomad_rules.js, and each
// rule catches the mistake it is there for, made in a copy.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadManifests, daemonFlags } = require('./manifests');
const { find, container } = require('./manifest_lookups');
const { loadNomadFiles, parseFile } = require('./nomad_files');
const { checkNomad, durationSeconds, decodeCephCsiId } = require('./nomad_rules');

// The DaemonSet's startup probe window: how long Kubernetes gives the heal.
function startupWindowSeconds(objects) {
  const ds = find(objects, 'DaemonSet', 'nbdkeeper-node');
  const probe = container(ds.spec.template.spec, 'nbdkeeperd').startupProbe;
  return probe.periodSeconds * probe.failureThreshold;
}

const options = {
  daemonFlags: daemonFlags(process.env.NBDKEEPERD),
  version: process.env.NBDK_VERSION,
  startupWindowS: startupWindowSeconds(loadManifests(process.env.NBDK_MANIFESTS)),
};
const loaded = loadNomadFiles(process.env.NBDK_NOMAD);

async function problemsAfter(change) {
  const copy = structuredClone(await loaded);
  change(copy);
  return checkNomad(copy, options);
}

const nodeTask = (f) => f.node.job['nbdkeeper-node'][0].group.node[0].task.nbdkeeperd[0];
const controllerTask = (f) => f.controller.job['nbdkeeper-controller'][0].group.controller[0].task.nbdkeeperd[0];
const configOf = (task) => task.config[0];
const pluginOf = (task) => task.csi_plugin[0];

function setFlag(task, flag, value) {
  const config = configOf(task);
  config.args = config.args.filter((a) => !a.startsWith(flag + '=')).concat(value === undefined ? [] : [`${flag}=${value}`]);
}

function assertCaught(problems, pattern) {
  assert.ok(problems.some((p) => pattern.test(p)), `no problem matching ${pattern} in ${JSON.stringify(problems)}`);
}

test('the files as they are pass', async () => {
  assert.deepStrictEqual(checkNomad(await loaded, options), []);
});

test('a file that is not HCL fails to load', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nomad-hcl-'));
  const file = path.join(dir, 'broken.nomad.hcl');
  fs.writeFileSync(file, 'job "x" {\n  type = \n');
  await assert.rejects(parseFile(file), /not valid HCL/);
  fs.rmSync(dir, { recursive: true });
});

test('Go durations and ceph-csi volume IDs are read as Nomad and ceph-csi read them', () => {
  assert.strictEqual(durationSeconds('5m'), 300);
  assert.strictEqual(durationSeconds('1m30s'), 90);
  assert.ok(Number.isNaN(durationSeconds('5 minutes')));
  const id = decodeCephCsiId('0001-0004-test-000000000000000a-6f1e2a8c-3b4d-4e5f-8a9b-0c1d2e3f4a5b');
  assert.deepStrictEqual(id, { clusterID: 'test', poolID: 10, uuid: '6f1e2a8c-3b4d-4e5f-8a9b-0c1d2e3f4a5b' });
  assert.strictEqual(decodeCephCsiId('0001-0005-test-000000000000000a-6f1e2a8c-3b4d-4e5f-8a9b-0c1d2e3f4a5b'), undefined);
});

test('the socket is where Nomad connects, in both jobs', async () => {
  assertCaught(await problemsAfter((f) => setFlag(nodeTask(f), '--csi-endpoint', 'unix:///plugin/csi.sock')),
    /node job: --csi-endpoint \/plugin\/csi.sock is not mount_dir/);
  assertCaught(await problemsAfter((f) => { pluginOf(controllerTask(f)).mount_dir = '/other'; }),
    /controller job: --csi-endpoint \/csi\/csi.sock is not mount_dir/);
});

test('--csi-root is stage_publish_base_dir, and neither it nor mount_dir lies in the other', async () => {
  assertCaught(await problemsAfter((f) => setFlag(nodeTask(f), '--csi-root', '/var/lib/kubelet')),
    /--csi-root \/var\/lib\/kubelet must be stage_publish_base_dir/);
  assertCaught(await problemsAfter((f) => setFlag(nodeTask(f), '--csi-root')), /--csi-root undefined must be/);
  assertCaught(await problemsAfter((f) => {
    pluginOf(nodeTask(f)).stage_publish_base_dir = '/csi/volumes';
    setFlag(nodeTask(f), '--csi-root', '/csi/volumes');
  }), /must not lie in one another/);
});

test('the node plugin is a privileged system job in the host PID and network namespaces', async () => {
  assertCaught(await problemsAfter((f) => { f.node.job['nbdkeeper-node'][0].type = 'service'; }), /type must be system/);
  assertCaught(await problemsAfter((f) => { configOf(nodeTask(f)).privileged = false; }), /must be privileged/);
  assertCaught(await problemsAfter((f) => { delete configOf(nodeTask(f)).pid_mode; }), /pid_mode must be host/);
  assertCaught(await problemsAfter((f) => { configOf(nodeTask(f)).network_mode = 'bridge'; }),
    /network_mode must be host/);
  assertCaught(await problemsAfter((f) => { pluginOf(nodeTask(f)).type = 'monolith'; }), /type must be node/);
  assertCaught(await problemsAfter((f) => setFlag(nodeTask(f), '--node-id', 'node-1')), /--node-id must be/);
});

test('the host paths the flags name are bound from the host, and Nomad\'s own binds are left to it', async () => {
  const withoutBind = (target) => (f) => {
    const config = configOf(nodeTask(f));
    config.volumes = config.volumes.filter((v) => v.split(':')[1] !== target);
  };
  assertCaught(await problemsAfter(withoutBind('/var/lib/nbdkeeper')), /--state-dir \/var\/lib\/nbdkeeper must be/);
  assertCaught(await problemsAfter(withoutBind('/run/nbdkeeper')), /--key-dir \/run\/nbdkeeper\/keys must be/);
  assertCaught(await problemsAfter(withoutBind('/run/host-systemd')), /--systemd-bus .* must be on a writable bind/);
  assertCaught(await problemsAfter(withoutBind('/sys')), /\/sys must be bound from the host/);
  assertCaught(await problemsAfter(withoutBind('/lib/modules')), /\/lib\/modules must be bound/);
  assertCaught(await problemsAfter((f) => {
    configOf(nodeTask(f)).volumes = configOf(nodeTask(f)).volumes.map((v) =>
      v === '/var/lib/nbdkeeper:/var/lib/nbdkeeper' ? 'local/state:/var/lib/nbdkeeper' : v);
  }), /--state-dir .* writable bind of the host/);
  for (const target of ['/csi', '/csi-volumes', '/dev']) {
    assertCaught(await problemsAfter((f) => { configOf(nodeTask(f)).volumes.push(`/srv${target}:${target}`); }),
      new RegExp(`meets ${target}, which Nomad binds itself`));
  }
});

test('health_timeout gives the heal the DaemonSet\'s startup window', async () => {
  assertCaught(await problemsAfter((f) => { pluginOf(nodeTask(f)).health_timeout = '30s'; }),
    /health_timeout 30s is shorter than the heal's 300 s/);
  assertCaught(await problemsAfter((f) => { delete pluginOf(nodeTask(f)).health_timeout; }),
    /health_timeout undefined is shorter/);
});

test('both jobs run the version\'s image with known flags, one plugin id, driver and cluster list', async () => {
  assertCaught(await problemsAfter((f) => { configOf(controllerTask(f)).image = 'localhost/nbdkeeperd:latest'; }),
    /controller job: image localhost\/nbdkeeperd:latest/);
  assertCaught(await problemsAfter((f) => setFlag(nodeTask(f), '--kubelet-dir', '/x')), /--kubelet-dir=\/x is not/);
  assertCaught(await problemsAfter((f) => { pluginOf(controllerTask(f)).id = 'other'; }), /csi_plugin ids differ/);
  assertCaught(await problemsAfter((f) => setFlag(controllerTask(f), '--driver-name', 'x.io')), /--driver-name differ/);
  assertCaught(await problemsAfter((f) => { controllerTask(f).template[0].data = '[{"clusterID": "c2", "monitors": ["m"]}]'; }),
    /controller job: .* must read the cluster list with file/);
  assertCaught(await problemsAfter((f) => { controllerTask(f).template[0].data = '${file("node.nomad.hcl")}'; }),
    /controller job: node.nomad.hcl: Unexpected token/);
  assertCaught(await problemsAfter((f) => { nodeTask(f).template[0].data = '${file("missing.json")}'; }),
    /node job: missing.json: ENOENT/);
  assertCaught(await problemsAfter((f) => { controllerTask(f).template[0].data = '${file("volume-create.hcl")}'; }),
    /cluster lists differ/);
  assertCaught(await problemsAfter((f) => { nodeTask(f).template[0].destination = 'local/elsewhere.json'; }),
    /no template renders/);
});

test('the volume specifications name the plugin, a known cluster and Nomad\'s modes', async () => {
  assertCaught(await problemsAfter((f) => { f.volumeCreate.plugin_id = 'rbd'; }), /volume-create.hcl: plugin_id rbd/);
  assertCaught(await problemsAfter((f) => { f.volumeCreate.parameters[0].clusterID = 'nowhere'; }),
    /parameters.clusterID nowhere is not in the plugins' config.json/);
  assertCaught(await problemsAfter((f) => { f.volumeCreate.capability[0].access_mode = 'ReadWriteOnce'; }),
    /access_mode ReadWriteOnce is not Nomad's/);
  assertCaught(await problemsAfter((f) => { f.volumeRegister.capability[0].attachment_mode = 'block'; }),
    /attachment_mode block is not Nomad's/);
  assertCaught(await problemsAfter((f) => { delete f.volumeRegister.secrets[0].userKey; }), /secrets need userID and userKey/);
  assertCaught(await problemsAfter((f) => { f.volumeCreate.capacity = '1G'; }), /capacity is not a key/);
  assertCaught(await problemsAfter((f) => { f.volumeCreate.external_id = f.volumeRegister.external_id; }),
    /a new volume has no external_id/);
});

test('the registered volume\'s external_id is a ceph-csi ID its context agrees with', async () => {
  assertCaught(await problemsAfter((f) => { f.volumeRegister.external_id = 'csi-vol-1'; }), /is not a ceph-csi volume ID/);
  assertCaught(await problemsAfter((f) => { f.volumeRegister.context[0].clusterID = 'other'; }),
    /context.clusterID must be external_id's cluster/);
  assertCaught(await problemsAfter((f) => { f.volumeRegister.context[0].imageName = 'csi-vol-0'; }),
    /imageName csi-vol-0 is not csi-vol-<external_id's UUID>/);
  assertCaught(await problemsAfter((f) => { f.volumeRegister.context[0].mounter = 'rbd'; }), /mounter must be rbd-nbd/);
  assertCaught(await problemsAfter((f) => { delete f.volumeRegister.external_id; }), /needs external_id/);
});
