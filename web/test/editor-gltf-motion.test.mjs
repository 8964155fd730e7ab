// A glTF file with an animation dropped on the page (issue 22): the dialog of a dropped BVH
// take asks, and its first animation opens as a sequence, keys reduced within the tolerance
// (the module's Sequence.addMotion, as `marionette anim import`). CesiumMan (data/skinned, its
// walk: 49 frames at 24 fps) through a real drop event; the real `marionette editor` binary on
// a temporary project, the page in Debian's Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { root, makeScratch, startServer, launchBrowser, openEditor, removeScratch } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
const M = (fn, arg) => page.evaluate(fn, arg);

before(async () => {
  scratch = makeScratch();
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  page = await openEditor(context, server.url, errors);
});

after(async () => {
  try {
    if (context) await context.close();
  } finally {
    if (server) await server.stop('SIGKILL');
    removeScratch(scratch);
  }
});

const drop = (bytes, name) =>
  M(
    ([b, n]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], n, { type: 'application/octet-stream' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [bytes, name],
  );

test('CesiumMan.glb dropped: Cancel opens nothing; Open its motion opens the walk as keys within 0.005 m of every frame', async () => {
  const bytes = [...readFileSync(join(root, 'data/skinned/CesiumMan.glb'))];
  const path0 = await M(() => window.marionette.store.sequencePath);
  await drop(bytes, 'CesiumMan.glb');
  await page.waitForSelector('#motion-dialog');
  assert.match(await page.textContent('#motion-dialog .anim-title'), /49 frames of its first animation/);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#motion-dialog', { state: 'detached' });
  assert.equal(await M(() => window.marionette.store.sequencePath), path0, 'nothing opened');
  assert.ok(!existsSync(join(scratch.project, 'CesiumMan.sequence.json')));

  const reloaded = page.waitForEvent('load');
  await drop(bytes, 'CesiumMan.glb');
  await page.waitForSelector('#motion-dialog');
  await page.fill('#motion-tol', '0.005');
  await page.click('#motion-open');
  await reloaded;
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await M(() => window.marionette.ready);
  const seqPath = await M(() => window.marionette.store.sequencePath);
  assert.match(seqPath, /^CesiumMan(-\d+)?\.sequence\.json$/);
  const doc = JSON.parse(readFileSync(join(scratch.project, seqPath), 'utf8'));
  assert.equal(doc.fps, 24);
  const frames = doc.keys.map((k) => k.frame);
  assert.equal(frames[0], 0);
  assert.equal(frames.at(-1), 48, 'the last key is the last frame');
  assert.ok(frames.length > 3 && frames.length < 49, `${frames.length} keys for 49 frames`);
  assert.match(await page.textContent('#status-line'), /49 frames at 24 fps as \d+ keys within 0\.005 m/);
  // every frame of the animation (the server's figure document of the file) against the
  // page's plain in-betweens
  const worst = await M(async (fig) => {
    const m = window.marionette,
      r = await m.store._json(`/api/figure?path=${encodeURIComponent(fig)}`);
    const take = m.store.m.figureFromDocument(r.body),
      mo = r.body.motion;
    m.keepConstraints(false);
    let w = 0;
    try {
      for (let k = 0; k < mo.frames.length; k++) {
        take.setQ(mo.frames[k]).fk();
        m.setFrame(k);
        const a = take.positions,
          b = m.store.figure.positions;
        for (let j = 0; j < a.length; j += 3) w = Math.max(w, Math.hypot(a[j] - b[j], a[j + 1] - b[j + 1], a[j + 2] - b[j + 2]));
      }
    } finally {
      take.dispose();
    }
    return w;
  }, doc.figure);
  assert.ok(worst <= 0.005 + 1e-9, `an in-between ${worst} m from the animation`);
  assert.deepEqual(
    errors.filter((e) => !/status of 404/.test(e)),
    [],
  );
});
