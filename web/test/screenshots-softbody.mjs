// The screenshots of docs/softbody-browser.md: `node web/test/screenshots-softbody.mjs
// [OUTDIR]` (default docs/images/softbody). Starts the real server on a temporary project and
// captures the soft-body page: CesiumMan with an arm dragged by the mouse, CesiumMan walking,
// the gingerbread shape with a hand dragged.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { root, makeScratch, startServer, launchBrowser, removeScratch } from './editor-harness.mjs';
import { softbodyURL } from './softbody-fixtures.mjs';

const out = resolve(process.argv[2] ?? join(root, 'docs/images/softbody'));
mkdirSync(out, { recursive: true });
const scratch = makeScratch('mn_softbody_shots_');
let server, context;
try {
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  const open = async (scene) => {
    await page.goto(softbodyURL(server.url, { scene, paused: 1 }));
    await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
    await page.evaluate(() => window.marionette.ready);
    await page.evaluate(() => window.marionette.step(90));
  };
  const drag = async (j, dx, dy, frames) => {
    const p = await page.evaluate((k) => window.marionette.screen(k), j);
    await page.mouse.move(p.x, p.y);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) {
      await page.mouse.move(p.x + (dx * i) / 10, p.y + (dy * i) / 10);
      await page.evaluate((n) => window.marionette.step(n), Math.ceil(frames / 10));
    }
  };
  const shot = async (name) => {
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(out, name) });
  };
  // CesiumMan: the arm's controller farthest to the side, pulled out and up
  await open('cesiumman');
  const s = await page.evaluate(() => window.marionette.state());
  let j = -1;
  s.controllers.forEach((c, k) => {
    if (!c.driven && (j < 0 || c.position[2] < s.controllers[j].position[2])) j = k;
  });
  await drag(j, -110, -150, 30);
  await shot('cesiumman-drag.png');
  await page.mouse.up();
  // walking
  await page.evaluate(() => {
    window.marionette.reset();
    window.marionette.walk(true);
    window.marionette.step(50);
  });
  await shot('cesiumman-walk.png');
  // the gingerbread shape: the right hand pulled up and out, the left foot pinned
  await open('gingerbread');
  await page.evaluate(() => {
    window.marionette.pin(5, true);
    window.marionette.select(4);
  });
  await drag(4, 120, -140, 20);
  await shot('gingerbread-drag.png');
  await page.mouse.up();
} finally {
  if (context) await context.close();
  if (server) await server.stop();
  removeScratch(scratch);
}
