// /metrics for a cluster's Prometheus: each nbdkeeperd's health endpoint
// listens at its pod IP behind a port named `metrics`, shows no raw rbd-nbd
// output there, and the example scrape config (deploy/kubernetes/example/
// prometheus) keeps exactly those ports. Each rule returns problems as
// strings; none is fine.
'use strict';

const { container, flagsOf, podsOf } = require('./manifest_lookups');

const METRICS_PORT = 'metrics';

// --health-listen is $(VAR):PORT with VAR from status.podIP: the address
// Prometheus's pod discovery scrapes. On hostNetwork that is the node's
// address, where loopback would be unreachable and ":PORT" every interface
// of the node. The port is declared as `metrics` for that discovery. The
// endpoint is then reachable beyond the pod, so --status-output (rbd-nbd's
// raw output in /status) stays off.
function checkMetricsEndpoint(pod, where) {
  const daemon = container(pod, 'nbdkeeperd');
  const flags = flagsOf(daemon);
  const listen = flags.get('--health-listen') || '';
  const problems = [];
  const m = /^\$\(([A-Za-z_][A-Za-z0-9_]*)\):(\d+)$/.exec(listen);
  const env = m && (daemon.env || []).find((e) => e.name === m[1]);
  const fieldPath = env && env.valueFrom && env.valueFrom.fieldRef && env.valueFrom.fieldRef.fieldPath;
  if (fieldPath !== 'status.podIP') {
    problems.push(`${where} nbdkeeperd --health-listen ${listen || '(default)'}: must be $(VAR):PORT with VAR from ` +
      'fieldRef status.podIP, the address Prometheus scrapes' + (pod.hostNetwork ? ' (on hostNetwork the node\'s, not every interface)' : ''));
  }
  const declared = (daemon.ports || []).find((p) => p.name === METRICS_PORT);
  if (m && (!declared || declared.containerPort !== Number(m[2]))) {
    problems.push(`${where} nbdkeeperd: --health-listen port ${m[2]} must be its container port named ${METRICS_PORT}`);
  }
  if (flags.get('--status-output') === 'true') {
    problems.push(`${where} nbdkeeperd: --status-output=true would show rbd-nbd's raw output beyond the pod`);
  }
  return problems;
}

// Prometheus's relabeling, as far as filtering targets goes: keep and drop
// with their source labels joined by the separator and the regex anchored.
function kept(relabelConfigs, labels) {
  for (const r of relabelConfigs || []) {
    const action = r.action || 'replace';
    if (action !== 'keep' && action !== 'drop') continue;
    const value = (r.source_labels || []).map((l) => labels[l] || '').join(r.separator === undefined ? ';' : r.separator);
    const matches = new RegExp(`^(?:${r.regex === undefined ? '(.*)' : r.regex})$`).test(value);
    if (matches !== (action === 'keep')) return false;
  }
  return true;
}

// The targets the scrape config's pod-discovery jobs keep, as
// "Kind name container:port-name", from the pods' declared container ports.
function scrapedPorts(objects, scrapeConfig) {
  const targets = new Set();
  const pods = objects.filter((o) => o.kind === 'DaemonSet' || o.kind === 'Deployment');
  for (const job of (scrapeConfig && scrapeConfig.scrape_configs) || []) {
    for (const sd of (job.kubernetes_sd_configs || []).filter((s) => s.role === 'pod')) {
      const names = sd.namespaces && sd.namespaces.names;
      for (const o of pods.filter((p) => !names || names.includes(p.metadata.namespace))) {
        const pod = o.spec.template.spec;
        for (const c of pod.containers) {
          for (const port of c.ports || []) {
            const labels = {
              __meta_kubernetes_namespace: o.metadata.namespace,
              __meta_kubernetes_pod_container_name: c.name,
              __meta_kubernetes_pod_container_port_name: port.name || '',
              __meta_kubernetes_pod_container_port_number: String(port.containerPort),
            };
            for (const [k, v] of Object.entries(o.spec.template.metadata.labels || {})) {
              labels[`__meta_kubernetes_pod_label_${k.replace(/[^a-zA-Z0-9_]/g, '_')}`] = v;
            }
            if (kept(job.relabel_configs, labels)) targets.add(`${o.kind} ${o.metadata.name} ${c.name}:${port.name}`);
          }
        }
      }
    }
  }
  return targets;
}

// The example scrape config scrapes each pod's nbdkeeperd metrics port and
// nothing else of the pods.
function checkScrapeConfig(objects, scrapeConfig) {
  const want = new Set(podsOf(objects).map(([where]) => `${where} nbdkeeperd:${METRICS_PORT}`));
  const got = scrapedPorts(objects, scrapeConfig);
  return [
    ...[...want].filter((t) => !got.has(t)).map((t) => `scrape config: does not scrape ${t}`),
    ...[...got].filter((t) => !want.has(t)).map((t) => `scrape config: scrapes ${t}, which is not nbdkeeperd's /metrics`),
  ];
}

module.exports = { checkMetricsEndpoint, checkScrapeConfig };
