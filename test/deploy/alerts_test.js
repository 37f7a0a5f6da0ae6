// deploy/kubernetes/example/prometheus/alerts.yaml: each rule is complete
// (expr, severity, summary), and every metric it reads is one nbdkeeperd
// exports (named in the daemon's sources), so a renamed metric cannot leave
// an alert that silently never fires. Each check catches its mistake, made
// in a copy.
'use strict';

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const yaml = require('js-yaml');

const SOURCE = process.env.NBDK_SOURCE_DIR;
const ALERTS = path.join(process.env.NBDK_MANIFESTS, 'example/prometheus/alerts.yaml');
const SEVERITIES = new Set(['critical', 'warning']);
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

// Every "nbdkeeper_..." string literal of the daemon's C++ sources.
function exportedFamilies() {
  const names = new Set();
  for (const room of ['daemon', 'csi', 'supervisor', 'base']) {
    for (const file of fs.readdirSync(path.join(SOURCE, room), { recursive: true })) {
      if (!file.endsWith('.cc')) continue;
      const text = fs.readFileSync(path.join(SOURCE, room, file), 'utf8');
      for (const m of text.matchAll(/"(nbdkeeper_[a-z_]+)"/g)) names.add(m[1]);
    }
  }
  return names;
}

function isExported(name, families) {
  if (families.has(name)) return true;
  return HISTOGRAM_SUFFIXES.some((s) => name.endsWith(s) && families.has(name.slice(0, -s.length)));
}

function checkAlerts(doc, families) {
  const problems = [];
  const rules = ((doc && doc.groups) || []).flatMap((g) => g.rules || []);
  if (rules.length === 0) problems.push('no alerting rules');
  for (const r of rules) {
    const where = `alert ${r.alert || '(unnamed)'}`;
    if (!r.alert) problems.push(`${where}: no name`);
    if (typeof r.expr !== 'string' || !r.expr.trim()) problems.push(`${where}: no expr`);
    if (!SEVERITIES.has(r.labels && r.labels.severity)) problems.push(`${where}: severity must be critical or warning`);
    if (!(r.annotations && r.annotations.summary)) problems.push(`${where}: no summary`);
    const read = String(r.expr || '').match(/\bnbdkeeper_[a-z_]+/g) || [];
    if (read.length === 0) problems.push(`${where}: reads no nbdkeeper metric`);
    for (const name of read) {
      if (!isExported(name, families)) problems.push(`${where}: ${name} is not a metric nbdkeeperd exports`);
    }
  }
  return problems;
}

const families = exportedFamilies();
const alerts = yaml.load(fs.readFileSync(ALERTS, 'utf8'));

test('the shipped alerts read only exported metrics and are complete', () => {
  assert.ok(families.has('nbdkeeper_volume_state'), 'the source scan finds the per-volume state');
  assert.deepStrictEqual(checkAlerts(alerts, families), []);
});

test('each check catches its mistake', () => {
  const broken = (change) => {
    const copy = structuredClone(alerts);
    change(copy.groups[0].rules[0]);
    return checkAlerts(copy, families);
  };
  assert.match(broken((r) => { r.expr = 'nbdkeeper_volume_states == 1'; }).join('\n'), /nbdkeeper_volume_states is not/);
  assert.match(broken((r) => { r.expr = 'up == 0'; }).join('\n'), /reads no nbdkeeper metric/);
  assert.match(broken((r) => { delete r.labels.severity; }).join('\n'), /severity/);
  assert.match(broken((r) => { delete r.annotations.summary; }).join('\n'), /no summary/);
  assert.deepStrictEqual(checkAlerts({ groups: [{ rules: [{ alert: 'A', expr: 'nbdkeeper_reattach_seconds_bucket > 0',
    labels: { severity: 'warning' }, annotations: { summary: 's' } }] }] }, families), []);
});
