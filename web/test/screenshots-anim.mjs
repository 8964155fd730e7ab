// The animation screenshots of docs/editor.md: `node web/test/screenshots-anim.mjs [OUTDIR]`
// (default docs/images/editor-anim). Starts the real server on a temporary project, makes a
// three-key sequence of the stick figure with both feet locked (a crouch at frame 15, a reach
// at 30), and captures the page at an in-between with onion skin and the graph, the timeline
// with a range selected, the Animate and Sequences menus, and the front view at an in-between
// with and without the locks kept (Welman Fig. 6.5).
import { mkdirSync } from 'node:fs';
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

const out = resolve(process.argv[2] ?? join(root, 'docs/images/editor-anim'));
mkdirSync(out, { recursive: true });
const scratch = makeScratch('mn_editor_anim_shots_');
let server, context;
try {
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  const errors = [];
  let page = await openEditor(context, server.url, errors);
  const M = (fn, arg) => page.evaluate(fn, arg);
  await M(() => {
    const m = window.marionette;
    m.addLock('position', 'left foot');
    m.addLock('position', 'right foot');
    m.insertKey();
    m.setSettings({ dragMode: 'named', dragBase: 'pelvis' });
    m.setFrame(15);
  });
  await dragJoint(page, 'head', 'front', 0, 80, 25);
  await M(() => window.marionette.setSettings({ dragMode: 'branch' }));
  await dragJoint(page, 'right hand', 'front', -40, -100, 20);
  await page.keyboard.press('i');
  await M(() => window.marionette.setFrame(30));
  await dragJoint(page, 'left hand', 'front', 50, -80, 20);
  await dragJoint(page, 'right hand', 'front', -20, -60, 20);
  await page.keyboard.press('i');
  // the views frame the widest pose (the reach of frame 30), F
  await page.keyboard.press('f');
  // a second sequence for the flipbook menu: a copy of this one, shrunk
  await waitSaved(page);
  await M(async () => {
    const doc = structuredClone(window.marionette.store.doc);
    doc.keys = doc.keys.map((k) => ({ ...k, frame: k.frame / 3 }));
    await fetch('/api/file?path=quick.json', { method: 'PUT', headers: { 'If-None-Match': '*' }, body: JSON.stringify(doc) });
  });
  // the page at an in-between: onion skin, the graph of the right knee
  await M(() => {
    const m = window.marionette;
    m.keepConstraints(true);
    m.setFrame(9);
    m.onion(true);
    m.select('right knee');
    m.graph();
  });
  await page.waitForTimeout(400);
  await hideStatus(page);
  await page.screenshot({ path: join(out, 'editor-anim.png') });
  // the timeline with a range selected (Shift-drag)
  const box = await page.locator('#tl-canvas').boundingBox();
  const xa = await M(() => window.marionette.timelineX(12)),
    xb = await M(() => window.marionette.timelineX(33));
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + xa, box.y + 40);
  await page.mouse.down();
  await page.mouse.move(box.x + xb, box.y + 40, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.waitForTimeout(200);
  await page.locator('#timeline').screenshot({ path: join(out, 'timeline.png') });
  await page.locator('#graph-panel').screenshot({ path: join(out, 'graph.png') });
  await page.locator('#toolbar').screenshot({ path: join(out, 'transport.png') });
  // the Animate menu
  await page.click('#animate');
  await page.waitForTimeout(200);
  const vp = page.viewportSize();
  await page.screenshot({ path: join(out, 'animate-menu.png'), clip: { x: vp.width - 520, y: vp.height - 520, width: 520, height: 520 } });
  await page.click('#animate');
  // the Sequences menu (flipbooks)
  await page.click('#sequences');
  await page.waitForFunction(
    () => window.marionette.flipbooks().length === 2 && window.marionette.flipbooks().every((b) => b.shown !== null),
  );
  await page.waitForTimeout(900);
  await page.screenshot({
    path: join(out, 'sequences-menu.png'),
    clip: { x: vp.width - 520, y: vp.height - 420, width: 520, height: 420 },
  });
  await page.click('#sequences');
  // Fig. 6.5: the side view at an in-between, the locks kept and not
  await M(() => {
    const m = window.marionette;
    m.onion(false);
    m.select(null);
  });
  await page.keyboard.press('1');
  // the in-between where the plain feet leave their locks most
  const worst = await M(() => {
    const m = window.marionette,
      at0 = m.position('left foot');
    m.keepConstraints(false);
    let best = [0, 0];
    for (let f = 1; f < 15; f++) {
      m.setFrame(f);
      const p = m.position('left foot'),
        d = Math.hypot(p[0] - at0[0], p[1] - at0[1], p[2] - at0[2]);
      if (d > best[1]) best = [f, d];
    }
    return best;
  });
  console.log(`plain in-betweens: the left foot ${worst[1].toFixed(4)} m off its lock at frame ${worst[0]}`);
  for (const [keep, name] of [
    [false, 'inbetween-plain.png'],
    [true, 'inbetween-locked.png'],
  ]) {
    await M(
      ([k, f]) => {
        const m = window.marionette;
        m.keepConstraints(k);
        m.setFrame(0);
        for (let i = 1; i <= f; i++) m.setFrame(i);
      },
      [keep, worst[0]],
    );
    await page.waitForTimeout(300);
    await page.locator('#views').screenshot({ path: join(out, name) });
  }
  await page.keyboard.press('1');
  await M(() => window.marionette.keepConstraints(true));
  if (errors.filter((e) => !/status of 404/.test(e)).length) console.error(`page errors: ${errors.join('\n')}`);
  void page;
  console.log(`screenshots in ${out}`);
} finally {
  if (context) await context.close();
  if (server) await server.stop();
  removeScratch(scratch);
}
