// A sequence document of several figures in the editor (docs/editor.md "Several figures"):
// the real `marionette editor` on a temporary project holding the two stick figures of
// docs/examples/holding_hands_sequence.json, the page in Debian's Chromium. Every figure is
// drawn where the document places it, the joint list groups the joints by figure, a drag of
// one figure keeps the hand-to-hand locks between them and every foot lock, two parts joined
// with the Lock menu hold together, Make root re-roots one figure keeping every joint of
// both, and the saved document is one of several figures that the command line reads.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { makeScratch, startServer, launchBrowser, openEditor, waitSaved, removeScratch, root, BINARY } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
const example = JSON.parse(readFileSync(join(root, 'docs/examples/holding_hands_sequence.json'), 'utf8'));

before(async () => {
  scratch = makeScratch('mn_editor_figures_');
  writeFileSync(join(scratch.project, 'hands.json'), JSON.stringify(example, null, 1));
  // the same two figures without constraints, joined in the test with the Lock menu
  const free = { ...structuredClone(example), handles: [], constraints: [] };
  delete free.comment;
  writeFileSync(join(scratch.project, 'free.json'), JSON.stringify(free, null, 1));
  writeFileSync(join(scratch.project, 'editor.json'), JSON.stringify({ sequence: 'hands.json' }));
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  page = await openEditor(context, server.url, errors);
});

after(async () => {
  if (context) await context.close();
  if (server) await server.stop('SIGKILL');
  removeScratch(scratch);
});

const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

test('every figure is drawn where the document places it; the joint list groups them', async () => {
  const r = await page.evaluate(() => {
    const m = window.marionette;
    m.keepConstraints(false);
    m.setFrame(0);
    const names = m.store.figure.jointNames;
    const groups = [...document.querySelectorAll('#joint-list li.figure-group')].map((li) => li.textContent);
    const rows = [...document.querySelectorAll('#joint-list li[data-joint]')].map((li) => [li.dataset.joint, li.textContent]);
    return { names, groups, rows, pos: Object.fromEntries(names.map((n) => [n, m.position(n)])), spheres: m.viewport.spheres.length };
  });
  assert.equal(r.names.length, 62, 'two stick figures of 31 joints');
  assert.deepEqual(r.groups, ['ann', 'bob']);
  assert.ok(r.rows.some(([j, t]) => j === 'bob/right hand' && t === 'right hand'));
  assert.ok(r.spheres > 20, 'both figures drawn');
  // bob stands 0.9 m along z turned half a turn about the vertical; both are keyed alike at
  // frame 0, so each joint of bob's is ann's turned and moved
  let worst = 0;
  for (const n of r.names.filter((x) => x.startsWith('ann/'))) {
    const a = r.pos[n],
      b = r.pos[`bob/${n.slice(4)}`];
    worst = Math.max(worst, dist(b, [-a[0], a[1], 0.9 - a[2]]));
  }
  assert.ok(worst < 1e-9, `bob placed within ${worst}`);
  // at frame 20 bob's key moves his pelvis by (0, -0.1, 0.02) in his own frame: turned with
  // him (the reader's placement of a free root's state)
  const bob20 = await page.evaluate(() => {
    const m = window.marionette,
      f = m.store.figure;
    const at = f.joints[f.jointNames.indexOf('ann/pelvis')].qadr;
    const q0 = Array.from(f.restQ.slice(at, at + 3));
    m.setFrame(20);
    const out = { bob: m.position('bob/pelvis'), q0 };
    m.setFrame(0);
    return out;
  });
  const own = [0, 1, 2].map((k) => r.pos['ann/pelvis'][k] - bob20.q0[k] + [0, -0.1, 0.02][k]);
  assert.ok(dist(bob20.bob, [-own[0], own[1], 0.9 - own[2]]) < 1e-9, `bob's pelvis at frame 20: ${bob20.bob}`);
  // and where the views show them: bob's head to the side of ann's in the side view
  const s = await page.evaluate(() => [window.marionette.screen('ann/head', 'side'), window.marionette.screen('bob/head', 'side')]);
  assert.ok(Math.abs(s[0].x - s[1].x) > 50, `side view: heads ${Math.abs(s[0].x - s[1].x)} px apart`);
});

test("dragging one figure's pelvis keeps both figures' feet and the hands held between them", async () => {
  await page.evaluate(() => window.marionette.keepConstraints(true));
  // the locks as the document has them, solved (the hands meet), then ann's pelvis pulled down
  await page.evaluate(() => window.marionette.solve());
  const before = await page.evaluate(() => {
    const m = window.marionette;
    return Object.fromEntries(m.store.figure.jointNames.map((n) => [n, m.position(n)]));
  });
  assert.ok(dist(before['ann/right hand'], before['bob/left hand']) < 1e-4, 'the hands held after Solve');
  const p = await page.evaluate(() => window.marionette.screen('ann/pelvis', 'side'));
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  assert.equal(await page.evaluate(() => window.marionette.state().selection), 'ann/pelvis');
  for (let i = 1; i <= 15; i++) await page.mouse.move(p.x, p.y + 2 * i);
  await page.mouse.up();
  await waitSaved(page);
  const after = await page.evaluate(() => {
    const m = window.marionette;
    return { pos: Object.fromEntries(m.store.figure.jointNames.map((n) => [n, m.position(n)])), stats: m.stats() };
  });
  const pos = after.pos;
  assert.ok(
    before['ann/pelvis'][1] - pos['ann/pelvis'][1] > 0.02,
    `ann's pelvis down by ${before['ann/pelvis'][1] - pos['ann/pelvis'][1]}`,
  );
  for (const f of ['ann/left foot', 'ann/right foot', 'bob/left foot', 'bob/right foot'])
    assert.ok(dist(pos[f], before[f]) < 1e-4, `${f} moved ${dist(pos[f], before[f])}`);
  assert.ok(dist(pos['ann/right hand'], pos['bob/left hand']) < 1e-4, 'hands 1 held');
  assert.ok(dist(pos['ann/left hand'], pos['bob/right hand']) < 1e-4, 'hands 2 held');
  assert.ok(dist(pos['bob/right hand'], before['bob/right hand']) > 1e-3, "bob's hand followed ann's");
  // saved as a document of several figures that the command line reads
  const saved = JSON.parse(readFileSync(join(scratch.project, 'hands.json'), 'utf8'));
  assert.deepEqual(
    saved.figures.map((f) => [f.name, f.file, f.keys.length]),
    [
      ['ann', 'stickman', 4],
      ['bob', 'stickman', 4],
    ],
  );
  assert.deepEqual(saved.figures[1].position, [0, 0, 0.9]);
  // bob's key at frame 20 written back in his own frame, as the document had it
  const k20 = saved.figures[1].keys.find((k) => k.frame === 20).pose.pelvis;
  assert.ok(dist(k20.position, [0, -0.1, 0.02]) < 1e-12 && Math.abs(k20.rotation[0] - 1) < 1e-12, JSON.stringify(k20));
  assert.equal(saved.figures[0].interpolation.rotation, 'squad');
  assert.equal(saved.figure, undefined);
  assert.equal(saved.constraints.filter((c) => c.type === 'equal').length, 2);
  const info = execFileSync(BINARY, ['anim', 'info', join(scratch.project, 'hands.json')], { encoding: 'utf8' });
  assert.match(info, /figures: 2/);
  // the drag is one undo step
  await page.evaluate(() => window.marionette.undo());
  const undone = await page.evaluate(() => window.marionette.position('ann/pelvis'));
  assert.ok(dist(undone, before['ann/pelvis']) < 1e-12);
});

test("two figures' hands joined with the Lock menu hold together through a drag of either", async () => {
  await page.evaluate(() => window.marionette.setSettings({ sequence: 'free.json' }));
  await page.evaluate(() => window.marionette.save());
  await page.reload();
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  assert.equal(await page.evaluate(() => window.marionette.store.sequencePath), 'free.json');
  // pick ann's right hand, Shift+click bob's left hand (the top view: they face each other)
  const a = await page.evaluate(() => window.marionette.screen('ann/right hand', 'top'));
  await page.mouse.click(a.x, a.y);
  const b = await page.evaluate(() => window.marionette.screen('bob/left hand', 'top'));
  await page.keyboard.down('Shift');
  await page.mouse.click(b.x, b.y);
  await page.keyboard.up('Shift');
  assert.deepEqual(await page.evaluate(() => window.marionette.state().selected), ['ann/right hand', 'bob/left hand']);
  await page.click('#lock-menu-button');
  await page.click('#lock-menu button[data-lock="equal"]');
  let st = await page.evaluate(() => window.marionette.state());
  assert.ok(
    st.constraints.some((c) => c.type === 'equal'),
    'an equal constraint',
  );
  const held = () =>
    page.evaluate(() => {
      const m = window.marionette;
      const [p, q] = [m.position('ann/right hand'), m.position('bob/left hand')];
      return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
    });
  assert.ok((await held()) < 1e-4, `joined: ${await held()}`);
  // bob's pelvis dragged sideways: ann's hand follows bob's
  const annHand = await page.evaluate(() => window.marionette.position('ann/right hand'));
  const p = await page.evaluate(() => window.marionette.screen('bob/pelvis', 'side'));
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= 12; i++) await page.mouse.move(p.x + 2 * i, p.y);
  await page.mouse.up();
  assert.ok((await held()) < 1e-4, `held after the drag: ${await held()}`);
  const moved = await page.evaluate(() => window.marionette.position('ann/right hand'));
  assert.ok(dist(moved, annHand) > 1e-3, "ann's hand followed");
  await waitSaved(page);
  const saved = JSON.parse(readFileSync(join(scratch.project, 'free.json'), 'utf8'));
  const c = saved.constraints.find((x) => x.type === 'equal');
  const hs = new Map(saved.handles.map((h) => [h.name, h.joint]));
  assert.deepEqual([hs.get(c.handle), hs.get(c.handle2)], ['ann/right hand', 'bob/left hand']);
  execFileSync(BINARY, ['anim', 'info', join(scratch.project, 'free.json')], { encoding: 'utf8' });
  // undo the drag, then the join
  await page.evaluate(() => window.marionette.undo());
  await page.evaluate(() => window.marionette.undo());
  st = await page.evaluate(() => window.marionette.state());
  assert.equal(st.constraints.length, 0);
  // Make root on one figure's joint: bob hangs from his left foot, every joint of both
  // figures where it was; the document records bob's root only; undo
  const all = () =>
    page.evaluate(() => {
      const m = window.marionette;
      return Object.fromEntries(m.store.figure.jointNames.map((n) => [n, m.position(n)]));
    });
  const p0 = await all();
  await page.evaluate(() => window.marionette.select('bob/left foot'));
  await Promise.all([page.waitForEvent('load'), page.click('#make-root')]);
  await page.waitForFunction(() => window.marionette?.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  const p1 = await all();
  const worst = Math.max(...Object.keys(p0).map((n) => dist(p0[n], p1[n])));
  assert.ok(worst < 1e-9, `every joint of both figures where it was, within ${worst}`);
  assert.deepEqual(await page.evaluate(() => window.marionette.store.figure.joints.filter((j) => j.parent < 0).map((j) => j.name)), [
    'ann/pelvis',
    'bob/left foot',
  ]);
  const rooted = JSON.parse(readFileSync(join(scratch.project, 'free.json'), 'utf8'));
  assert.deepEqual(
    rooted.figures.map((f) => f.root),
    [undefined, 'left foot'],
  );
  execFileSync(BINARY, ['anim', 'info', join(scratch.project, 'free.json')], { encoding: 'utf8' });
  await Promise.all([page.waitForEvent('load'), page.evaluate(() => window.marionette.undo())]);
  await page.waitForFunction(() => window.marionette?.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  const p2 = await all();
  assert.ok(Math.max(...Object.keys(p0).map((n) => dist(p0[n], p2[n]))) < 1e-9);
  await waitSaved(page);
  assert.equal(JSON.parse(readFileSync(join(scratch.project, 'free.json'), 'utf8')).figures[1].root, undefined);
  assert.deepEqual(
    errors.filter((e) => !/status of 404/.test(e)),
    [],
  );
});
