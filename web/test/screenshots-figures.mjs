// The screenshots of docs/editor.md's several figures, Make root and objects:
// `node web/test/screenshots-figures.mjs [OUTDIR]` (default docs/images/editor). The real
// server on temporary projects: the two stick figures of
// docs/examples/holding_hands_sequence.json (the page, and the side view after ann's pelvis is
// pulled down with every lock held); the stick figure hung from its left hand by Make root,
// its body swung about the hand by the hand's rotate ring; a two-link arm whose links carry OBJ boxes, posed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  root,
  makeScratch,
  startServer,
  launchBrowser,
  openEditor,
  waitSaved,
  removeScratch,
  hideStatus,
  dragJoint,
} from './editor-harness.mjs';

const out = resolve(process.argv[2] ?? join(root, 'docs/images/editor'));
mkdirSync(out, { recursive: true });
const M = (page, fn, arg) => page.evaluate(fn, arg);

// a box along a link's x axis from 0 to len, 2 h across (OBJ, in the joint's frame)
function box(len, h) {
  const v = [];
  for (const x of [0, len]) for (const y of [-h, h]) for (const z of [-h, h]) v.push(`v ${x} ${y} ${z}`);
  const f = ['1 3 4 2', '5 6 8 7', '1 2 6 5', '3 7 8 4', '1 5 7 3', '2 4 8 6'].map((s) => `f ${s}`);
  return [...v, ...f].join('\n') + '\n';
}

async function withProject(setup, shoot) {
  const scratch = makeScratch('mn_editor_shots_');
  let server, context;
  try {
    setup(scratch.project);
    server = await startServer(scratch.project, scratch);
    context = await launchBrowser(scratch);
    const errors = [];
    const page = await openEditor(context, server.url, errors);
    await shoot(page);
    if (errors.some((e) => !/status of 404/.test(e))) console.error(errors.join('\n'));
  } finally {
    if (context) await context.close();
    if (server) await server.stop('SIGKILL');
    removeScratch(scratch);
  }
}

// several figures: the page, then ann's pelvis pulled down (side view)
await withProject(
  (p) => {
    writeFileSync(join(p, 'hands.json'), readFileSync(join(root, 'docs/examples/holding_hands_sequence.json')));
    writeFileSync(join(p, 'editor.json'), JSON.stringify({ sequence: 'hands.json' }));
  },
  async (page) => {
    await M(page, () => {
      window.marionette.solve();
      window.marionette.select('bob/right hand');
    });
    await hideStatus(page);
    await page.screenshot({ path: join(out, 'figures.png') });
    await page.keyboard.press('2');
    await page.waitForTimeout(200);
    const p = await M(page, () => window.marionette.screen('ann/pelvis', 'side'));
    await page.mouse.move(p.x, p.y);
    await page.mouse.down();
    for (let i = 1; i <= 30; i++) await page.mouse.move(p.x - i, p.y + 2.2 * i);
    await page.mouse.up();
    await waitSaved(page);
    await page.waitForTimeout(200);
    await page.locator('#views').screenshot({ path: join(out, 'figures-side.png') });
    await page.keyboard.press('2');
    // the Lock menu's join of two selected parts
    await M(page, () => {
      const s = window.marionette.store;
      s.selectJoints(
        [s.figure.jointNames.indexOf('ann/head'), s.figure.jointNames.indexOf('bob/head')],
        s.figure.jointNames.indexOf('bob/head'),
      );
    });
    await page.click('#lock-menu-button');
    await page.waitForTimeout(150);
    const r = await M(page, () => {
      const b = document.getElementById('lock-menu').getBoundingClientRect();
      return { x: b.left - 10, y: b.top - 40, width: b.width + 20, height: b.height + 50 };
    });
    await page.screenshot({ path: join(out, 'lock-menu-join.png'), clip: r });
  },
);

// Make root: the stick figure hangs from its left hand, the body swung about it
await withProject(
  () => {},
  async (page) => {
    // the left hand raised above the head (a hand on a bar), then made the root
    await M(page, () => window.marionette.setSettings({ balanceOverlay: false }));
    await page.keyboard.press('1');
    await page.waitForTimeout(200);
    const k = await M(page, () => {
      const vp = window.marionette.viewport;
      return vp.rects().front.h / vp.orthoState.front.size;
    });
    // straight up above the shoulder (the arm's length)
    const { hand, shoulder, len } = await M(page, () => {
      const m = window.marionette,
        a = m.position('left arm'),
        b = m.position('left hand');
      return {
        hand: m.screen('left hand', 'front'),
        shoulder: m.screen('left arm', 'front'),
        len: Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]),
      };
    });
    await dragJoint(page, 'left hand', 'front', shoulder.x - hand.x, shoulder.y - 0.97 * len * k - hand.y, 40);
    await waitSaved(page);
    await page.keyboard.press('1');
    await M(page, () => window.marionette.select('left hand'));
    await Promise.all([page.waitForEvent('load'), page.click('#make-root')]);
    await page.waitForFunction(() => window.marionette?.state, null, { timeout: 30000 });
    await M(page, () => window.marionette.ready);
    await M(page, () => {
      window.marionette.setSettings({ dragMode: 'named', dragBase: 'left arm', layout: 'quad' });
      window.marionette.viewport.setLayout('quad');
      window.marionette.select('left hand');
    });
    await waitSaved(page);
    await hideStatus(page);
    await page.screenshot({ path: join(out, 'make-root-page.png') });
    await page.keyboard.press('1');
    await page.waitForTimeout(200);
    // the rotate ring of the hand, swept a quarter of a radian: the body swings about it
    await M(page, () => {
      const m = window.marionette,
        j = m.store.figure.jointNames.indexOf('left hand');
      m.poser.beginRotate(j, 'front');
      for (let i = 1; i <= 10; i++) m.poser.rotate(-0.05 * i);
      m.poser.end();
    });
    await waitSaved(page);
    await hideStatus(page);
    await page.locator('#views').screenshot({ path: join(out, 'make-root.png') });
  },
);

// objects: a two-link arm, an OBJ box on each link
await withProject(
  (p) => {
    writeFileSync(
      join(p, 'arm.skel'),
      'define skeleton "arm"\n  joint "base"\n  joint "upper"\n  joint "lower"\n  joint "tip"\nend skeleton\n' +
        'define joint "upper"\n  object "upper.obj"\n  offset 0 0.3 0\n  hinge z -180 180\nend joint\n' +
        'define joint "lower"\n  object "lower.obj"\n  offset 0.5 0 0\n  hinge z -180 180\nend joint\n' +
        'define joint "tip"\n  offset 0.4 0 0\nend joint\n',
    );
    writeFileSync(join(p, 'upper.obj'), box(0.5, 0.05));
    writeFileSync(join(p, 'lower.obj'), box(0.4, 0.035));
    writeFileSync(
      join(p, 'arm.json'),
      JSON.stringify({ figure: 'arm.skel', fps: 30, keys: [{ frame: 0, pose: { upper: 0.7, lower: 0.9 } }] }),
    );
    writeFileSync(join(p, 'editor.json'), JSON.stringify({ sequence: 'arm.json' }));
  },
  async (page) => {
    await M(page, () => window.marionette.setSettings({ balanceOverlay: false }));
    await M(page, () => window.marionette.objects());
    await M(page, () => window.marionette.select('lower'));
    await hideStatus(page);
    await page.locator('#views').screenshot({ path: join(out, 'objects.png') });
  },
);
