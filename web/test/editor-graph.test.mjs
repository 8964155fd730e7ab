// The curve graph's edits with the mouse (issue 22): a key dragged in time and value, a
// tangent handle dragged to change the key's Kochanek-Bartels tension and bias (the joint's
// interpolation becoming kb), each one undo step, and the document on disk changed. The real
// `marionette editor` binary on a temporary project, the page in Debian's Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeScratch, startServer, launchBrowser, openEditor, removeScratch } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
const M = (fn, arg) => page.evaluate(fn, arg);

before(async () => {
  scratch = makeScratch();
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  page = await openEditor(context, server.url, errors);
  // three keys of the right knee: 0.2 rad at frame 0, 1.0 at 15, 0.3 at 30
  await M(() => {
    const m = window.marionette,
      fig = m.store.figure,
      a = fig.joints[fig.joint('right knee')].qadr;
    for (const [f, v] of [
      [0, 0.2],
      [15, 1.0],
      [30, 0.3],
    ]) {
      m.setFrame(f);
      const q = Float64Array.from(fig.restQ);
      q[a] = v;
      m.store.setPose(q);
      m.insertKey();
    }
    m.keepConstraints(false);
    m.select('right knee');
    m.graph('right knee');
  });
});

after(async () => {
  try {
    if (context) await context.close();
  } finally {
    if (server) await server.stop('SIGKILL');
    removeScratch(scratch);
  }
});

const keys = () => M(() => window.marionette.state().keys);
const onDisk = async () => {
  await M(() => window.marionette.save());
  const path = await M(() => window.marionette.store.sequencePath);
  return JSON.parse(readFileSync(join(scratch.project, path), 'utf8'));
};
async function drag(from, dx, dy, steps = 10) {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  for (let i = 1; i <= steps; i++) await page.mouse.move(from.x + (dx * i) / steps, from.y + (dy * i) / steps);
  await page.mouse.up();
}

test('a key dragged on the graph moves in time (whole frames) and in value; one undo step; saved', async () => {
  const g = await M(() => window.marionette.graphPoints(1));
  assert.ok(g.key && g.pxPerFrame > 0 && g.pxPerUnit > 0, JSON.stringify(g));
  // 5 frames later, 0.3 rad higher
  await drag(g.key, 5 * g.pxPerFrame, -0.3 * g.pxPerUnit);
  let k = await keys();
  assert.equal(k.length, 3);
  assert.equal(k[1].frame, 20);
  assert.ok(Math.abs(k[1].pose['right knee'] - 1.3) < 0.02, `the knee's key ${k[1].pose['right knee']}`);
  assert.equal(k[0].frame, 0);
  assert.equal(k[2].frame, 30);
  const disk = await onDisk();
  assert.equal(disk.keys[1].frame, 20);
  assert.ok(Math.abs(disk.keys[1].pose['right knee'] - k[1].pose['right knee']) < 1e-12);
  await page.keyboard.press('Control+z');
  k = await keys();
  assert.equal(k[1].frame, 15);
  assert.equal(k[1].pose['right knee'], 1.0);
  await page.keyboard.press('Control+Shift+z');
  k = await keys();
  assert.equal(k[1].frame, 20);
  // past its neighbour: it stops one frame short
  const g2 = await M(() => window.marionette.graphPoints(1));
  await drag(g2.key, 15 * g2.pxPerFrame, 0);
  assert.equal((await keys())[1].frame, 29);
  await page.keyboard.press('Control+z');
  assert.equal((await keys())[1].frame, 20);
});

test('a tangent handle dragged out and up: lower tension, positive bias, the knee interpolated kb; undo', async () => {
  // the key pressed last shows its handles
  let g = await M(() => window.marionette.graphPoints(1));
  await page.mouse.click(g.key.x, g.key.y);
  g = await M(() => window.marionette.graphPoints(1));
  assert.equal(g.keyIndex, 1);
  assert.ok(g.right && g.left, 'the handles are shown');
  const before = await M(() => window.marionette.graph('right knee'));
  const sample = () =>
    M(() => {
      window.marionette.setFrame(25);
      return window.marionette.state().pose['right knee'];
    });
  const at25 = await sample();
  // out by 14 px (tension -0.5), up by 28 px (bias +0.5)
  await drag(g.right, 14, -28);
  let k = await keys();
  assert.ok(Math.abs(k[1].tcb[0] + 0.5) < 0.05, `tension ${k[1].tcb}`);
  assert.ok(Math.abs(k[1].tcb[2] - 0.5) < 0.05, `bias ${k[1].tcb}`);
  assert.equal(k[1].tcb[1], 0);
  const doc = await M(() => window.marionette.store.doc);
  assert.equal(doc.interpolation.joints['right knee'].rotation, 'kb');
  assert.notEqual(await sample(), at25, 'the in-betweens changed');
  assert.ok(before.keys === 3);
  const disk = await onDisk();
  assert.deepEqual(disk.keys[1].tcb, k[1].tcb);
  await page.keyboard.press('Control+z');
  k = await keys();
  assert.equal(k[1].tcb, undefined);
  assert.equal((await M(() => window.marionette.store.doc)).interpolation, undefined);
  assert.equal(await sample(), at25);
  assert.deepEqual(
    errors.filter((e) => !/status of 404/.test(e)),
    [],
  );
});
