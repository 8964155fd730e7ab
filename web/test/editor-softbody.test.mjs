// The soft-body page end to end: the real `marionette editor` on a temporary project, the
// page (softbody.html) in Debian's Chromium (headless), driven with real mouse events.
// CesiumMan in its lattice of tetrahedra: a controller dragged (the flesh around it follows,
// and settles once released), the body grabbed (its nearest nodes pulled), a controller
// pinned, the walk driving the bones, the take exported; the gingerbread shape in the plane:
// a hand dragged and the shape grabbed, everything staying in the plane.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { BINARY, makeScratch, startServer, launchBrowser, removeScratch } from './editor-harness.mjs';
import { softbodyURL } from './softbody-fixtures.mjs';

let scratch, server, context, page;
const errors = [];
const realErrors = () => errors.filter((e) => !/status of 404/.test(e));

async function open(scene) {
  await page.goto(softbodyURL(server.url, { scene }));
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  await page.waitForFunction(() => window.marionette.state().frame >= 3, null, { timeout: 30000 });
}

before(async () => {
  scratch = makeScratch('mn_softbody_');
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  // the address the server printed, as a user opens it, then the editor's link to the page
  await page.goto(server.url);
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  await Promise.all([page.waitForURL(/softbody\.html/), page.click('#softbody-link')]);
  await page.waitForFunction(() => window.marionette && window.marionette.step, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
});

after(async () => {
  try {
    if (context) await context.close();
  } finally {
    if (server) await server.stop('SIGKILL');
    removeScratch(scratch);
  }
});

const M = (fn, arg) => page.evaluate(fn, arg);
const state = () => M(() => window.marionette.state());
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/** The mean of the given surface vertices. */
async function meanOf(idx) {
  const s = await M(() => window.marionette.surface());
  const m = [0, 0, 0];
  for (const i of idx) for (let k = 0; k < 3; k++) m[k] += s[3 * i + k] / idx.length;
  return m;
}
/** Surface vertices within r of p. */
async function near(p, r) {
  const s = await M(() => window.marionette.surface()),
    out = [];
  for (let i = 0; i < s.length / 3; i++) if (dist([s[3 * i], s[3 * i + 1], s[3 * i + 2]], p) < r) out.push(i);
  return out;
}
/** Presses the mouse at (x, y), moves it by (dx, dy) in n steps with sim frames between. */
async function pressAndMove(x, y, dx, dy, n = 12) {
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let i = 1; i <= n; i++) {
    await page.mouse.move(x + (dx * i) / n, y + (dy * i) / n);
    await page.waitForTimeout(20);
  }
}

test('CesiumMan: a dragged controller takes the flesh around it along, which settles once released', async () => {
  await open('cesiumman');
  const s0 = await state();
  assert.equal(s0.scene, 'cesiumman');
  assert.equal(s0.surfaceVertices, 3273);
  assert.equal(s0.controllers.length, 19);
  assert.ok(s0.nodes > 500 && s0.elements > 1000, `${s0.nodes} nodes, ${s0.elements} tets`);
  assert.ok(s0.controllers[0].pinned && s0.controllers[0].driven, 'the root is pinned');
  // an arm's controller: the free one farthest to the side (z) of the body
  let j = -1;
  s0.controllers.forEach((c, k) => {
    if (!c.driven && (j < 0 || Math.abs(c.position[2]) > Math.abs(s0.controllers[j].position[2]))) j = k;
  });
  const c0 = s0.controllers[j].position;
  const idx = await near(c0, 0.06);
  assert.ok(idx.length >= 10, `${idx.length} surface vertices near the controller`);
  const m0 = await meanOf(idx);
  const p = await M((k) => window.marionette.screen(k), j);
  await pressAndMove(p.x, p.y, 60, -90);
  let st = await state();
  assert.equal(st.dragging, 'ctrl');
  assert.equal(st.selected, j);
  assert.ok(st.controllers[j].driven && !st.controllers[j].pinned, 'driven while dragged');
  // hold the mouse while the body catches up (one second of simulation)
  await M(() => window.marionette.step(60));
  st = await state();
  const c1 = st.controllers[j].position,
    dc = sub(c1, c0);
  assert.ok(Math.hypot(...dc) > 0.1, `the controller moved ${Math.hypot(...dc)} m`);
  const dm = sub(await meanOf(idx), m0);
  const along = dot(dm, dc) / dot(dc, dc);
  assert.ok(
    along > 0.6 && Math.hypot(...sub(dm, dc)) < 0.5 * Math.hypot(...dc),
    `the flesh near it followed: ${dm.map((v) => v.toFixed(3))} for ${dc.map((v) => v.toFixed(3))}`,
  );
  assert.ok(st.last.ok && st.last.residual < 1e-9, `residual ${st.last.residual}`);
  await page.mouse.up();
  st = await state();
  assert.equal(st.dragging, null);
  assert.ok(!st.controllers[j].driven, 'free again once released');
  // released: it moves (springs back under its own flesh), then settles
  const early = [];
  for (let i = 0; i < 6; i++) early.push((await M(() => window.marionette.step(5))).maxSpeed);
  await M(() => window.marionette.step(300));
  const late = (await state()).last.maxSpeed;
  assert.ok(late < 0.1 * Math.max(...early), `speeds ${early.map((v) => v.toFixed(3))} then ${late}`);
  assert.deepEqual(realErrors(), []);
});

test('CesiumMan: the body grabbed with the mouse is pulled by its nearest nodes; pin keeps a controller driven', async () => {
  await M(() => window.marionette.reset());
  // the middle of the head on the screen, away from every controller
  const pick = await M(() => {
    const mm = window.marionette,
      s = mm.surface(),
      st = mm.state();
    let ymax = -Infinity;
    for (let i = 1; i < s.length; i += 3) ymax = Math.max(ymax, s[i]);
    const q = [0, 0, 0];
    let n = 0;
    for (let i = 0; i < s.length / 3; i++) {
      if (s[3 * i + 1] < ymax - 0.25) continue;
      for (let k = 0; k < 3; k++) q[k] += s[3 * i + k];
      n++;
    }
    const c = q.map((v) => v / n),
      sp = mm.screenOfPoint(c);
    const clear = Math.min(
      ...st.controllers.map((k) => {
        const o = mm.screenOfPoint(k.position);
        return Math.hypot(o.x - sp.x, o.y - sp.y);
      }),
    );
    return { q: c, sp, clear };
  });
  assert.ok(pick && pick.clear > 20, 'a point of the head clear of the controllers');
  const nodes0 = await M(() => window.marionette.nodes());
  await pressAndMove(pick.sp.x, pick.sp.y, 0, -80);
  let st = await state();
  assert.equal(st.dragging, 'mesh');
  assert.equal(st.grabbed.length, 8);
  await M(() => window.marionette.step(30));
  const nodes1 = await M(() => window.marionette.nodes());
  const rise = st.grabbed.reduce((a, i) => a + nodes1[3 * i + 1] - nodes0[3 * i + 1], 0) / 8;
  assert.ok(rise > 0.03, `the grabbed nodes rose ${rise} m`);
  await page.mouse.up();
  st = await state();
  assert.equal(st.dragging, null);
  assert.deepEqual(st.grabbed, []);
  // pin a free controller from the list and the Pin button: it stays driven, and where it is
  const j = 5;
  await page.click(`#sb-ctrls li[data-j="${j}"]`);
  await page.click('#sb-pin');
  st = await state();
  assert.ok(st.controllers[j].pinned && st.controllers[j].driven);
  const at = st.controllers[j].position;
  await M(() => window.marionette.step(30));
  assert.ok(dist((await state()).controllers[j].position, at) < 1e-9, 'a pinned controller stays');
  await page.keyboard.press('p');
  st = await state();
  assert.ok(!st.controllers[j].pinned && !st.controllers[j].driven, 'P unpins it');
  assert.deepEqual(realErrors(), []);
});

test('CesiumMan: the walk drives every bone, the flesh follows through the coupling, the take is exported', async () => {
  await M(() => window.marionette.reset());
  await page.click('#sb-walk');
  let st = await state();
  assert.ok(st.walking, 'walking');
  assert.ok(
    st.controllers.every((c) => c.driven),
    'every bone driven',
  );
  const before = st.controllers.map((c) => c.position);
  await M(() => window.marionette.step(45));
  st = await state();
  const moved = st.controllers.map((c, k) => dist(c.position, before[k]));
  assert.ok(Math.max(...moved) > 0.05, `the walk moved the bones (${Math.max(...moved)})`);
  assert.ok(st.last.ok && st.last.residual < 1e-9);
  await page.keyboard.press('w');
  st = await state();
  assert.ok(!st.walking && !st.controllers[1].driven && st.controllers[0].driven);
  // the take: one pose per controller and frame since the reset, downloaded as JSON
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#sb-export')]);
  const file = join(scratch.tmp, 'take.json');
  await download.saveAs(file);
  const take = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(take.format, 'marionette-softbody-take');
  assert.equal(take.controllers.length, 19);
  assert.ok(take.frames.length >= st.takeFrames, 'every frame since the reset (and those run since)');
  assert.ok(take.frames.length >= 45);
  assert.ok(take.frames.every((f) => f.length === 19 * 12 && f.every(Number.isFinite)));
  // a rotation in every pose
  const R = take.frames.at(-1).slice(12, 21);
  assert.ok(
    Math.abs(R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]) - 1) < 1e-6,
  );
  // the glb: read by the native build, its joints where the fitted controllers were
  await M(() => window.marionette.run(false));
  const poses = (await M(() => window.marionette.exportTake())).frames;
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#sb-export-glb')]);
  const glb = join(scratch.tmp, 'take.glb');
  await dl.saveAs(glb);
  const info = execFileSync(BINARY, ['info', glb], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  assert.match(info, /19 joints/);
  assert.match(info, new RegExp(`animations: 1\\n\\s+\\S+: [0-9.]+ s, ${poses.length} keys`));
  for (const f of [10, poses.length - 1]) {
    const fk = JSON.parse(
      execFileSync(BINARY, ['fk', glb, '--time', String(f / 60), '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    );
    assert.equal(fk.joints.length, 19);
    for (let j = 0; j < 19; j++) {
      const d = poses[f].slice(12 * j + 9, 12 * j + 12);
      const gap = Math.min(...fk.joints.map((k) => dist(k.position, d)));
      assert.ok(gap < 1e-4, `frame ${f}: controller ${j} is ${gap} m from every joint of the glb`);
    }
  }
  await M(() => window.marionette.run(true));
  assert.deepEqual(realErrors(), []);
});

test('the gingerbread shape in the plane: a hand dragged, the shape grabbed, a foot turned, all in the plane', async () => {
  await open('gingerbread');
  let st = await state();
  assert.equal(st.dim, 2);
  assert.deepEqual(
    st.controllers.map((c) => c.name),
    ['head', 'chest', 'hips', 'left_hand', 'right_hand', 'left_foot', 'right_foot'],
  );
  const j = 4,
    c0 = st.controllers[j].position,
    idx = await near(c0, 0.06),
    m0 = await meanOf(idx);
  const p = await M((k) => window.marionette.screen(k), j);
  await pressAndMove(p.x, p.y, 90, -110);
  await M(() => window.marionette.step(60));
  st = await state();
  const dc = sub(st.controllers[j].position, c0),
    dm = sub(await meanOf(idx), m0);
  assert.ok(Math.hypot(...dc) > 0.1, `the hand moved ${Math.hypot(...dc)}`);
  assert.ok(dot(dm, dc) / dot(dc, dc) > 0.6, 'the shape near the hand followed');
  await page.mouse.up();
  // the belly grabbed between the chest and the hips, pulled to the left
  const b = await M(() => window.marionette.screenOfPoint([0.08, 0.44, 0]));
  const x0 = await M(() => window.marionette.nodes());
  await pressAndMove(b.x, b.y, -80, 0);
  st = await state();
  assert.equal(st.dragging, 'mesh');
  assert.equal(st.grabbed.length, 6);
  await M(() => window.marionette.step(30));
  const x1 = await M(() => window.marionette.nodes());
  const dx = st.grabbed.reduce((a, i) => a + x1[3 * i] - x0[3 * i], 0) / 6;
  await page.mouse.up();
  assert.ok(dx < -0.02, `the grabbed vertices moved left ${dx}`);
  // Shift-drag turns the right foot about its pivot: a quarter turn swept clockwise on the
  // screen, a rotation about z in the plane, clockwise as seen
  await M(() => window.marionette.run(false)); // the foot stays where it is read until the turn
  const f = await M(() => window.marionette.screen(6)),
    pf = (await state()).controllers[6].position;
  const R0 = (await M(() => window.marionette.exportTake())).frames.at(-1).slice(72, 81);
  await page.keyboard.down('Shift');
  await page.mouse.move(f.x, f.y);
  await page.mouse.down();
  for (let i = 0; i <= 12; i++) {
    const a = (-Math.PI / 2) * (1 - i / 12); // from straight up on the screen to the right: clockwise
    await page.mouse.move(f.x + 60 * Math.cos(a), f.y + 60 * Math.sin(a));
    await page.waitForTimeout(20);
  }
  await M(() => window.marionette.step(30));
  const Pf = (await M(() => window.marionette.exportTake())).frames.at(-1).slice(72, 84);
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await M(() => window.marionette.run(true));
  const turn = Math.atan2(Pf[3], Pf[0]) - Math.atan2(R0[3], R0[0]);
  assert.ok(Math.abs(turn + Math.PI / 2) < 0.05, `turned ${turn} rad`);
  assert.deepEqual([Pf[2], Pf[5], Pf[6], Pf[7], Pf[8]], [0, 0, 0, 0, 1]);
  assert.ok(dist(Pf.slice(9), pf) < 1e-3, 'about its pivot');
  const x = await M(() => window.marionette.nodes());
  for (let i = 2; i < x.length; i += 3) assert.equal(x[i], 0);
  st = await state();
  assert.ok(st.last.ok && st.last.residual < 1e-9 && st.controllers.every((c) => c.position[2] === 0));
  assert.deepEqual(realErrors(), []);
});
