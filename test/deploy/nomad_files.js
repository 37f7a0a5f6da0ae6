// deploy/nomad's job files and volume specifications, parsed by a real HCL2
// parser (@cdktf/hcl2json: HashiCorp's hcl library compiled to WebAssembly,
// pinned by package-lock.json) into the JSON form `nomad job run -output`
// resembles: every block is a list of its bodies, labelled blocks are
// objects keyed by label. A file that is not valid HCL fails the load.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parse } = require('@cdktf/hcl2json');

const FILES = {
  node: 'node.nomad.hcl',
  controller: 'controller.nomad.hcl',
  volumeCreate: 'volume-create.hcl',
  volumeRegister: 'volume-register.hcl',
};

async function parseFile(file) {
  try {
    return await parse(file, fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: not valid HCL: ${e.message}`);
  }
}

// Every file of FILES, parsed, by its key, and the directory (`dir`), where
// a job's file() reads.
async function loadNomadFiles(dir) {
  const out = { dir };
  for (const [key, name] of Object.entries(FILES)) out[key] = await parseFile(path.join(dir, name));
  return out;
}

// The one job of a job file: { name, body }.
function jobOf(parsed) {
  const names = Object.keys(parsed.job || {});
  if (names.length !== 1) return undefined;
  return { name: names[0], body: parsed.job[names[0]][0] };
}

// The labelled blocks `kind` of a body as [label, body] pairs.
function labelled(body, kind) {
  return Object.entries((body && body[kind]) || {}).map(([label, bodies]) => [label, bodies[0]]);
}

// The single unlabelled block `kind` of a body, or undefined.
function block(body, kind) {
  const list = body && body[kind];
  return Array.isArray(list) && list.length === 1 ? list[0] : undefined;
}

// Every task of a job as { group, name, task }.
function tasksOf(job) {
  return labelled(job.body, 'group').flatMap(([group, g]) =>
    labelled(g, 'task').map(([name, task]) => ({ group, name, task })));
}

module.exports = { FILES, parseFile, loadNomadFiles, jobOf, labelled, block, tasksOf };
