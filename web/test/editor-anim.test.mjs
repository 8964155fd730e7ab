// The animation half of the editor end to end: the real `marionette editor` on a temporary
// project, the page in Debian's Chromium (headless), through the harness of editor.test.mjs.
// A three-key sequence of the stick figure with both feet locked, made with the mouse and the
// I key; played with Space (frames advance, feet stay locked with the option on); undo of an
// insert; cut and paste, stretch, slide of ranges; mirror; onion skin; the graph; locks keyed
// over time and balance; export to BVH (read back by the module's BVH reader) and glTF; the
// server killed and restarted (the sequence is there); a BVH file dropped on the page; the
// flipbook menu.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { load } from '../marionette.mjs';
import { root, makeScratch, startServer, launchBrowser, openEditor, dragJoint, waitSaved, removeScratch } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
const realErrors = () => errors.filter((e) => !/status of 404/.test(e));
const mn = await load();

before(async () => {
  scratch = makeScratch('mn_editor_anim_');
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

const M = (fn, arg) => page.evaluate(fn, arg);
const state = () => M(() => window.marionette.state());
const frames = async () => (await state()).keys.map((k) => k.frame);
const pos = (j) => M((jj) => window.marionette.position(jj), j);
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const onDisk = () => JSON.parse(readFileSync(join(scratch.project, 'sequence.json'), 'utf8'));
let feet0; // where the feet stand at frame 0

test('a three-key sequence with both feet locked, made with the mouse and the I key', async () => {
  await M(() => {
    window.marionette.addLock('position', 'left foot');
    window.marionette.addLock('position', 'right foot');
  });
  feet0 = [await pos('left foot'), await pos('right foot')];
  await page.keyboard.press('i');
  assert.deepEqual(await frames(), [0]);
  // frame 15: the head pulled down with the chain from the pelvis (a crouch: the locked feet
  // stay), the right hand raised
  await M(() => window.marionette.setSettings({ dragMode: 'named', dragBase: 'pelvis' }));
  await M(() => window.marionette.setFrame(15));
  const pelvis0 = await pos('pelvis');
  await dragJoint(page, 'head', 'front', 0, 45, 15);
  await M(() => window.marionette.setSettings({ dragMode: 'branch' }));
  await dragJoint(page, 'right hand', 'front', -30, -90, 15);
  const pelvis15 = await pos('pelvis');
  assert.ok(pelvis15[1] < pelvis0[1] - 0.05, `the pelvis went down (${pelvis0[1]} -> ${pelvis15[1]})`);
  assert.ok(dist(await pos('left foot'), feet0[0]) < 1e-3, 'the left foot stayed during the drag');
  await page.keyboard.press('i');
  // frame 30: the left hand out
  await M(() => window.marionette.setFrame(30));
  await dragJoint(page, 'left hand', 'front', 40, -60, 15);
  await page.keyboard.press('i');
  assert.deepEqual(await frames(), [0, 15, 30]);
  await waitSaved(page);
  assert.deepEqual(
    onDisk().keys.map((k) => k.frame),
    [0, 15, 30],
  );
  assert.equal(onDisk().constraints.length, 2);
  // the timeline draws a diamond per key where the key is
  const ok = await M(() => {
    const tl = document.getElementById('tl-canvas'),
      g = tl.getContext('2d');
    return [0, 15, 30].map((f) => {
      const x = Math.round(window.marionette.timelineX(f)) + 3; // beside the playhead
      const d = g.getImageData(x * devicePixelRatio, 34 * devicePixelRatio, 1, 1).data;
      return d[0] > 150 && d[1] > 100; // a light (or amber, when selected) key
    });
  });
  assert.deepEqual(ok, [true, true, true]);
});

test("Space plays at the sequence's fps: frames advance, the locked feet stay with the option on", async () => {
  await M(() => {
    window.marionette.keepConstraints(true);
    window.marionette.setFrame(0);
    window.marionette.resetAnimStats();
  });
  await page.locator('#tl-canvas').click({ position: { x: 5, y: 5 } }); // focus the page, not a field
  await M(() => window.marionette.setFrame(0));
  await page.keyboard.press(' ');
  const seen = [];
  let worst = 0;
  for (let i = 0; i < 12; i++) {
    await page.waitForTimeout(60);
    const s = await M(() => ({
      f: window.marionette.frame(),
      lf: window.marionette.position('left foot'),
      rf: window.marionette.position('right foot'),
      playing: window.marionette.playing(),
    }));
    if (s.playing) seen.push(s.f);
    worst = Math.max(worst, dist(s.lf, feet0[0]), dist(s.rf, feet0[1]));
  }
  await page.keyboard.press(' ');
  assert.equal(await M(() => window.marionette.playing()), false, 'Space pauses');
  assert.ok(new Set(seen).size >= 4, `frames advance while playing: ${seen}`);
  assert.ok(
    seen.some((f) => f > 0 && f !== 15 && f !== 30),
    'in-betweens are shown',
  );
  assert.ok(worst < 1e-4, `both feet within 1e-4 of their locks at every frame seen (${worst})`);
  const st = await M(() => window.marionette.animStats());
  assert.ok(st.solveMs.length >= 4 && st.lastSolve.ok, 'the frames were solved');
  // the plain in-betweens move the feet (the option is what keeps them: Fig. 6.5)
  await M(() => window.marionette.keepConstraints(false));
  let plain = 0;
  for (const f of [5, 8, 11, 20, 24]) {
    await M((ff) => window.marionette.setFrame(ff), f);
    plain = Math.max(plain, dist(await pos('left foot'), feet0[0]), dist(await pos('right foot'), feet0[1]));
  }
  await M(() => window.marionette.keepConstraints(true));
  assert.ok(plain > 1e-3, `plain in-betweens leave the locks (${plain})`);
  // the play button, then Space (the button let the focus go: Space pauses, not clicks it again)
  await page.click('#vcr-play');
  assert.equal(await M(() => window.marionette.playing()), true);
  await page.keyboard.press(' ');
  assert.equal(await M(() => window.marionette.playing()), false);
  // step and ends
  await page.click('#vcr-end');
  assert.equal(await M(() => window.marionette.frame()), 30);
  await page.click('#vcr-back');
  assert.equal(await M(() => window.marionette.frame()), 29);
  await page.click('#vcr-start');
  assert.equal(await M(() => window.marionette.frame()), 0);
});

test('an inserted key is undone and redone', async () => {
  await M(() => window.marionette.setFrame(40));
  await page.keyboard.press('i');
  assert.deepEqual(await frames(), [0, 15, 30, 40]);
  await page.keyboard.press('Control+z');
  assert.deepEqual(await frames(), [0, 15, 30]);
  await page.keyboard.press('Control+Shift+z');
  assert.deepEqual(await frames(), [0, 15, 30, 40]);
  await M(() => window.marionette.selectKeys([40]));
  await page.keyboard.press('Delete');
  assert.deepEqual(await frames(), [0, 15, 30]);
  // the last key stays: a sequence document holds at least one
  await M(() => window.marionette.selectKeys([0, 15, 30]));
  await assert.rejects(
    M(() => window.marionette.deleteSelectedKeys()),
    /a sequence keeps at least one key/,
  );
  assert.deepEqual(await frames(), [0, 15, 30]);
});

test('ranges: cut and paste, insert, stretch and shrink, slide, delete; each one undo step', async () => {
  const before = (await state()).keys;
  await M(() => window.marionette.selectRange(0, 15)); // frames 0..15: keys 0 and 15
  await page.click('#tl-cut');
  assert.deepEqual(await frames(), [30]);
  await M(() => window.marionette.setFrame(45));
  await page.click('#tl-paste');
  assert.deepEqual(await frames(), [30, 45, 60]);
  const s = await state();
  assert.deepEqual(s.keys[2].pose, before[1].pose, 'the pasted key is the cut one, pose for pose');
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  assert.deepEqual((await state()).keys, before, 'two undos give the keys back');
  // insert: a copy of 0..15 (span 16) at 15 pushes the keys from 15 on by 16
  await M(() => {
    window.marionette.selectRange(0, 15);
    window.marionette.copyRange();
    window.marionette.setFrame(15);
  });
  await page.click('#tl-insert');
  assert.deepEqual(await frames(), [0, 15, 30, 31, 46]);
  await page.keyboard.press('Control+z');
  // stretch 0..30 by 2 (the factor field), then shrink by a half
  await M(() => window.marionette.selectRange(0, 30));
  await page.fill('#tl-factor', '2');
  await page.click('#tl-stretch');
  assert.deepEqual(await frames(), [0, 30, 60]);
  await M(() => window.marionette.stretchRange(0.5));
  assert.deepEqual(await frames(), [0, 15, 30]);
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  // slide the key at 30 by 5, by dragging it on the timeline
  await M(() => window.marionette.selectKeys([30]));
  const box = await page.locator('#tl-canvas').boundingBox();
  const x30 = await M(() => window.marionette.timelineX(30)),
    x35 = await M(() => window.marionette.timelineX(35));
  await page.mouse.move(box.x + x30, box.y + 34);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) await page.mouse.move(box.x + x30 + ((x35 - x30) * i) / 8, box.y + 34);
  await page.mouse.up();
  assert.deepEqual(await frames(), [0, 15, 35]);
  await page.keyboard.press('Control+z');
  // delete a range and close the gap
  await M(() => window.marionette.selectRange(10, 19));
  await page.click('#tl-delete-range');
  assert.deepEqual(await frames(), [0, 20]);
  await page.keyboard.press('Control+z');
  assert.deepEqual((await state()).keys, before);
  await waitSaved(page);
  assert.deepEqual(
    onDisk().keys.map((k) => k.frame),
    [0, 15, 30],
  );
});

test('mirror: the pose of frame 15 turned left to right', async () => {
  await M(() => window.marionette.setFrame(15));
  const rh = await pos('right hand'),
    lh = await pos('left hand'),
    pelvis = await pos('pelvis');
  await page.click('#tl-mirror');
  const rh2 = await pos('right hand'),
    lh2 = await pos('left hand');
  // the stick figure's mirror plane is x = pelvis x at rest (0)
  assert.ok(dist(lh2, [-rh[0], rh[1], rh[2]]) < 1e-6, `the left hand is where the right was, mirrored (${lh2} vs ${rh})`);
  assert.ok(dist(rh2, [-lh[0], lh[1], lh[2]]) < 1e-6);
  void pelvis;
  const key15 = (await state()).keys.find((k) => k.frame === 15);
  assert.ok(
    Math.abs(key15.pose['left arm.2'] - (await M(() => window.marionette.state().pose['left arm.2']))) < 1e-12,
    'the key at frame 15 took the mirrored pose',
  );
  await page.keyboard.press('Control+z');
  assert.ok(dist(await pos('right hand'), rh) < 1e-9, 'undo gives the pose back');
});

test('copy a pose between frames', async () => {
  await M(() => window.marionette.setFrame(15));
  await page.click('#tl-copy-pose');
  const p15 = (await state()).pose;
  await M(() => window.marionette.setFrame(30));
  await page.click('#tl-paste-pose');
  const key30 = (await state()).keys.find((k) => k.frame === 30);
  for (const [j, v] of Object.entries(p15)) assert.deepEqual(key30.pose[j], v, j);
  await page.keyboard.press('Control+z');
  assert.notDeepEqual((await state()).keys.find((k) => k.frame === 30).pose, key30.pose);
});

test("onion skin shows the neighbouring keys; the graph draws a joint variable's curve", async () => {
  await M(() => window.marionette.setFrame(20));
  await page.check('#tl-onion');
  const ghosts = await M(() => window.marionette.onion());
  assert.deepEqual(
    ghosts.map((g) => g.frame),
    [15, 30],
  );
  assert.equal(await M(() => window.marionette.viewport._ghosts.length), 2, 'two ghosts in the views');
  await M(() => window.marionette.setFrame(5));
  assert.deepEqual(
    (await M(() => window.marionette.onion())).map((g) => g.frame),
    [0, 15],
  );
  await page.uncheck('#tl-onion');
  assert.equal(await M(() => window.marionette.viewport._ghosts.length), 0);
  // the graph of the right knee: the plain curve and, with the option, the constrained one
  await M(() => window.marionette.select('right knee'));
  const g = await M(() => window.marionette.graph());
  assert.equal(g.variable, 'right knee');
  assert.equal(g.keys, 3);
  assert.ok(g.samples > 60 && g.constrained === 31, JSON.stringify(g));
  const drawn = await M(() => {
    const c = document.getElementById('graph-canvas'),
      d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let blue = 0,
      amber = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 2] > 200 && d[i] < 140) blue++;
      if (d[i] > 200 && d[i + 1] > 120 && d[i + 2] < 60) amber++;
    }
    return { blue, amber };
  });
  assert.ok(drawn.blue > 200 && drawn.amber > 30, `curve and key marks drawn: ${JSON.stringify(drawn)}`);
});

test('locks over time and balance from the Animate menu', async () => {
  // the right hand: a position lock whose target is keyed at frames 0 and 30 (a path)
  await M(() => window.marionette.setFrame(0));
  await M(() => window.marionette.addLock('position', 'right hand'));
  const i = (await state()).constraints.length - 1;
  await page.click('#animate');
  await page.click(`#animate-menu .anim-lock[data-index="${i}"] .anim-key-target`);
  const h0 = await pos('right hand');
  await M(() => window.marionette.setFrame(30)); // the menu stays open and follows the frame
  await page.click(`#animate-menu .anim-lock[data-index="${i}"] .anim-key-target`);
  const h30 = await pos('right hand');
  let c = (await state()).constraints[i];
  assert.deepEqual(
    c.target_keys.map((k) => k.frame),
    [0, 30],
  );
  assert.equal(c.lock, undefined);
  // at frame 15 (the key raised the hand) the hand is held on the straight path between them
  await M(() => window.marionette.setFrame(15));
  const h15 = await pos('right hand'),
    mid = [0, 1, 2].map((k) => (h0[k] + h30[k]) / 2);
  assert.ok(dist(h15, mid) < 1e-3, `the hand follows its keyed target (${dist(h15, mid)} from the path)`);
  assert.ok(dist(await pos('left foot'), feet0[0]) < 1e-4);
  await M((ii) => window.marionette.setLockFrames(ii, [0, 10]), i);
  c = (await state()).constraints[i];
  assert.deepEqual(c.frames, [0, 10]);
  // balance: a centre-of-mass handle and a support polygon around the feet
  await page.click('#anim-balance');
  const s = await state(),
    bal = s.constraints.find((x) => x.type === 'balance');
  assert.ok(bal && bal.polygon.length >= 3 && s.handles.some((x) => x.name === bal.handle && x.type === 'com'));
  await M(() => window.marionette.setFrame(20));
  assert.ok((await M(() => window.marionette.animStats())).lastSolve.ok);
  await waitSaved(page);
  // the server checked the document (mn_seq_read_mem) and stored it
  assert.ok(onDisk().constraints.some((x) => x.type === 'balance'));
  // back to the two feet locks for what follows
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  await M(() => window.marionette.store.undo());
  assert.equal((await state()).constraints.length, 2);
});

test('export as BVH (read back: 31 frames, the feet locked) and as glTF', async () => {
  await waitSaved(page);
  const downloads = [];
  page.on('download', (d) => downloads.push(d.suggestedFilename()));
  const bvhPath = await M(() => window.marionette.exportSequence('bvh'));
  assert.equal(bvhPath, 'exports/sequence.bvh');
  const fig = mn.figureFromBVH(readFileSync(join(scratch.project, bvhPath), 'utf8'));
  try {
    assert.equal(fig.motion.nframes, 31);
    const lf = fig.jointNames.indexOf('left_foot'); // as BVH writes names: docs/bvh.md
    fig.setFrame(0);
    const at0 = Array.from(fig.positions.subarray(3 * lf, 3 * lf + 3));
    let worst = 0;
    for (let k = 1; k < 31; k++) {
      fig.setFrame(k);
      worst = Math.max(worst, dist(at0, fig.positions.subarray(3 * lf, 3 * lf + 3)));
    }
    assert.ok(worst < 1e-4, `the baked left foot stays (${worst})`);
    // the in-betweens the page shows with the option on, played from the start (warm-started
    // frame after frame as the bake does)
    await M(() => {
      for (let f = 0; f <= 20; f++) window.marionette.setFrame(f);
    });
    fig.setFrame(20);
    const hand = fig.jointNames.indexOf('right_hand');
    const d = dist(fig.positions.subarray(3 * hand, 3 * hand + 3), await pos('right hand'));
    assert.ok(d < 1e-4, `frame 20: the right hand ${d} from the page`);
  } finally {
    fig.dispose();
  }
  const glb = await M(() => window.marionette.exportSequence('glb'));
  const bytes = readFileSync(join(scratch.project, glb));
  assert.equal(bytes.subarray(0, 4).toString('latin1'), 'glTF');
  // the menu does the same; the browser downloaded each file
  await page.click('#export');
  await page.click('#export-bvh');
  await page.waitForFunction(() => /Exported exports\/sequence.bvh/.test(window.marionette.animStats().status));
  await page.waitForTimeout(200);
  assert.deepEqual(downloads, ['sequence.bvh', 'sequence.glb', 'sequence.bvh']);
});

test('a server killed with SIGKILL and restarted: the sequence is there', async () => {
  await waitSaved(page);
  const want = await state();
  await server.stop('SIGKILL');
  server = await startServer(scratch.project, scratch);
  await page.close();
  page = await openEditor(context, server.url, errors);
  const got = await state();
  assert.deepEqual(got.keys, want.keys);
  assert.deepEqual(got.constraints, want.constraints);
  await M(() => window.marionette.setFrame(22));
  assert.ok(dist(await pos('left foot'), feet0[0]) < 1e-4, 'and it plays with the feet locked');
});

test('a BVH file dropped on the page opens as a new sequence; the flipbook menu shows both', async () => {
  const file = join(root, 'data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh');
  const text = readFileSync(file, 'utf8');
  // the page loads again with the new figure
  const reloaded = page.waitForEvent('load');
  await M((t) => {
    const dt = new DataTransfer();
    dt.items.add(new File([t], 'walk.bvh', { type: 'application/octet-stream' }));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, text);
  // the dialog a take opens: here its skeleton at rest (its motion: editor-timing.test.mjs)
  await page.click('#motion-rest');
  await reloaded;
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await M(() => window.marionette.ready);
  assert.equal(await M(() => window.marionette.store.sequencePath), 'walk.sequence.json');
  const s = await state();
  assert.equal(s.keys.length, 1);
  assert.ok(s.pose.Hips, 'the figure is the dropped skeleton');
  assert.ok(existsSync(join(scratch.project, 'walk.bvh')) && existsSync(join(scratch.project, 'walk.sequence.json')));
  // its height says CMU units: the sequence's scale makes it metres, and the page says so
  assert.equal(JSON.parse(readFileSync(join(scratch.project, 'walk.sequence.json'), 'utf8')).scale, 0.056444);
  assert.match(await page.textContent('#status-line'), /read as CMU units: scale 0\.056444 \(1\.4\d m\)/);
  const tall = () =>
    M(() => {
      const p = window.marionette.store.figure.positions,
        ys = [];
      for (let i = 1; i < p.length; i += 3) ys.push(p[i]);
      return Math.max(...ys) - Math.min(...ys);
    });
  const h = await tall();
  assert.ok(h > 1.2 && h < 1.6, `a person's height in metres: ${h}`);
  // the scale offered in the settings: another one loads the figure at that size
  assert.ok(await page.isVisible('#figure-scale'));
  const rescaled = page.waitForEvent('load');
  await page.fill('#figure-scale', '0.0254');
  await page.press('#figure-scale', 'Enter');
  await rescaled;
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await M(() => window.marionette.ready);
  assert.equal(JSON.parse(readFileSync(join(scratch.project, 'walk.sequence.json'), 'utf8')).scale, 0.0254);
  assert.ok(Math.abs((await tall()) - (h * 0.0254) / 0.056444) < 1e-6);
  // mirror on a CMU skeleton from the page
  await M(() => window.marionette.mirrorPose());
  assert.match(await M(() => window.marionette.animStats().status), /Mirrored the pose \(15 joint pairs\)/);
  // the flipbook menu: one icon per sequence, cycling the key poses
  await page.click('#sequences');
  await page.waitForFunction(
    () => window.marionette.flipbooks().length === 2 && window.marionette.flipbooks().every((b) => b.shown !== null),
  );
  const books = await M(() => window.marionette.flipbooks());
  assert.deepEqual(books.map((b) => [b.path, b.keys]).sort(), [
    ['sequence.json', 3],
    ['walk.sequence.json', 1],
  ]);
  await page.waitForFunction(() => window.marionette.flipbooks().find((b) => b.path === 'sequence.json').shown > 0);
  // choosing one opens it
  const again = page.waitForEvent('load');
  await page.click('#sequences-menu .flip-item[data-path="sequence.json"]');
  await again;
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await M(() => window.marionette.ready);
  assert.equal(await M(() => window.marionette.store.sequencePath), 'sequence.json');
  assert.deepEqual(await frames(), [0, 15, 30]);
  assert.deepEqual(realErrors(), []);
});
