// The contact tracks in the editor end to end: the real `marionette editor` on a temporary
// project, the page in Debian's Chromium (headless). The CMU walk dropped on the page and
// opened with its motion gets a contact track per foot from the module (Figure.footContacts,
// the detector of docs/retarget.md); the timeline draws a row per foot, the heel's frames in
// its upper half and the toe's in its lower half; a click on a row turns a frame's contact on
// or off, saved to the sequence document (which the command line reads back) and undone with
// Ctrl+Z.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { root, makeScratch, startServer, launchBrowser, openEditor, waitSaved, removeScratch } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
const realErrors = () => errors.filter((e) => !/status of 404/.test(e));

before(async () => {
  scratch = makeScratch('mn_editor_contacts_');
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
const onDisk = () => JSON.parse(readFileSync(join(scratch.project, 'walk.sequence.json'), 'utf8'));
// the colour of the timeline's canvas at (x, y) CSS pixels
const pixel = (x, y) =>
  M(
    ([px, py]) => {
      const c = document.getElementById('tl-canvas'),
        d = c.getContext('2d').getImageData(Math.round(px * devicePixelRatio), Math.round(py * devicePixelRatio), 1, 1).data;
      return [d[0], d[1], d[2]];
    },
    [x, y],
  );
const isHeel = ([r, g, b]) => b > 200 && g > 150 && r < 120; // #38bdf8
const isToe = ([r, g, b]) => b > 200 && r > 130 && g < 160; // #a78bfa

test('a take dropped with its motion gets a contact track per foot, drawn as a row each', async () => {
  const text = readFileSync(join(root, 'data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh'), 'utf8');
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
  const rows = await M(() => window.marionette.contactRows());
  assert.deepEqual(
    rows.map((r) => r.joint),
    ['LeftFoot', 'RightFoot'],
  );
  // the walk's stances: three of the left foot, the heel down before the toe leaves
  assert.equal(rows[0].heel.length, 3);
  assert.ok(rows[0].toe.length >= 3);
  assert.deepEqual(
    onDisk().contacts.map((t) => t.joint),
    ['LeftFoot', 'RightFoot'],
  );
  // what the page saved is what the command line finds on the same take
  const imp = join(scratch.tmp, 'imp.json');
  execFileSync(process.env.MN_CLI ?? join(root, 'build/marionette'), [
    'anim',
    'import',
    join(root, 'data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh'),
    '--out',
    imp,
  ]);
  assert.deepEqual(JSON.parse(readFileSync(imp, 'utf8')).contacts, onDisk().contacts);
  // the rows: the heel's frames in the upper half, the toe's in the lower, nothing between
  await M(() => window.marionette.setFrame(0));
  const [h0, h1] = rows[0].heel[1],
    mid = (h0 + h1) / 2;
  const x = await M((f) => window.marionette.timelineX(f), mid);
  assert.ok(isHeel(await pixel(x, rows[0].y - 3)), 'a heel frame is drawn in the upper half');
  assert.ok(isToe(await pixel(x, rows[0].y + 2)), 'the toe is down too in mid-stance');
  const swing = (rows[0].heel[0][1] + rows[0].heel[1][0]) / 2;
  const xs = await M((f) => window.marionette.timelineX(f), swing);
  assert.ok(!isHeel(await pixel(xs, rows[0].y - 3)) && !isToe(await pixel(xs, rows[0].y + 2)), 'nothing in mid-swing');
  assert.deepEqual(realErrors(), []);
});

test('a click on a row turns a frame of contact on and off, saved and undone', async () => {
  const rows = await M(() => window.marionette.contactRows());
  const box = await page.locator('#tl-canvas').boundingBox();
  const swing = Math.round((rows[0].heel[0][1] + rows[0].heel[1][0]) / 2);
  const x = await M((f) => window.marionette.timelineX(f + 0.5), swing); // the middle of the frame's cell
  const before = rows[0].heel;
  // the upper half of the left foot's row: the heel is down at that frame from now on
  await page.mouse.click(box.x + x, box.y + rows[0].y - 3);
  let now = await M(() => window.marionette.contactRows());
  assert.deepEqual(now[0].heel, [before[0], [swing, swing], ...before.slice(1)]);
  assert.deepEqual(now[0].toe, rows[0].toe, 'the toe is left alone');
  assert.deepEqual(now[1], rows[1], 'the other foot too');
  assert.ok(isHeel(await pixel(x, rows[0].y - 3)));
  await waitSaved(page);
  assert.deepEqual(onDisk().contacts[0].heel, now[0].heel);
  // the saved document reads back on the command line
  const info = execFileSync(
    process.env.MN_CLI ?? join(root, 'build/marionette'),
    ['anim', 'info', join(scratch.project, 'walk.sequence.json')],
    { encoding: 'utf8' },
  );
  assert.match(info, /keys: /);
  // the lower half: the toe at the first frame of a heel contact goes off; a second click on
  // the same place puts it back
  const f = rows[0].toe[1][0];
  const xt = await M((fr) => window.marionette.timelineX(fr + 0.5), f);
  await page.mouse.click(box.x + xt, box.y + rows[0].y + 3);
  now = await M(() => window.marionette.contactRows());
  assert.equal(now[0].toe[1][0], f + 1);
  await page.mouse.click(box.x + xt, box.y + rows[0].y + 3);
  now = await M(() => window.marionette.contactRows());
  assert.deepEqual(now[0].toe, rows[0].toe);
  // undo, three times: as it was
  await page.locator('#tl-canvas').click({ position: { x: 5, y: 5 } });
  for (let i = 0; i < 3; i++) await page.keyboard.press('Control+z');
  now = await M(() => window.marionette.contactRows());
  assert.deepEqual(now[0].heel, before);
  await waitSaved(page);
  assert.deepEqual(onDisk().contacts[0].heel, before);
  assert.deepEqual(realErrors(), []);
});
