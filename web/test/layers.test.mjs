// Layers, time warps and takes (layers.h, takes.h) in the module: a layered sequence's blend
// against the formulas, and the crossfade, loop and ballistic retiming of the shipped CMU takes
// against the native command line on the same files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from '../marionette.mjs';
import { native, data, tempDir } from './helpers.mjs';

const mn = await load();
const CMU = 0.056444;
const walk = join(data, 'mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh');
const hop = join(data, 'mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh');
const jumps = join(data, 'mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh');

function kv(line) {
  return Object.fromEntries(
    line
      .trim()
      .split(/\s+/)
      .map((p) => p.split('='))
      .map(([k, v]) => [k, isNaN(+v) ? v : +v]),
  );
}

test('an additive and an override layer blend as the formulas say', () => {
  const fig = mn.stickman();
  const seq = mn.createSequence(fig, { fps: 30 });
  const q0 = fig.restQ;
  seq.setKey(0, q0);
  seq.setKey(30, q0);
  const elbow = fig.joint('right elbow'),
    head = fig.joint('head.1');
  const ea = fig.joints[elbow].qadr,
    ha = fig.joints[head].qadr;
  const wave = new Float64Array(q0);
  wave[ea] = -1.2;
  const look = new Float64Array(q0);
  look[ha] = 0.6;
  const turn = 0.8; // the root turned about +y in the override layer
  look[3] = Math.cos(turn / 2);
  look[5] = Math.sin(turn / 2);
  assert.equal(
    seq.addLayer({
      name: 'wave',
      mode: 'additive',
      mask: ['right arm.1'],
      weights: [
        [0, 0],
        [20, 1],
      ],
      keys: [{ frame: 0, q: wave }],
    }),
    0,
  );
  assert.equal(
    seq.addLayer({
      name: 'look',
      mode: 'override',
      mask: { 'head.1': 1, pelvis: 0.5 },
      weights: [[0, 0.5]],
      keys: [{ frame: 0, q: look }],
    }),
    1,
  );
  const layers = seq.layers;
  assert.deepEqual(
    layers.map((l) => [l.name, l.mode, l.keyCount]),
    [
      ['wave', 'additive', 1],
      ['look', 'override', 1],
    ],
  );
  assert.equal(layers[0].mask[elbow], 1);
  assert.equal(layers[0].mask[head], 0);
  assert.deepEqual(layers[1].weights, [[0, 0.5]]);
  for (const f of [0, 5, 10, 20, 25]) {
    const q = seq.sampleBlendQ(f);
    const u = Math.min(f / 20, 1),
      w = u * u * (3 - 2 * u);
    assert.ok(Math.abs(seq.layerWeight(0, f) - w) < 1e-15);
    // additive: the rest-relative delta scaled by the weight
    assert.ok(Math.abs(q[ea] - (q0[ea] + w * (-1.2 - q0[ea]))) < 1e-12, `elbow at ${f}`);
    // override at 0.5: the head half way; the root (mask 0.5) a quarter of the way round
    assert.ok(Math.abs(q[ha] - 0.3) < 1e-12);
    assert.ok(Math.abs(2 * Math.atan2(q[5], q[3]) - turn / 4) < 1e-12);
  }
  assert.throws(() => seq.addLayer({ mode: 'multiply', keys: [{ frame: 0, q: q0 }] }), /layer.mode/);
  assert.throws(
    () => seq.addLayer({ keys: [{ frame: 0, q: q0 }], weights: [[0, 2]] }),
    (e) => e.field === 'weights',
  );
  seq.setTimeWarp([
    [0, 0, 0],
    [60, 30, 0],
  ]);
  for (const t of [0, 15, 30, 45, 60]) {
    const u = t / 60;
    assert.ok(Math.abs(seq.warp(t) - 30 * u * u * (3 - 2 * u)) < 1e-12);
  }
  assert.throws(
    () =>
      seq.setTimeWarp([
        [0, 0],
        [10, -1],
      ]),
    (e) => e.field === 'time_warp',
  );
  seq.dispose();
  fig.dispose();
});

test('crossfade, loop and ballistic retiming match the command line on the CMU takes', () => {
  const a = mn.figureFromBVH(readFileSync(walk, 'utf8'), { scale: CMU });
  const b = mn.figureFromBVH(readFileSync(hop, 'utf8'), { scale: CMU });
  const fps = 1 / a.motion.frameTime;
  const x = mn.crossfade(a, a.motion.frames, b.motion.frames, fps, { at: 650, bRange: [0, 740] });
  assert.equal(x.aFrame, 650);
  const dir = tempDir();
  try {
    const out = join(dir.dir, 'walk_hop.bvh');
    const l = kv(native(['anim', 'crossfade', walk, hop, '--scale', String(CMU), '--at', '650', '--b-range', '0', '740', '--out', out]));
    assert.equal(x.bFrame, l.b_frame);
    assert.equal(x.frames.length / a.nq, l.frames);
    assert.equal(x.locks, l.locks);
    // the written take read back: every frame's root within the BVH's printed precision
    const back = mn.figureFromBVH(readFileSync(out, 'utf8'));
    let worst = 0;
    for (let f = 0; f < l.frames; f++)
      for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(back.motion.frames[f * a.nq + k] - x.frames[f * a.nq + k]));
    assert.ok(worst < 1e-4, `root ${worst}`);
    back.dispose();
    const loop = mn.loop(a, a.motion.frames, fps, { cycles: 2 });
    const ll = kv(native(['anim', 'loop', walk, '--scale', String(CMU)]));
    assert.deepEqual([loop.start, loop.end], [ll.start, ll.end]);
    assert.equal(loop.frames.length, 2 * (loop.end - loop.start) * a.nq);
    const j = mn.figureFromBVH(readFileSync(jumps, 'utf8'), { scale: CMU });
    const n1 = j.motion.nframes - 1;
    const rt = mn.retime(
      j,
      j.motion.frames,
      1 / j.motion.frameTime,
      [
        [0, 0],
        [2 * n1, n1],
      ],
      { ballistic: true },
    );
    const rl = kv(
      native(['anim', 'retime', jumps, '--scale', String(CMU), '--speed', '0.5', '--ballistic', '--out', join(dir.dir, 'slow.bvh')]),
    );
    assert.equal(rt.flights, rl.flights);
    assert.ok(Math.abs(rt.gravity - rl.gravity) < 1e-3 * rl.gravity);
    assert.ok(rt.gravity > 8 && rt.gravity < 12, `gravity ${rt.gravity}`);
    assert.equal(rt.frames.length / j.nq, rl.frames);
    j.dispose();
  } finally {
    dir.cleanup();
  }
  // root motion out and back in: exact
  const rm = mn.rootMotion(a, a.motion.frames);
  const again = mn.applyRootMotion(a, rm.inPlace, rm.track);
  let worst = 0;
  for (let i = 0; i < again.length; i++) if (i % a.nq >= 7) worst = Math.max(worst, Math.abs(again[i] - a.motion.frames[i]));
  assert.ok(worst < 1e-12);
  a.dispose();
  b.dispose();
});

test('crossfade without bRange searches the window `anim crossfade` chooses without --b-range', () => {
  const a = mn.figureFromBVH(readFileSync(walk, 'utf8'), { scale: CMU });
  const b = mn.figureFromBVH(readFileSync(hop, 'utf8'), { scale: CMU });
  const fps = 1 / a.motion.frameTime;
  const x = mn.crossfade(a, a.motion.frames, b.motion.frames, fps);
  const dir = tempDir();
  try {
    const out = join(dir.dir, 'walk_hop_auto.bvh');
    const l = kv(native(['anim', 'crossfade', walk, hop, '--scale', String(CMU), '--out', out]));
    assert.equal(l.b_range, 'auto');
    assert.equal(x.bRange, 'auto');
    assert.deepEqual(
      [x.aFrame, x.bFrame, x.length, x.frames.length / a.nq, x.locks, x.bMin, x.bMax, x.interestStart, x.interestEnd],
      [l.a_frame, l.b_frame, l.blend_frames, l.frames, l.locks, l.b_min, l.b_max, l.interest_start, l.interest_end],
    );
    // the blend ends before the hop, which plays after it
    assert.ok(x.interestStart > 0 && x.bFrame + x.length <= x.interestStart && x.bMax < x.interestStart);
    const back = mn.figureFromBVH(readFileSync(out, 'utf8'));
    let worst = 0;
    for (let f = 0; f < l.frames; f++)
      for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(back.motion.frames[f * a.nq + k] - x.frames[f * a.nq + k]));
    assert.ok(worst < 1e-4, `root ${worst}`);
    back.dispose();
  } finally {
    dir.cleanup();
  }
  // a range given is searched as given, as --b-range: the same frames as naming the window
  const given = mn.crossfade(a, a.motion.frames, b.motion.frames, fps, { bRange: [x.bMin, x.bMax] });
  assert.deepEqual([given.bRange, given.bFrame, given.interestStart], ['given', x.bFrame, -1]);
  assert.deepEqual(given.frames, x.frames);
  // and refused as the command line refuses it
  for (const bRange of [[5, 4], [-1, 10], [0.5, 10], [0]])
    assert.throws(
      () => mn.crossfade(a, a.motion.frames, b.motion.frames, fps, { bRange }),
      (e) => /^options\.bRange/.test(e.field ?? e.message),
    );
  const fixed = mn.crossfade(a, a.motion.frames, b.motion.frames, fps, { bFrame: 10 });
  assert.deepEqual([fixed.bFrame, fixed.bRange, fixed.bMin], [10, null, null]);
  a.dispose();
  b.dispose();
});
