// The editor's screen from 1024x640 up (issue 22): the toolbar stays one row with every
// control on screen and the save state always visible, and the three orthographic views
// show the figure at one scale. The real `marionette editor` binary, Debian's Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { makeScratch, startServer, launchBrowser, openEditor, removeScratch } from './editor-harness.mjs';

let scratch, server;
const errors = [];

before(async () => {
  scratch = makeScratch('mn_editor_layout_');
  server = await startServer(scratch.project, scratch);
});

after(async () => {
  if (server) await server.stop('SIGKILL');
  removeScratch(scratch);
});

for (const [width, height] of [
  [1024, 640],
  [1152, 720],
  [1280, 800],
  [1440, 900],
]) {
  test(`at ${width}x${height} the toolbar is one row, every control and the save state on screen`, async () => {
    const context = await launchBrowser(scratch, { width, height });
    try {
      const page = await openEditor(context, server.url, errors);
      const r = await page.evaluate(() => {
        const box = (el) => {
          const b = el.getBoundingClientRect();
          return { l: b.left, r: b.right, t: b.top, b: b.bottom, w: b.width };
        };
        const bar = document.getElementById('toolbar');
        const controls = [...bar.querySelectorAll('button, select, input, #save-status')]
          .filter((el) => el.offsetParent !== null && !el.closest('[hidden]'))
          .map((el) => ({ id: el.id || el.textContent, ...box(el) }));
        return { bar: box(bar), controls, save: box(document.getElementById('save-status')) };
      });
      assert.ok(r.bar.b - r.bar.t < 50, `toolbar ${r.bar.b - r.bar.t} px high`);
      assert.ok(r.save.l >= 0 && r.save.r <= width && r.save.w > 30, `save state at ${r.save.l}..${r.save.r}`);
      for (const c of r.controls) {
        assert.ok(c.l >= 0 && c.r <= width, `${c.id} at ${c.l}..${c.r}`);
        assert.ok(c.t >= r.bar.t && c.b <= r.bar.b, `${c.id} inside the toolbar's row`);
      }
      // the controls do not overlap (nothing is squeezed under the save state)
      const sorted = r.controls.slice().sort((a, b) => a.l - b.l);
      for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i].l >= sorted[i - 1].r - 0.5, `${sorted[i - 1].id} / ${sorted[i].id}`);
      // with a named joint's chain (a second select) the save state stays on screen too
      const named = await page.evaluate(() => {
        window.marionette.setSettings({ dragMode: 'named', dragBase: 'pelvis' });
        const b = document.getElementById('save-status').getBoundingClientRect();
        const base = document.getElementById('drag-base');
        return { l: b.left, r: b.right, w: b.width, base: !base.hidden && base.offsetParent !== null };
      });
      assert.ok(named.base, "the named joint's select is shown");
      assert.ok(named.l >= 0 && named.r <= width && named.w > 30, `named mode: save state at ${named.l}..${named.r}`);
      await page.evaluate(() => window.marionette.setSettings({ dragMode: 'branch' }));
      // the Lock menu opens from its button with the mouse, on screen
      await page.evaluate(() => window.marionette.select('head'));
      await page.click('#lock-menu-button');
      const menu = await page.evaluate(() => {
        const b = document.getElementById('lock-menu').getBoundingClientRect();
        return { r: b.right, b: b.bottom };
      });
      assert.ok(menu.r <= width && menu.b <= height);
    } finally {
      await context.close();
    }
  });
}

test('the orthographic views show the figure at one scale (a metre is as long in each)', async () => {
  const context = await launchBrowser(scratch, { width: 1024, height: 640 });
  try {
    const page = await openEditor(context, server.url, errors);
    const px = await page.evaluate(() => {
      const m = window.marionette,
        out = {};
      // the distance on screen between the two hands (across the figure, in front and top)
      // and between the head and a foot (up the figure, in front and side)
      const d = (a, b, v) => {
        const p = m.screen(a, v),
          q = m.screen(b, v);
        return Math.hypot(p.x - q.x, p.y - q.y);
      };
      const w = (a, b) => {
        const p = m.position(a),
          q = m.position(b);
        return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
      };
      out.front = d('left hand', 'right hand', 'front') / w('left hand', 'right hand');
      out.top = d('left hand', 'right hand', 'top') / w('left hand', 'right hand');
      out.frontUp = d('head', 'left foot', 'front') / Math.abs(m.position('head')[1] - m.position('left foot')[1]);
      out.side = d('head', 'left foot', 'side') / Math.abs(m.position('head')[1] - m.position('left foot')[1]);
      return out;
    });
    assert.ok(Math.abs(px.top / px.front - 1) < 0.02, `top ${px.top} px/m, front ${px.front}`);
    assert.ok(Math.abs(px.side / px.frontUp - 1) < 0.05, `side ${px.side} px/m, front ${px.frontUp}`);
  } finally {
    await context.close();
  }
});

test('views face the figure on request: a figure turned to face +x shows its front in FRONT', async () => {
  const context = await launchBrowser(scratch, { width: 1440, height: 900 });
  try {
    const page = await openEditor(context, server.url, errors);
    // the stick figure turned a quarter about the vertical: it faces +x
    await page.evaluate(() => {
      const m = window.marionette,
        q = Float64Array.from(m.store.figure.q);
      q.set([Math.SQRT1_2, 0, Math.SQRT1_2, 0], 3);
      m.store.setPose(q);
      m.fitViews();
    });
    const spread = () =>
      page.evaluate(() => {
        const m = window.marionette,
          a = m.screen('left hand', 'front'),
          b = m.screen('right hand', 'front');
        const p = m.position('left hand'),
          q = m.position('right hand');
        const vp = m.viewport,
          k = vp.rects().front.h / vp.orthoState.front.size;
        return { px: Math.abs(a.x - b.x), want: Math.hypot(p[0] - q[0], p[2] - q[2]) * k, leftOnRight: a.x > b.x };
      });
    const before = await spread();
    assert.ok(before.px < 0.1 * before.want, `its profile: the hands ${before.px} px apart`);
    await page.click('#align-views');
    const after = await spread();
    assert.ok(Math.abs(after.px - after.want) < 2, `its front: the hands ${after.px} px apart (${after.want})`);
    assert.ok(after.leftOnRight, 'facing the viewer: its left hand on the right of the screen');
    // a drag in the turned front view moves the hand across the screen with the mouse
    const h = await page.evaluate(() => window.marionette.screen('right hand', 'front'));
    await page.mouse.move(h.x, h.y);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(h.x - 3 * i, h.y - 4 * i);
    await page.mouse.up();
    const h2 = await page.evaluate(() => window.marionette.screen('right hand', 'front'));
    assert.ok(Math.hypot(h2.x - (h.x - 30), h2.y - (h.y - 40)) < 10, `the hand followed the mouse (${h2.x - h.x}, ${h2.y - h.y})`);
    assert.equal(JSON.parse(JSON.stringify((await page.evaluate(() => window.marionette.state())).settings.alignViews)), true);
    await page.click('#align-views');
  } finally {
    await context.close();
  }
});
