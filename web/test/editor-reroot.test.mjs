// Make root in the editor (docs/editor.md "Make root"; Welman 2.1.2, 6.3): the real
// `marionette editor` on a scratch project, the page in Debian's Chromium. The stick figure,
// posed, is re-rooted at its left hand with the Make root button: every joint stays where it
// was (1e-9 m), the saved document records the root and reads with the command line, a drag
// of the old root (the pelvis, the body swinging from the elbow) moves it while the hand
// stays, and undo brings the pelvis back as the root with every joint where it was.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { makeScratch, startServer, launchBrowser, openEditor, waitSaved, dragJoint, removeScratch, BINARY } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];

before(async () => {
  scratch = makeScratch('mn_editor_reroot_');
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  page = await openEditor(context, server.url, errors);
});

after(async () => {
  if (context) await context.close();
  if (server) await server.stop('SIGKILL');
  removeScratch(scratch);
});

const positions = () =>
  page.evaluate(() => {
    const m = window.marionette;
    return Object.fromEntries(m.store.figure.jointNames.map((n) => [n, m.position(n)]));
  });
const worstOf = (a, b) => Math.max(...Object.keys(a).map((n) => Math.hypot(...a[n].map((x, k) => x - b[n][k]))));
const root = () => page.evaluate(() => window.marionette.store.figure.joints.find((j) => j.parent < 0).name);
const ready = () =>
  page.waitForFunction(() => window.marionette?.state, null, { timeout: 30000 }).then(() => page.evaluate(() => window.marionette.ready));

test('Make root on the left hand keeps every joint; the old root drags, the hand stays; undo', async () => {
  // a pose that is not the rest: the left hand pulled out and up (into the key at frame 0)
  await dragJoint(page, 'left hand', 'front', 40, -50);
  await waitSaved(page);
  const p0 = await positions();
  assert.equal(await root(), 'pelvis');
  await page.evaluate(() => window.marionette.select('left hand'));
  await Promise.all([page.waitForEvent('load'), page.click('#make-root')]);
  await ready();
  assert.equal(await root(), 'left hand');
  const p1 = await positions();
  const kept = Object.fromEntries(Object.keys(p0).map((n) => [n, p1[n]]));
  assert.ok(
    Object.keys(p0).every((n) => p1[n]),
    'every joint keeps its name',
  );
  const moved = worstOf(p0, kept);
  assert.ok(moved < 1e-9, `every joint where it was, within ${moved}`);
  assert.ok(
    Object.keys(p1).some((n) => n.endsWith('~')),
    'the motions on the path carried by ~ joints',
  );
  // saved: the document records the root, its key names the re-rooted joints, and reads
  const file = join(scratch.project, 'sequence.json');
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(doc.root, 'left hand');
  assert.ok(Object.keys(doc.keys[0].pose).some((n) => n.endsWith('~')));
  assert.match(execFileSync(BINARY, ['anim', 'info', file], { encoding: 'utf8' }), /keys/);
  // the old root dragged (the chain from the elbow: the body swings from the arm the figure
  // hangs by): it moves, the new root (the hand) stays
  await page.evaluate(() => window.marionette.setSettings({ dragMode: 'named', dragBase: 'left elbow' }));
  await dragJoint(page, 'pelvis', 'front', 30, 0);
  await waitSaved(page);
  const p2 = await positions();
  assert.ok(Math.hypot(...p2.pelvis.map((x, k) => x - p1.pelvis[k])) > 0.02, 'the pelvis moved');
  const hand = Math.hypot(...p2['left hand'].map((x, k) => x - p1['left hand'][k]));
  assert.ok(hand < 1e-9, `the hand stayed within ${hand}`);
  // undo the drag, then the Make root: the page loads again on the pelvis-rooted figure
  await page.evaluate(() => window.marionette.undo());
  const p3 = await positions();
  assert.ok(worstOf(p1, p3) < 1e-12, 'the drag undone');
  await Promise.all([page.waitForEvent('load'), page.evaluate(() => window.marionette.undo())]);
  await ready();
  assert.equal(await root(), 'pelvis');
  const p4 = await positions();
  const back = worstOf(p0, p4);
  assert.ok(back < 1e-9, `undone: every joint where it was, within ${back}`);
  await waitSaved(page);
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).root, undefined);
  // and redo makes the hand the root again
  await Promise.all([page.waitForEvent('load'), page.evaluate(() => window.marionette.redo())]);
  await ready();
  assert.equal(await root(), 'left hand');
  assert.ok(worstOf(p0, await positions().then((p) => Object.fromEntries(Object.keys(p0).map((n) => [n, p[n]])))) < 1e-9);
  assert.deepEqual(
    errors.filter((e) => !/status of 404/.test(e)),
    [],
  );
});
