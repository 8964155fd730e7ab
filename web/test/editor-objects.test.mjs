// Polygon objects on joints in the editor (docs/editor.md "Objects"; Welman 6.1.1): the real
// `marionette editor` on a project holding a two-link arm whose skeleton text names an OBJ
// triangle on each link (the files of tests/integration/test_cli_objects.c), the page in
// Debian's Chromium. Both objects are drawn on their joints; after a drag the drawn vertices
// are where `marionette fk --objects` puts them for the page's pose (1e-9), and a path out
// of the project is refused by the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { makeScratch, startServer, launchBrowser, openEditor, waitSaved, dragJoint, removeScratch, BINARY } from './editor-harness.mjs';

const ARM =
  'define skeleton "arm"\n  joint "base"\n  joint "upper"\n  joint "lower"\nend skeleton\n' +
  'define joint "upper"\n  object "box.obj"\n  offset 0 1 0\n  hinge z -180 180\nend joint\n' +
  'define joint "lower"\n  object "parts/box.obj"\n  offset 1 0 0\n  hinge z -180 180\nend joint\n';
const TRI = 'v 0 0 0\nv 0.5 0 0\nv 0 0.5 0\nf 1 2 3\n';

let scratch, server, context, page;
const errors = [];

before(async () => {
  scratch = makeScratch('mn_editor_objects_');
  const p = scratch.project;
  mkdirSync(join(p, 'parts'));
  writeFileSync(join(p, 'arm.skel'), ARM);
  writeFileSync(join(p, 'box.obj'), TRI);
  writeFileSync(join(p, 'parts/box.obj'), TRI);
  writeFileSync(join(p, 'arm.json'), JSON.stringify({ figure: 'arm.skel', fps: 30, keys: [{ frame: 0, pose: {} }] }));
  writeFileSync(join(p, 'editor.json'), JSON.stringify({ sequence: 'arm.json' }));
  server = await startServer(p, scratch);
  context = await launchBrowser(scratch);
  page = await openEditor(context, server.url, errors);
});

after(async () => {
  if (context) await context.close();
  if (server) await server.stop('SIGKILL');
  removeScratch(scratch);
});

// the 6 vertices `marionette fk --objects` writes for a state (the upper link's, then the lower's)
function cliVertices(q) {
  const out = join(scratch.dir, 'posed.obj');
  execFileSync(BINARY, ['fk', join(scratch.project, 'arm.skel'), '--q', q.join(','), '--objects', out]);
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('v '))
    .map((l) => l.slice(2).trim().split(/\s+/).map(Number));
}
const worst = (a, b) => Math.max(...a.map((v, i) => Math.hypot(v[0] - b[i][0], v[1] - b[i][1], v[2] - b[i][2])));

test('each object is drawn on its joint and follows it through a drag, where fk --objects puts it', async () => {
  const objs = await page.evaluate(() => window.marionette.objects());
  assert.deepEqual(objs.drawn, [
    { joint: 'upper', path: 'box.obj' },
    { joint: 'lower', path: 'parts/box.obj' },
  ]);
  assert.deepEqual(objs.problems, []);
  const drawn = () => page.evaluate(() => [...window.marionette.objectVertices('upper'), ...window.marionette.objectVertices('lower')]);
  const q = () => page.evaluate(() => Array.from(window.marionette.store.figure.q));
  const rest = await drawn();
  assert.ok(worst(rest, cliVertices(await q())) < 1e-9, 'at rest');
  // the lower link's end pulled up and left: both links' objects go with their joints
  await dragJoint(page, 'lower', 'front', -60, -50);
  await waitSaved(page);
  const posed = await drawn(),
    want = cliVertices(await q());
  const moved = Math.max(...posed.map((v, i) => Math.hypot(v[0] - rest[i][0], v[1] - rest[i][1], v[2] - rest[i][2])));
  assert.ok(moved > 0.05, `the objects moved ${moved}`);
  const off = worst(posed, want);
  assert.ok(off < 1e-9, `drawn where fk --objects puts them, within ${off}`);
  // the object's vertex at its joint's origin is the joint
  const lower = await page.evaluate(() => window.marionette.position('lower'));
  assert.ok(Math.hypot(...lower.map((x, k) => x - posed[3][k])) < 1e-9);
  // the file API the objects come through keeps to the project
  const outside = await page.evaluate(() => window.marionette.store.server.file('../arm.skel').then((r) => r.status));
  assert.equal(outside, 403);
  assert.deepEqual(
    errors.filter((e) => !/status of (404|403)/.test(e)),
    [],
  );
});
