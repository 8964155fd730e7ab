// The npm package as a user gets it: `npm pack` puts the LICENSE in the tarball and
// package.json names its SPDX license; `npm test` (test/run.mjs) says what it needs when
// the native build is missing instead of failing test by test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');

test('the package is MIT-licensed and ships the LICENSE', () => {
  const pkg = JSON.parse(readFileSync(join(web, 'package.json'), 'utf8'));
  assert.equal(pkg.license, 'MIT');
  const lock = JSON.parse(readFileSync(join(web, 'package-lock.json'), 'utf8'));
  assert.equal(lock.packages[''].license, 'MIT');
  assert.deepEqual(readFileSync(join(web, 'LICENSE')), readFileSync(join(web, '..', 'LICENSE')));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: web,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  );
  const files = packed.files.map((f) => f.path);
  assert.ok(files.includes('LICENSE'), `the tarball holds ${files.join(', ')}`);
  assert.ok(files.includes('marionette.mjs'));
});

test('npm test says what it needs when the native command is missing', () => {
  const r = spawnSync(process.execPath, [join(web, 'test', 'run.mjs')], {
    cwd: web,
    encoding: 'utf8',
    env: { ...process.env, MN_CLI: join(web, 'no-such-build', 'marionette') },
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /missing:\n {2}- the native command .*no-such-build\/marionette: run `make build`/);
  assert.match(r.stderr, /`make test-web` at the top of the checkout/);
  assert.equal(r.stdout, '');
});

test('docs/web.md gives the module its real size', (t) => {
  const wasm = join(web, 'marionette.wasm');
  if (!existsSync(wasm)) return t.skip('marionette.wasm is not built (make web)');
  const doc = readFileSync(join(web, '..', 'docs', 'web.md'), 'utf8');
  const m = doc.match(/the module \(about (\d+) kB/);
  assert.ok(m, "docs/web.md names the module's size");
  const kb = statSync(wasm).size / 1024;
  assert.ok(Math.abs(kb - Number(m[1])) <= 0.1 * kb, `the module is ${kb.toFixed(0)} kB, docs/web.md says ${m[1]} kB`);
});
