// The screenshots of docs/editor.md's comfort and balance, graph editing and glTF motion:
// `node web/test/screenshots-comfort.mjs [OUTDIR]` (default docs/images/editor). The real
// server on a temporary project: a long pull of the stick figure's hand with both feet locked,
// comfort and balance off and on (the front view); the page at 1440x900 and 1024x640 with the
// graph open on a key's tangent handles and the Settings' toggles; the dialog a dropped
// CesiumMan.glb opens.
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { root, makeScratch, startServer, launchBrowser, openEditor, waitSaved, removeScratch, hideStatus } from './editor-harness.mjs';

const out = resolve(process.argv[2] ?? join(root, 'docs/images/editor'));
mkdirSync(out, { recursive: true });
const scratch = makeScratch('mn_editor_shots_');
let server, context;
const M = (page, fn, arg) => page.evaluate(fn, arg);

// the right hand pulled up and across, 60 mouse moves, the whole body moving (from the pelvis)
async function reach(page) {
  const p = await M(page, () => window.marionette.screen('right hand', 'front'));
  const k = await M(page, () => {
    const vp = window.marionette.viewport;
    return vp.rects().front.h / vp.orthoState.front.size;
  });
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 60; i++) await page.mouse.move(p.x - (0.55 * k * i) / 60, p.y - (0.45 * k * i) / 60);
  await page.mouse.up();
}

try {
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  const errors = [];
  const page = await openEditor(context, server.url, errors);
  await M(page, () => {
    const m = window.marionette;
    m.addLock('position', 'left foot');
    m.addLock('position', 'right foot');
    m.setSettings({ dragMode: 'named', dragBase: 'pelvis' });
  });
  await page.keyboard.press('1');
  await page.waitForTimeout(200);
  for (const on of [false, true]) {
    await M(page, (v) => window.marionette.setSettings({ comfort: v, balance: v }), on);
    await reach(page);
    await page.waitForTimeout(200);
    await page.locator('#views').screenshot({ path: join(out, `reach-${on ? 'comfort' : 'plain'}.png`) });
    if (!on) await page.keyboard.press('Control+z');
  }
  await page.keyboard.press('1');
  await M(page, () => window.marionette.setSettings({ dragMode: 'branch' }));
  // three keys of the right knee, the graph open on it, the middle key's tangents bent
  await M(page, () => {
    const m = window.marionette,
      fig = m.store.figure,
      a = fig.joints[fig.joint('right knee')].qadr;
    const base = Float64Array.from(fig.q);
    for (const [f, v] of [
      [0, 0.2],
      [15, 1.0],
      [30, 0.3],
    ]) {
      m.setFrame(f);
      const q = Float64Array.from(base);
      q[a] = v;
      m.store.setPose(q);
      m.insertKey();
    }
    m.select('right knee');
    m.graph('right knee');
  });
  let g = await M(page, () => window.marionette.graphPoints(1));
  await page.mouse.click(g.key.x, g.key.y);
  g = await M(page, () => window.marionette.graphPoints(1));
  await page.mouse.move(g.right.x, g.right.y);
  await page.mouse.down();
  await page.mouse.move(g.right.x + 10, g.right.y - 20, { steps: 5 });
  await page.mouse.up();
  await M(page, () => window.marionette.setFrame(22));
  await waitSaved(page);
  await hideStatus(page);
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'graph-edit.png') });
  const panel = await page.locator('#graph-panel').boundingBox();
  await page.screenshot({
    path: join(out, 'graph-handles.png'),
    clip: { x: panel.x, y: panel.y, width: Math.min(panel.width, 900), height: panel.height },
  });
  await page.setViewportSize({ width: 1024, height: 640 });
  await page.waitForTimeout(400);
  await M(page, () => {
    window.marionette.graph('right knee');
    document.getElementById('settings-panel').scrollIntoView();
  });
  await hideStatus(page);
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'editor-1024-comfort.png') });
  await page.setViewportSize({ width: 1440, height: 900 });
  // a glTF file with an animation dropped on the page: the dialog
  const bytes = [...readFileSync(join(root, 'data/skinned/CesiumMan.glb'))];
  await M(
    page,
    ([b, n]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(b)], n, { type: 'application/octet-stream' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [bytes, 'CesiumMan.glb'],
  );
  await page.waitForSelector('#motion-dialog');
  const dlg = await page.locator('#motion-dialog').boundingBox();
  await page.screenshot({
    path: join(out, 'gltf-motion-dialog.png'),
    clip: { x: dlg.x - 16, y: dlg.y - 16, width: dlg.width + 32, height: dlg.height + 32 },
  });
  await page.keyboard.press('Escape');
  const real = errors.filter((e) => !/status of 404/.test(e));
  if (real.length) throw new Error(real.join('\n'));
  console.log(`screenshots in ${out}`);
} finally {
  if (context) await context.close();
  if (server) await server.stop('SIGKILL');
  removeScratch(scratch);
}
