// The screenshots of docs/editor.md: `node web/test/screenshots.mjs [OUTDIR]` (default
// docs/images/editor). Starts the real server on a temporary project, poses the stick
// figure, adds locks, and captures the whole page, each view maximised and the panels; the
// root dragged with the feet locked, the Interpolation menu, the page at 1024x640, and the
// picker of the joints at a CMU skeleton's hips.
import { mkdirSync, copyFileSync, writeFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  root,
  makeScratch,
  startServer,
  launchBrowser,
  openEditor,
  dragJoint,
  waitSaved,
  removeScratch,
  hideStatus,
} from './editor-harness.mjs';

const out = resolve(process.argv[2] ?? join(root, 'docs/images/editor'));
mkdirSync(out, { recursive: true });
const scratch = makeScratch('mn_editor_shots_');
let server, context;
try {
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  const errors = [];
  const page = await openEditor(context, server.url, errors);
  await page.evaluate(() => {
    const m = window.marionette;
    m.addLock('position', 'left foot');
    m.addLock('position', 'right foot');
    m.addLock('orientation-y', 'left foot');
    m.addLock('plane', 'left hand');
    m.setSettings({ dragMode: 'branch' });
  });
  // a natural pose: the right hand reaching out and up, the left forward a little
  await dragJoint(page, 'right hand', 'front', -45, -70, 25);
  await dragJoint(page, 'left hand', 'side', -25, -15, 15);
  await page.evaluate(() => window.marionette.select('right elbow'));
  await page.keyboard.press('f'); // the views frame the posed figure
  await waitSaved(page);
  await page.waitForTimeout(300);
  await hideStatus(page);
  await page.screenshot({ path: join(out, 'editor.png') });
  for (const [k, v] of [
    ['1', 'front'],
    ['2', 'side'],
    ['3', 'top'],
    ['4', 'perspective'],
  ]) {
    await page.keyboard.press(k);
    await page.waitForTimeout(200);
    await page.locator('#views').screenshot({ path: join(out, `view-${v}.png`) });
    await page.keyboard.press(k);
  }
  await page.locator('#right').screenshot({ path: join(out, 'panels.png') });
  await page.click('#lock-menu-button');
  await page.waitForTimeout(100);
  await page.screenshot({ path: join(out, 'lock-menu.png'), clip: { x: 0, y: 0, width: 900, height: 330 } });
  await page.keyboard.press('Escape');
  // the page at 1024x640: one toolbar row, the save state on screen
  await page.setViewportSize({ width: 1024, height: 640 });
  await page.waitForTimeout(400);
  await page.keyboard.press('f');
  await page.waitForTimeout(300);
  await hideStatus(page);
  await page.screenshot({ path: join(out, 'editor-1024.png') });
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.waitForTimeout(300);
  // the root pulled down with both feet locked: the body crouches over them (Fig. 6.4)
  await page.evaluate(() => {
    const m = window.marionette;
    m.poser.deleteLock('left foot orientation y');
    m.poser.deleteLock('left hand plane');
    m.store.setPose(m.store.figure.restQ);
  });
  await page.keyboard.press('f');
  const k = await page.evaluate(() => {
    const vp = window.marionette.viewport;
    return vp.rects().front.h / vp.orthoState.front.size;
  });
  await dragJoint(page, 'pelvis', 'front', 0, 0.2 * k, 30);
  await page.evaluate(() => window.marionette.select('pelvis'));
  await waitSaved(page);
  await hideStatus(page);
  await page.locator('#views').screenshot({ path: join(out, 'root-drag.png') });
  // the Interpolation menu, the right knee selected
  await page.evaluate(() => window.marionette.select('right knee'));
  await page.click('#interp');
  await page.waitForTimeout(100);
  const menu = await page.locator('#interp-menu').boundingBox();
  await page.screenshot({
    path: join(out, 'interpolation-menu.png'),
    clip: {
      x: Math.max(0, menu.x - 20),
      y: Math.max(0, menu.y - 50),
      width: Math.min(560, 1440 - Math.max(0, menu.x - 20)),
      height: menu.height + 70,
    },
  });
  await page.keyboard.press('Escape');
  // the dialog a dropped BVH take opens (cancelled with Escape)
  await page.evaluate(
    (t) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t], 'walk.bvh', { type: 'application/octet-stream' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    readFileSync(join(root, 'data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh'), 'utf8'),
  );
  const dlg = await page.locator('#motion-dialog').boundingBox();
  await page.screenshot({
    path: join(out, 'motion-dialog.png'),
    clip: { x: dlg.x - 16, y: dlg.y - 16, width: dlg.width + 32, height: dlg.height + 32 },
  });
  await page.keyboard.press('Escape');
  // a CMU skeleton: a click at the hips offers the four joints that start there
  const cmu = makeScratch('mn_editor_shots_cmu_');
  let s2;
  try {
    copyFileSync(join(root, 'data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh'), join(cmu.project, 'walk.bvh'));
    writeFileSync(
      join(cmu.project, 'walk.json'),
      JSON.stringify({ figure: 'walk.bvh', scale: 0.056444, fps: 30, keys: [{ frame: 0, pose: {} }] }),
    );
    writeFileSync(join(cmu.project, 'editor.json'), JSON.stringify({ sequence: 'walk.json', layout: 'front' }));
    s2 = await startServer(cmu.project, cmu);
    const p2 = await openEditor(context, s2.url, errors);
    await p2.keyboard.press('f');
    const hips = await p2.evaluate(() => window.marionette.screen('Hips', 'front'));
    await p2.mouse.click(hips.x, hips.y);
    await p2.waitForTimeout(200);
    await hideStatus(p2);
    await p2.screenshot({ path: join(out, 'picker.png'), clip: { x: hips.x - 260, y: hips.y - 180, width: 520, height: 330 } });
    await p2.close();
  } finally {
    if (s2) await s2.stop();
    removeScratch(cmu);
  }
  if (errors.filter((e) => !/status of 404/.test(e)).length) console.error(`page errors: ${errors.join('\n')}`);
  console.log(`screenshots in ${out}`);
} finally {
  if (context) await context.close();
  if (server) await server.stop();
  removeScratch(scratch);
}
