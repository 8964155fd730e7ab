// The screenshots of docs/editor.md: `node web/test/screenshots.mjs [OUTDIR]` (default
// docs/images/editor). Starts the real server on a temporary project, poses the stick
// figure, adds locks, and captures the whole page, each view maximised and the panels.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { root, makeScratch, startServer, launchBrowser, openEditor, dragJoint, waitSaved, removeScratch, hideStatus } from './editor-harness.mjs';

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
  for (const [k, v] of [['1', 'front'], ['2', 'side'], ['3', 'top'], ['4', 'perspective']]) {
    await page.keyboard.press(k);
    await page.waitForTimeout(200);
    await page.locator('#views').screenshot({ path: join(out, `view-${v}.png`) });
    await page.keyboard.press(k);
  }
  await page.locator('#right').screenshot({ path: join(out, 'panels.png') });
  await page.click('#lock-menu-button');
  await page.waitForTimeout(100);
  await page.screenshot({ path: join(out, 'lock-menu.png'), clip: { x: 0, y: 0, width: 900, height: 330 } });
  if (errors.length) console.error(`page errors: ${errors.join('\n')}`);
  console.log(`screenshots in ${out}`);
} finally {
  if (context) await context.close();
  if (server) await server.stop();
  removeScratch(scratch);
}
