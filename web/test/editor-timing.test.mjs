// Time in the editor (issue 22): a shrink puts keys on whole frames (the Fractions option keeps
// them where the factor puts them), the BVH export reaches the last key either way, the
// ruler starts at the sequence's first frame, the interpolation is chosen for the sequence
// and for a joint from the page, and a dropped CMU take opens as its motion (keys reduced). The real `marionette editor` binary on a temporary
// project, the page in Debian's Chromium, the buttons clicked with the mouse.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from '../marionette.mjs';
import { root, makeScratch, startServer, launchBrowser, openEditor, removeScratch, waitSaved, dragJoint } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
const realErrors = () => errors.filter((e) => !/status of 404/.test(e));
const mn = await load();

before(async () => {
  scratch = makeScratch('mn_editor_timing_');
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

const M = (fn, arg) => page.evaluate(fn, arg);
const state = () => M(() => window.marionette.state());
const frames = async () => (await state()).keys.map((k) => k.frame);

// keys at 0, 15, 30 and 45, each a different pose of the right hand
async function fourKeys() {
  for (const [f, dx] of [
    [0, 0],
    [15, 30],
    [30, -30],
    [45, 20],
  ]) {
    await M((ff) => window.marionette.setFrame(ff), f);
    if (dx) await dragJoint(page, 'right hand', 'front', dx, -40, 8);
    await page.keyboard.press('i');
  }
  assert.deepEqual(await frames(), [0, 15, 30, 45]);
}

// reads an exported BVH: its frame count and the right hand's place at its last frame
function exported(path) {
  const fig = mn.figureFromBVH(readFileSync(join(scratch.project, path), 'utf8'));
  try {
    const n = fig.motion.nframes,
      hand = fig.jointNames.indexOf('right_hand');
    fig.setFrame(n - 1);
    return { n, hand: Array.from(fig.positions.subarray(3 * hand, 3 * hand + 3)) };
  } finally {
    fig.dispose();
  }
}
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const handAt = async (f) => {
  await M((ff) => window.marionette.setFrame(ff), f);
  return M(() => window.marionette.position('right hand'));
};

test("the ruler starts at the sequence's first frame", async () => {
  await fourKeys();
  const x0 = await M(() => window.marionette.timelineX(0));
  assert.ok(Math.abs(x0 - 8) < 0.5, `frame 0 at x ${x0} (the ruler's start, 8 px in)`);
});

test('a shrink by a half puts the keys on whole frames; the export reaches the last key', async () => {
  await M(() => window.marionette.selectRange(0, 30)); // [0, 31): shrunk to 15.5 frames
  await page.fill('#tl-factor', '0.5');
  await page.click('#tl-stretch');
  const f = await frames();
  assert.ok(f.every(Number.isInteger), f.join(', '));
  assert.deepEqual(f, [0, 8, 15, 30]);
  const last = await handAt(30);
  const out = exported(await M(() => window.marionette.exportSequence('bvh')));
  assert.equal(out.n, 31);
  assert.ok(dist(out.hand, last) < 1e-6, `the last frame is the last key (${dist(out.hand, last)} m)`);
  await page.keyboard.press('Control+z');
  assert.deepEqual(await frames(), [0, 15, 30, 45]);
});

test('with Fractions on the shrink keeps them; the export still reaches the last key', async () => {
  await page.click('#tl-fractions');
  await M(() => window.marionette.selectRange(0, 30));
  await page.click('#tl-stretch');
  assert.deepEqual(await frames(), [0, 7.5, 15, 29.5]);
  await waitSaved(page);
  const last = await handAt(29.5);
  const out = exported(await M(() => window.marionette.exportSequence('bvh')));
  assert.equal(out.n, 31, 'frames 0 to 30: the last one past 29.5 holds the last key');
  assert.ok(dist(out.hand, last) < 1e-6, `the last frame is the last key (${dist(out.hand, last)} m)`);
  await page.keyboard.press('Control+z');
  await page.click('#tl-fractions');
  assert.equal((await state()).settings.keepFractions, false);
});

test('interpolation for the sequence and for a joint, chosen in the Interpolation menu', async () => {
  await M(() => window.marionette.select('right elbow'));
  const k15 = await handAt(15),
    mid = await handAt(20);
  await page.click('#interp');
  await page.selectOption('#interp-rotation', 'constant');
  // stepped: frame 20 shows the key at 15
  assert.equal((await state()).frame, 20);
  assert.ok(dist(await M(() => window.marionette.position('right hand')), k15) < 1e-9);
  assert.ok(dist(mid, k15) > 1e-3, 'the in-between moved before');
  await page.click('#interp');
  await page.click('#interp');
  await page.selectOption('#interp-joint-rotation', 'kb');
  await waitSaved(page);
  const doc = JSON.parse(readFileSync(join(scratch.project, 'sequence.json'), 'utf8'));
  assert.deepEqual(doc.interpolation, { rotation: 'constant', joints: { 'right elbow': { rotation: 'kb' } } });
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  assert.equal((await state()).frame, 20);
  await M(() => window.marionette.setFrame(20));
  assert.ok(dist(await M(() => window.marionette.position('right hand')), mid) < 1e-9, 'undone: the in-between as before');
  assert.deepEqual(realErrors(), []);
});

test('a CMU take dropped on the page opens as its motion: keys within the tolerance of every frame', async () => {
  const file = join(root, 'data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh');
  const text = readFileSync(file, 'utf8');
  const reloaded = page.waitForEvent('load');
  await M((t) => {
    const dt = new DataTransfer();
    dt.items.add(new File([t], 'walk.bvh', { type: 'application/octet-stream' }));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, text);
  await page.fill('#motion-tol', '0.01');
  await page.click('#motion-open');
  await reloaded;
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await M(() => window.marionette.ready);
  const s = await state();
  assert.equal(await M(() => window.marionette.store.sequencePath), 'walk.sequence.json');
  const take = mn.figureFromBVH(text, { scale: 0.056444 });
  try {
    const n = take.motion.nframes;
    const f = s.keys.map((k) => k.frame);
    assert.equal(f[0], 0);
    assert.equal(f.at(-1), n - 1, "the last key is the take's last frame");
    assert.ok(f.length > 10 && f.length < n / 2, `${f.length} keys for ${n} frames`);
    const doc = JSON.parse(readFileSync(join(scratch.project, 'walk.sequence.json'), 'utf8'));
    assert.equal(doc.fps, Math.round(1 / take.motion.frameTime));
    assert.equal(doc.scale, 0.056444);
    assert.match(await page.textContent('#status-line'), new RegExp(`${n} frames at ${doc.fps} fps as ${f.length} keys within 0\\.01 m`));
    // the page's in-betweens (plain: no locks) follow the take within the tolerance
    let worst = 0;
    for (const k of [7, 55, 123, 200, 301]) {
      take.setFrame(k);
      const want = take.positions.slice();
      await M((kk) => window.marionette.setFrame(kk), k);
      const got = await M(() => Array.from(window.marionette.store.figure.positions));
      for (let j = 0; j < want.length; j += 3)
        worst = Math.max(worst, Math.hypot(got[j] - want[j], got[j + 1] - want[j + 1], got[j + 2] - want[j + 2]));
    }
    assert.ok(worst <= 0.01 + 1e-9, `an in-between ${worst} m from the take`);
  } finally {
    take.dispose();
  }
});
