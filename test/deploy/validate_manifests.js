// node validate_manifests.js MANIFEST_DIR NBDKEEPERD VERSION CONTROLLER_SERVICE_CC
// Fails, listing every problem, unless each manifest matches the Kubernetes
// API schema and the rules of manifest_rules.js hold.
'use strict';

const { loadManifests, loadScrapeConfig, schemaProblems, daemonFlags, controllerCapabilities } = require('./manifests');
const { checkAll } = require('./manifest_rules');

const [dir, nbdkeeperd, version, controllerService] = process.argv.slice(2);
const objects = loadManifests(dir);
const problems = [
  ...schemaProblems(objects),
  ...checkAll(objects, {
    daemonFlags: daemonFlags(nbdkeeperd),
    version,
    controllerCapabilities: controllerCapabilities(controllerService),
    scrapeConfig: loadScrapeConfig(dir),
  }),
];
for (const p of problems) console.error(`validate_manifests: ${p}`);
const files = new Set(objects.map((o) => o.file)).size;
console.log(`validate_manifests: ${objects.length} objects in ${files} files, ${problems.length} problems`);
process.exit(problems.length === 0 && objects.length > 0 ? 0 : 1);
