// Direct manipulation in the editor with the mouse (issue 22): the root dragged with both feet
// locked (the body moves over them, the knees bend), Escape and a right-click cancelling a
// drag, Escape closing the Lock menu, and picking on a motion-capture skeleton (the parent
// before a child at the same place, the joints sharing a place listed by name). The real
// `marionette editor` binary on temporary projects, the page in Debian's Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, makeScratch, startServer, launchBrowser, openEditor, removeScratch } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
const realErrors = () => errors.filter((e) => !/status of 404/.test(e));

before(async () => {
  scratch = makeScratch();
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

const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const state = () => page.evaluate(() => window.marionette.state());
const pos = (j) => page.evaluate((jj) => window.marionette.position(jj), j);
const screen = (j, v = 'front') => page.evaluate(([jj, vv]) => window.marionette.screen(jj, vv), [j, v]);
// pixels per metre of an orthographic view
const pxPerM = (v = 'front') =>
  page.evaluate((vv) => {
    const vp = window.marionette.viewport;
    return vp.rects()[vv].h / vp.orthoState[vv].size;
  }, v);
const rest = () => page.evaluate(() => window.marionette.store.setPose(window.marionette.store.figure.restQ));

test('the root dragged with no lock moves the whole figure with the mouse', async () => {
  await rest();
  const p = await screen('pelvis'),
    k = await pxPerM();
  const a = await pos('pelvis'),
    hand = await pos('right hand'),
    q0 = (await state()).pose;
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(p.x + (0.1 * k * i) / 10, p.y);
  await page.mouse.up();
  const b = await pos('pelvis'),
    hand2 = await pos('right hand');
  assert.ok(Math.abs(b[0] - a[0] - 0.1) < 2e-3, `the pelvis moved ${b[0] - a[0]} m (0.1 m asked)`);
  assert.ok(Math.abs(hand2[0] - hand[0] - 0.1) < 2e-3, 'the hand went with it');
  // only the root moved: every other joint variable as it was
  const q1 = (await state()).pose;
  for (const n of Object.keys(q0)) if (n !== 'pelvis') assert.deepEqual(q1[n], q0[n], n);
  await page.keyboard.press('Control+z');
  assert.ok(dist(await pos('pelvis'), a) < 1e-12, 'one undo step');
});

test('the root dragged down 0.15 m with both feet locked: the feet stay, the knees bend', async () => {
  await rest();
  await page.evaluate(() => {
    window.marionette.addLock('position', 'left foot');
    window.marionette.addLock('position', 'right foot');
    window.marionette.setSettings({ dragMode: 'branch', csolver: 'lagrange', iterations: 20 });
  });
  const lf = await pos('left foot'),
    rf = await pos('right foot'),
    a = await pos('pelvis');
  const p = await screen('pelvis'),
    k = await pxPerM();
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 30; i++) await page.mouse.move(p.x, p.y + (0.15 * k * i) / 30);
  await page.mouse.up();
  const b = await pos('pelvis'),
    s = await state();
  assert.ok(dist(await pos('left foot'), lf) < 1e-4, `left foot moved ${dist(await pos('left foot'), lf)}`);
  assert.ok(dist(await pos('right foot'), rf) < 1e-4, `right foot moved ${dist(await pos('right foot'), rf)}`);
  assert.ok(a[1] - b[1] > 0.12, `the pelvis went down ${a[1] - b[1]} m`);
  for (const knee of ['left knee', 'right knee']) assert.ok(Math.abs(s.pose[knee]) > 0.3, `${knee} ${s.pose[knee]} rad`);
});

test('Escape during a drag puts the pose back; nothing is recorded', async () => {
  const before = (await state()).pose;
  const undoLabel = await page.evaluate(() => window.marionette.store.undoLabel());
  const p = await screen('right hand');
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(p.x + 6 * i, p.y - 8 * i);
  assert.notDeepEqual((await state()).pose, before, 'the drag moved the figure');
  await page.keyboard.press('Escape');
  assert.deepEqual((await state()).pose, before);
  // the rest of the drag does nothing, the release records nothing
  await page.mouse.move(p.x + 90, p.y - 90);
  await page.mouse.up();
  assert.deepEqual((await state()).pose, before);
  assert.equal(await page.evaluate(() => window.marionette.store.undoLabel()), undoLabel);
});

test('a right-click during a drag puts the pose back', async () => {
  const before = (await state()).pose;
  const p = await screen('left hand');
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(p.x - 6 * i, p.y - 8 * i);
  assert.notDeepEqual((await state()).pose, before);
  await page.mouse.down({ button: 'right' });
  assert.deepEqual((await state()).pose, before);
  await page.mouse.up({ button: 'right' });
  await page.mouse.move(p.x - 90, p.y);
  await page.mouse.up();
  assert.deepEqual((await state()).pose, before);
});

test('Escape during a lock marker drag puts the target back', async () => {
  const c0 = (await state()).constraints.find((c) => c.name === 'left foot position');
  const m = await page.evaluate(() => {
    window.marionette.selectLock('left foot position');
    return window.marionette.lockScreen('left foot position', 'front');
  });
  const before = (await state()).pose;
  await page.mouse.move(m.x, m.y);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(m.x + 4 * i, m.y);
  assert.notDeepEqual((await state()).constraints.find((c) => c.name === 'left foot position').target, c0.target);
  await page.keyboard.press('Escape');
  await page.mouse.up();
  assert.deepEqual((await state()).constraints.find((c) => c.name === 'left foot position').target, c0.target);
  assert.deepEqual((await state()).pose, before);
});

test('Escape closes the Lock menu', async () => {
  await page.evaluate(() => window.marionette.select('head'));
  await page.click('#lock-menu-button');
  assert.ok(await page.isVisible('#lock-menu'));
  await page.keyboard.press('Escape');
  assert.ok(!(await page.isVisible('#lock-menu')));
  assert.deepEqual(realErrors(), []);
});

test('picking on the CMU skeleton: the hand, not its thumb; the hips place lists its four joints', async () => {
  const dir = makeScratch('mn_editor_pick_');
  let srv, pg;
  try {
    copyFileSync(join(root, 'data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh'), join(dir.project, 'walk.bvh'));
    writeFileSync(
      join(dir.project, 'walk.json'),
      JSON.stringify({ figure: 'walk.bvh', scale: 0.056444, fps: 30, keys: [{ frame: 0, pose: {} }] }),
    );
    writeFileSync(join(dir.project, 'editor.json'), JSON.stringify({ sequence: 'walk.json' }));
    srv = await startServer(dir.project, dir);
    pg = await openEditor(context, srv.url, errors);
    const names = await pg.evaluate(() => window.marionette.store.figure.jointNames);
    assert.ok(names.includes('LThumb') && names.includes('LHipJoint'));
    // LThumb and LeftFingerBase start at the hand's origin: a click there selects the hand
    const h = await pg.evaluate(() => window.marionette.screen('LeftHand', 'front'));
    await pg.mouse.click(h.x, h.y);
    assert.equal((await pg.evaluate(() => window.marionette.state())).selection, 'LeftHand');
    assert.deepEqual(await pg.$$eval('#pick-menu button', (bs) => bs.map((b) => b.textContent)), ['LeftHand', 'LeftFingerBase', 'LThumb']);
    // the joint list has a row per joint at the hips, each by its own name
    const rows = await pg.$$eval('#joint-list li', (ls) => ls.map((l) => l.textContent));
    for (const n of ['Hips', 'LHipJoint', 'RHipJoint', 'LowerBack']) assert.ok(rows.includes(n), n);
    // a click at the hips selects the root and offers the four; the picker chooses another
    const p = await pg.evaluate(() => window.marionette.screen('Hips', 'front'));
    await pg.mouse.click(p.x, p.y);
    assert.equal((await pg.evaluate(() => window.marionette.state())).selection, 'Hips');
    assert.ok(await pg.isVisible('#pick-menu'));
    const listed = await pg.$$eval('#pick-menu button', (bs) => bs.map((b) => b.textContent));
    assert.deepEqual(listed.slice().sort(), ['Hips', 'LHipJoint', 'LowerBack', 'RHipJoint']);
    assert.equal(listed[0], 'Hips');
    await pg.click('#pick-menu button[data-joint=LowerBack]');
    assert.equal((await pg.evaluate(() => window.marionette.state())).selection, 'LowerBack');
    assert.ok(!(await pg.isVisible('#pick-menu')));
    // the hips' place dragged is the root's: the whole skeleton moves
    const a = await pg.evaluate(() => window.marionette.position('LeftHand'));
    await pg.mouse.move(p.x, p.y);
    await pg.mouse.down();
    for (let i = 1; i <= 8; i++) await pg.mouse.move(p.x + 5 * i, p.y);
    await pg.mouse.up();
    const b = await pg.evaluate(() => window.marionette.position('LeftHand'));
    assert.ok(b[0] - a[0] > 0.02, `the hand moved ${b[0] - a[0]} m with the hips`);
  } finally {
    if (pg) await pg.close();
    if (srv) await srv.stop('SIGKILL');
    removeScratch(dir);
  }
});

test('auto-key: on, a drag at a frame without a key makes one there (one undo step); off, it does not', async () => {
  await page.click('#auto-key');
  assert.equal((await state()).settings.autoKey, true);
  assert.ok(await page.evaluate(() => document.getElementById('auto-key').classList.contains('on')));
  await page.evaluate(() => window.marionette.setFrame(10));
  const p = await screen('right hand');
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(p.x + 4 * i, p.y - 5 * i);
  await page.mouse.up();
  let s = await state();
  assert.deepEqual(
    s.keys.map((k) => k.frame),
    [0, 10],
  );
  assert.deepEqual(s.keys[1].pose, JSON.parse(JSON.stringify(s.pose)));
  await page.keyboard.press('Control+z');
  assert.deepEqual(
    (await state()).keys.map((k) => k.frame),
    [0],
  );
  await page.click('#auto-key');
  await page.evaluate(() => window.marionette.setFrame(12));
  const p2 = await screen('right hand');
  await page.mouse.move(p2.x, p2.y);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(p2.x + 4 * i, p2.y - 5 * i);
  await page.mouse.up();
  s = await state();
  assert.deepEqual(
    s.keys.map((k) => k.frame),
    [0],
  );
  assert.equal(s.settings.autoKey, false);
  await page.evaluate(() => window.marionette.setFrame(0));
});

test('the centre of mass and the support polygon: green over the feet, red when the root is pulled past them', async () => {
  await page.evaluate(() => {
    window.marionette.store.setPose(window.marionette.store.figure.restQ);
    window.marionette.solve();
  });
  assert.ok(await page.isChecked('#balance-overlay'));
  let b = await page.evaluate(() => window.marionette.viewport.balance);
  assert.ok(b && b.inside && b.polygon.length >= 3, JSON.stringify(b));
  // the module's centre of mass, from a system of its own
  const com = await page.evaluate(() => {
    const m = window.marionette,
      sys = m.store.m.createConstraintSystem([m.store.figure]);
    const c = sys.handleValue(sys.addHandle({ type: 'com', joint: -1 })).position;
    sys.dispose();
    return c;
  });
  assert.ok(dist(b.com, com) < 1e-12);
  // the pelvis pulled 0.3 m sideways over the locked feet, balance off (comfort and balance:
  // editor-comfort.test.mjs): the centre of mass leaves them
  await page.evaluate(() => window.marionette.setSettings({ balance: false }));
  const p = await screen('pelvis'),
    k = await pxPerM();
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 20; i++) await page.mouse.move(p.x + (0.3 * k * i) / 20, p.y);
  await page.mouse.up();
  b = await page.evaluate(() => window.marionette.viewport.balance);
  assert.equal(b.inside, false);
  await page.keyboard.press('Control+z');
  await page.evaluate(() => window.marionette.setSettings({ balance: true }));
  assert.equal(await page.evaluate(() => window.marionette.viewport.balance.inside), true);
  // off: no overlay
  await page.click('#balance-overlay');
  assert.equal(await page.evaluate(() => window.marionette.viewport.balance), null);
  assert.equal(await page.evaluate(() => window.marionette.viewport.balanceGroup.children.length), 0);
  await page.click('#balance-overlay');
  assert.deepEqual(realErrors(), []);
});

test('Shift+click selects several joints, dragged together; Ctrl+drag selects by a box', async () => {
  await page.evaluate(() => {
    const m = window.marionette;
    m.store.apply('clear locks', (d) => {
      d.constraints = [];
      d.handles = [];
    });
    m.store.setPose(m.store.figure.restQ);
    m.setSettings({ dragMode: 'branch', locks: {} });
  });
  const l = await screen('left hand'),
    r = await screen('right hand');
  await page.mouse.click(r.x, r.y);
  await page.keyboard.down('Shift');
  await page.mouse.click(l.x, l.y);
  await page.keyboard.up('Shift');
  assert.deepEqual((await state()).selected.sort(), ['left hand', 'right hand']);
  const a = { l: await pos('left hand'), r: await pos('right hand') };
  const k = await pxPerM();
  // the left hand dragged 0.1 m up: the right goes up with it
  await page.mouse.move(l.x, l.y);
  await page.mouse.down();
  for (let i = 1; i <= 12; i++) await page.mouse.move(l.x, l.y - (0.1 * k * i) / 12);
  await page.mouse.up();
  const b = { l: await pos('left hand'), r: await pos('right hand') };
  assert.ok(Math.abs(b.l[1] - a.l[1] - 0.1) < 5e-3, `the left hand went up ${b.l[1] - a.l[1]} m`);
  assert.ok(Math.abs(b.r[1] - a.r[1] - 0.1) < 5e-3, `the right hand went up ${b.r[1] - a.r[1]} m with it`);
  await page.keyboard.press('Control+z');
  assert.ok(dist(await pos('right hand'), a.r) < 1e-12, 'one undo step for both');
  // a box around the feet in the front view (Ctrl+drag from empty space)
  const lf = await screen('left foot'),
    rf = await screen('right foot');
  const x0 = Math.min(lf.x, rf.x) - 25,
    x1 = Math.max(lf.x, rf.x) + 25,
    y0 = Math.min(lf.y, rf.y) - 15,
    y1 = Math.max(lf.y, rf.y) + 15;
  await page.keyboard.down('Control');
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  for (let i = 1; i <= 6; i++) await page.mouse.move(x0 + ((x1 - x0) * i) / 6, y0 + ((y1 - y0) * i) / 6);
  assert.ok(await page.isVisible('#select-box'));
  await page.mouse.up();
  await page.keyboard.up('Control');
  assert.deepEqual((await state()).selected.sort(), ['left foot', 'right foot']);
  assert.ok(!(await page.isVisible('#select-box')));
  // a plain click selects one again
  await page.mouse.click(l.x, l.y);
  assert.deepEqual((await state()).selected, []);
  assert.equal((await state()).selection, 'left hand');
});

test('the rotate ring: a sweep of 30 degrees on it in the front view turns the head 30 degrees about the view axis', async () => {
  await page.evaluate(() => {
    const m = window.marionette;
    m.store.setPose(m.store.figure.restQ);
    m.setSettings({ dragMode: 'part' });
  });
  const h = await screen('head');
  await page.mouse.click(h.x, h.y);
  assert.equal((await state()).selection, 'head');
  const ring = await page.evaluate(() => {
    const r = document.querySelector('.rotate-ring[data-view=front]').getBoundingClientRect();
    return { visible: r.width > 0, d: r.width };
  });
  assert.ok(ring.visible);
  const R = ring.d / 2,
    q0 = await page.evaluate(() =>
      window.marionette.posing.quatOfFrame(window.marionette.store.figure, window.marionette.store.figure.joint('head')),
    );
  const head0 = await pos('head');
  await page.mouse.move(h.x + R, h.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) {
    const a = (Math.PI / 6) * (i / 10);
    await page.mouse.move(h.x + R * Math.cos(a), h.y + R * Math.sin(a));
  }
  await page.mouse.up();
  const q1 = await page.evaluate(() =>
    window.marionette.posing.quatOfFrame(window.marionette.store.figure, window.marionette.store.figure.joint('head')),
  );
  // q1 q0^-1: the turn made, as an angle about an axis
  const [w0, x0, y0, z0] = q0,
    [w1, x1, y1, z1] = q1;
  const rw = w1 * w0 + x1 * x0 + y1 * y0 + z1 * z0;
  const rx = -w1 * x0 + x1 * w0 - y1 * z0 + z1 * y0,
    ry = -w1 * y0 + y1 * w0 - z1 * x0 + x1 * z0,
    rz = -w1 * z0 + z1 * w0 - x1 * y0 + y1 * x0;
  const angle = 2 * Math.atan2(Math.hypot(rx, ry, rz), Math.abs(rw)),
    s = Math.sign(rw) || 1;
  assert.ok(Math.abs(angle - Math.PI / 6) < 0.03, `turned ${angle} rad`);
  // about the front view's axis (it looks along -z): clockwise on screen
  assert.ok((-s * rz) / Math.hypot(rx, ry, rz) > 0.99, `axis ${rx}, ${ry}, ${rz}`);
  assert.ok(dist(await pos('head'), head0) < 1e-9, 'the head turns about its own joint');
  await page.keyboard.press('Control+z');
  const q2 = await page.evaluate(() =>
    window.marionette.posing.quatOfFrame(window.marionette.store.figure, window.marionette.store.figure.joint('head')),
  );
  assert.ok(
    q2.every((v, i) => Math.abs(v - q0[i]) < 1e-12),
    'one undo step',
  );
  await page.evaluate(() => window.marionette.setSettings({ dragMode: 'branch' }));
});
