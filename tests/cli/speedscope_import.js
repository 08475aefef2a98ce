// SPDX-License-Identifier: MIT
// Import a collapsed-stack file with speedscope's own importer, headless:
//   node speedscope_import.js SPEEDSCOPE_PACKAGE_DIR FILE
// prints {"profiles": N, "total": WEIGHT, "frames": [...]} as JSON.
//
// The npm package ships speedscope as one browser bundle, not as modules.
// The bundle keeps its importer behind a promise that it awaits in
// importProfileGroupFromText (a name it exports, so not minified): that
// promise is handed out to this script, then the bundle runs against a
// stand-in DOM until its user interface fails to start, which is expected
// and does not concern the importer.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [pkg, file] = process.argv.slice(2);
const dir = path.join(pkg, 'dist', 'release');
const bundle = fs.readdirSync(dir).find((f) => /^speedscope-.*\.js$/.test(f));
if (!bundle) {
  console.error('speedscope_import: no bundle in ' + dir);
  process.exit(3);
}
const src = fs.readFileSync(path.join(dir, bundle), 'utf8');
const m = /async function \w+\(\w+,\w+\)\{return\(await (\w+)\)\.importProfileGroupFromText\(/.exec(src);
if (!m) {
  console.error('speedscope_import: importProfileGroupFromText not found in ' + bundle);
  process.exit(3);
}
const stub = () =>
  new Proxy(function () {}, {
    get: (t, k) => (k === Symbol.toPrimitive ? () => '' : stub()),
    apply: () => stub(),
    construct: () => stub(),
  });
globalThis.window = globalThis;
globalThis.document = stub();
globalThis.navigator = { userAgent: 'node' };
globalThis.location = { hash: '', search: '', href: 'file:///speedscope' };
globalThis.addEventListener = () => {};
globalThis.requestAnimationFrame = () => {};
const log = console.log;
console.log = () => {}; // the bundle's own chatter
try {
  vm.runInThisContext(src.replace(m[0], `globalThis.__speedscopeImporter=${m[1]};` + m[0]));
} catch (e) {
  // the user interface, with no real DOM
}
(async () => {
  const mod = await globalThis.__speedscopeImporter;
  const group = await mod.importProfileGroupFromText(
    path.basename(file) + '.collapsedstack.txt', fs.readFileSync(file, 'utf8'));
  if (!group) throw new Error('speedscope imported nothing');
  const p = group.profiles[0];
  const frames = new Set();
  p.forEachFrame((f) => frames.add(f.name));
  log(JSON.stringify({ profiles: group.profiles.length, total: p.getTotalWeight(),
    frames: [...frames].sort() }));
})().catch((e) => {
  console.error('speedscope_import: ' + e);
  process.exit(1);
});
