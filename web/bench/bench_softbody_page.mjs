// The soft-body page's solver time per frame in headless Chromium (make bench-web-softbody):
// the real `marionette editor` serving softbody.html, CesiumMan at the page's default
// resolution. The solver time of a frame is the page's own measure: the drives (the walk's
// bone poses, a drag) and one step of the module (1/60 s, 5 substeps, the embedded surface
// included), without the drawing. Three runs: hanging from its pinned root with every
// other bone free (fitted every substep), walking (every bone driven by the walk), both
// stepped as the page's display loop steps them (one step a displayed frame, 240 frames);
// and the walk again in the live display loop (the frames the browser draws, 120 frames).
// Prints key=value lines (median and 90th percentile over the frames, in ms).
import { makeScratch, startServer, launchBrowser, removeScratch } from '../test/editor-harness.mjs';
import { softbodyURL } from '../test/softbody-fixtures.mjs';

function stats(a) {
  const s = [...a].sort((x, y) => x - y),
    q = (f) => s[Math.min(s.length - 1, Math.floor(f * s.length))];
  return { median: q(0.5), p90: q(0.9) };
}

const scratch = makeScratch('mn_softbody_bench_');
let server, context;
try {
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  await page.goto(softbodyURL(server.url, { scene: 'cesiumman', paused: 1 }));
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  const info = await page.evaluate(() => window.marionette.state());
  const line = (run, times) => {
    const s = stats(times);
    console.log(
      `bench=softbody_page scene=cesiumman run=${run} resolution=${info.resolution} nodes=${info.nodes} ` +
        `tets=${info.elements} surface=${info.surfaceVertices} bones=${info.controllers.length} substeps=5 ` +
        `frames=${times.length} solver_ms_median=${s.median.toFixed(3)} solver_ms_p90=${s.p90.toFixed(3)}`,
    );
  };
  // hanging: the root pinned, the others free
  await page.evaluate(() => window.marionette.step(40));
  let t = await page.evaluate(() => {
    window.marionette.step(240);
    return window.marionette.solverTimes().slice(-240);
  });
  line('hang', t);
  // walking, stepped
  await page.evaluate(() => {
    window.marionette.reset();
    window.marionette.walk(true);
    window.marionette.step(40);
  });
  t = await page.evaluate(() => {
    window.marionette.step(240);
    return window.marionette.solverTimes().slice(-240);
  });
  line('walk', t);
  // walking in the live display loop
  await page.evaluate(() => window.marionette.run(true));
  const f0 = await page.evaluate(() => window.marionette.state().frame);
  await page.waitForFunction((f) => window.marionette.state().frame >= f + 120, f0, { timeout: 120000, polling: 200 });
  t = await page.evaluate(() => window.marionette.solverTimes().slice(-120));
  line('walk_live', t);
} finally {
  if (context) await context.close();
  if (server) await server.stop();
  removeScratch(scratch);
}
