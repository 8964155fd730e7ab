// `npm test`: the module's tests as `make test-web` runs them (the Node tests, then the
// browser and editor tests one at a time), once what they compare with and drive is there:
// the native command (MN_CLI, default build/marionette at the top of the checkout), the
// WebAssembly module (web/marionette.wasm), the editor's page (web/editor/dist), the dev
// dependencies (npm ci) and Debian's Chromium (MN_CHROMIUM, default /usr/bin/chromium).
// When one is missing it says which and how to make it, and fails (exit status 1).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(web, '..');
const cli = process.env.MN_CLI ?? join(root, 'build', 'marionette');
const chromium = process.env.MN_CHROMIUM ?? '/usr/bin/chromium';
const needs = [
  [cli, `the native command ${cli}: run \`make build\` at the top of the checkout, or set MN_CLI`],
  [join(web, 'marionette.wasm'), 'the WebAssembly module web/marionette.wasm: run `make web` at the top of the checkout'],
  [join(web, 'editor', 'dist', 'editor.js'), "the editor's page web/editor/dist: run `make web` at the top of the checkout"],
  [join(web, 'node_modules', 'playwright-core'), 'the dev dependencies: run `npm ci` in web/'],
  [chromium, `Chromium at ${chromium}: apt-get install chromium (scripts/deps.sh), or set MN_CHROMIUM`],
];
const missing = needs.filter(([path]) => !existsSync(path)).map(([, what]) => what);
if (missing.length) {
  console.error(
    `npm test compares the module with the native build and drives the editor in Chromium; missing:\n` +
      missing.map((m) => `  - ${m}\n`).join('') +
      '(`make test-web` at the top of the checkout builds what is missing and runs these tests)',
  );
  process.exit(1);
}
const tests = readdirSync(join(web, 'test'))
  .filter((f) => f.endsWith('.test.mjs'))
  .sort();
const browser = tests.filter((f) => f === 'browser.test.mjs' || f.startsWith('editor'));
const node = tests.filter((f) => !browser.includes(f));
const env = { ...process.env, MN_CLI: cli };
for (const [files, extra] of [
  [node, []],
  [browser, ['--test-concurrency=1']],
]) {
  const r = spawnSync(process.execPath, ['--test', ...extra, ...files.map((f) => join('test', f))], { cwd: web, env, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
