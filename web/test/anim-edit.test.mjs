// The sequence edit operations of the module (Welman 6.1.2: copy, cut, paste, insert,
// delete, stretch, shrink, slide) with their invertible records, animated constraint
// targets and balance (Welman 7.2.1) against `marionette anim bake`, and playback of a long
// sequence with constrained in-betweens, frame by frame, without allocating.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../marionette.mjs';
import { native, tempDir, writeFileSync, join, stateOf, rng, randomState, bvhDistance } from './helpers.mjs';

const mn = await load();
const FRAMES = [0, 10, 20, 25.5, 30, 40, 50, 60];

function makeSeq(fig) {
  const seq = mn.createSequence(fig, { rotation: 'squad', translation: 'catmull-rom' });
  const rand = rng(7);
  for (const f of FRAMES) seq.setKey(f, randomState(fig, rand));
  seq.setKeyTCB(3, [0.5, -0.25, 0.125]);
  return seq;
}
function frames(seq) {
  return Array.from({ length: seq.keyCount }, (_, k) => seq.keyFrame(k));
}
// Everything an edit could change, as bytes: key frames, states, and samples between them.
function snapshot(seq) {
  const parts = [];
  for (let k = 0; k < seq.keyCount; k++) parts.push(seq.keyFrame(k), ...seq.keyQ(k));
  for (let t = -1; t <= 80; t += 0.7) parts.push(...seq.sampleQ(t));
  return Buffer.from(new Float64Array(parts).buffer);
}

test('edits change the keys as documented; undo restores them bit for bit and redo again', () => {
  const fig = mn.stickman();
  const seq = makeSeq(fig);
  const keyAt = (f) => seq.keyQ(frames(seq).indexOf(f));
  const original = FRAMES.map((f) => keyAt(f));
  try {
    const before = snapshot(seq);
    const shift = (1.7 - 1) * (30 - 10);
    const cases = [
      ['cut [10, 26)', () => seq.cut(10, 26), [0, 30, 40, 50, 60]],
      ['delete [10, 26)', () => seq.delete(10, 26), [0, 14, 24, 34, 44]],
      [
        'stretch [10, 30) by 1.7',
        () => seq.stretch(10, 30, 1.7),
        [0, 10, 10 + 1.7 * 10, 10 + 1.7 * 15.5, 30 + shift, 40 + shift, 50 + shift, 60 + shift],
      ],
      ['shrink [0, 61) to a third', () => seq.stretch(0, 61, 1 / 3), FRAMES.map((f) => 0 + (1 / 3) * (f - 0))],
      ['slide [20, 30) by 25', () => seq.slide(20, 30, 25), [0, 10, 30, 40, 45, 50.5, 60]],
      [
        'paste [0, 15) at 50',
        () => {
          const clip = seq.copy(0, 15);
          try {
            return seq.paste(clip, 50);
          } finally {
            clip.dispose();
          }
        },
        [0, 10, 20, 25.5, 30, 40, 50, 60],
      ],
      [
        'insert [0, 15) at 20',
        () => {
          const clip = seq.copy(0, 15);
          try {
            return seq.insert(clip, 20);
          } finally {
            clip.dispose();
          }
        },
        [0, 10, 20, 30, 35, 40.5, 45, 55, 65, 75],
      ],
    ];
    for (const [label, op, expected] of cases) {
      const r = op();
      const edit = r.edit ?? r;
      assert.deepEqual(frames(seq), expected, label);
      const after = snapshot(seq);
      assert.ok(!after.equals(before), `${label}: the edit changed something`);
      seq.undo(edit);
      assert.ok(snapshot(seq).equals(before), `${label}: undo restores the sequence bit for bit`);
      seq.redo(edit);
      assert.ok(snapshot(seq).equals(after), `${label}: redo gives the edit's result again`);
      seq.undo(edit);
      edit.dispose();
      r.clip?.dispose();
    }
    // what moved is the keys themselves: states bit for bit, and the records say what they did
    const { clip, edit } = seq.cut(10, 26);
    assert.equal(clip.span, 16);
    assert.deepEqual(
      clip.keys().map((k) => k.frame),
      [0, 10, 15.5],
    );
    assert.deepEqual(clip.keys()[2].tcb, [0.5, -0.25, 0.125]);
    assert.deepEqual(
      edit.removed.map((k) => k.frame),
      [10, 20, 25.5],
    );
    assert.deepEqual(edit.added, []);
    const paste = seq.paste(clip, 70);
    assert.deepEqual(frames(seq), [0, 30, 40, 50, 60, 70, 80, 85.5]);
    assert.deepEqual(Array.from(keyAt(85.5)), Array.from(original[3]));
    assert.deepEqual(Array.from(keyAt(70)), Array.from(original[1]));
    assert.deepEqual(
      paste.added.map((k) => k.frame),
      [70, 80, 85.5],
    );
    seq.undo(paste);
    seq.undo(edit);
    assert.ok(snapshot(seq).equals(before));
    clip.dispose();
  } finally {
    seq.dispose();
    fig.dispose();
  }
});

test('an undo of a sequence changed since is refused and changes nothing; bad edits throw', () => {
  const fig = mn.stickman();
  const seq = makeSeq(fig);
  const other = makeSeq(fig);
  const bvh = mn.figureFromBVH(`HIERARCHY
ROOT hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  End Site
  {
    OFFSET 0 1 0
  }
}
MOTION
Frames: 1
Frame Time: 0.1
0 0 0 0 0 0
`);
  try {
    const bvhClip = mn.createClip(bvh, { span: 1, keys: [{ frame: 0, q: bvh.restQ }] });
    const e1 = seq.slide(0, 15, 2);
    const q = seq.keyQ(1);
    q[7] += 0.25;
    seq.setKey(12, q); // the key the slide put at 12, changed after the slide
    const changed = snapshot(seq);
    assert.throws(() => seq.undo(e1), /^Error: edit: the sequence is not as this edit left it/);
    assert.ok(snapshot(seq).equals(changed), 'a refused undo changes nothing');
    assert.throws(() => other.undo(e1), /^Error: edit: expected an edit of this sequence/);
    const cases = [
      [() => seq.copy(5, 5), /^Error: range: empty/],
      [() => seq.cut(NaN, 5), /^Error: f0: expected a finite number/],
      [() => seq.delete(3, 1), /^Error: range: empty/],
      [() => seq.stretch(0, 10, 0), /^Error: factor: must be > 0/],
      [() => seq.stretch(0, 10, NaN), /^Error: factor: expected a finite number/],
      [() => seq.slide(0, 10, Infinity), /^Error: delta: expected a finite number/],
      [() => seq.paste({}, 3), /^Error: clip: expected a Clip/],
      [() => seq.paste(bvhClip, 3), /^Error: clip: its keys are states of another figure/],
      [() => mn.createClip(fig, { span: 0, keys: [] }), /^Error: clip.span: must be > 0/],
      [() => mn.createClip(fig, { span: 5, keys: [{ frame: 5, q: fig.restQ }] }), /^Error: clip.keys\[0\].frame/],
      [() => mn.createClip(fig, { span: 5, keys: [{ frame: 1, q: [1, 2] }] }), /^Error: clip.keys\[0\].q: expected/],
      [() => seq.setTargetKey(0, { frame: 0, target: [0, 0, 0] }), /^Error: constraint: out of range/],
    ];
    for (const [fn, re] of cases) assert.throws(fn, re);
    bvhClip.dispose();
    // a clip with two keys at one frame is refused in C, and nothing changes
    const twice = mn.createClip(fig, {
      span: 5,
      keys: [
        { frame: 1, q: fig.restQ },
        { frame: 1, q: fig.restQ },
      ],
    });
    assert.throws(() => seq.insert(twice, 2), /^Error: clip: refused/);
    assert.ok(snapshot(seq).equals(changed));
    twice.dispose();
    // a clip from keys, inserted
    const clip = mn.createClip(fig, {
      span: 4,
      keys: [
        { frame: 0, q: fig.restQ },
        { frame: 2.5, q: q, tcb: [0, 0.5, 0] },
      ],
    });
    const ins = seq.insert(clip, 100);
    assert.deepEqual(frames(seq).slice(-2), [100, 102.5]);
    assert.deepEqual(Array.from(seq.keyQ(seq.keyCount - 1)), Array.from(q));
    seq.undo(ins);
    assert.ok(snapshot(seq).equals(changed));
    clip.dispose();
    // edits are disposed with their sequence
    const e2 = other.delete(0, 1);
    other.dispose();
    assert.ok(e2.disposed);
    assert.throws(() => e2.added, /^Error: edit: this edit was disposed/);
  } finally {
    seq.dispose();
    other.dispose();
    bvh.dispose();
    fig.dispose();
  }
});

// The stick figure bends forward with its arms out: feet locked, the right hand on a keyed
// Catmull-Rom path (frames 3 to 14: its plain path moved 5 to 10 cm), the centre of mass kept
// over the feet from frame 15 on.
const bend = { 'torso.2': (85 * Math.PI) / 180, 'right arm.2': -Math.PI / 2, 'left arm.2': -Math.PI / 2 };
const polygon = [
  [0.15, 0, 0.12],
  [-0.15, 0, 0.12],
  [-0.15, 0, -0.08],
  [0.15, 0, -0.08],
];
const PATH = [
  [3, [0.05, 0, 0.05]],
  [7, [0.05, 0.05, 0.08]],
  [10, [0, 0.08, 0.1]],
  [14, [-0.05, 0.05, 0.05]],
];

test('animated targets and balance agree with marionette anim bake', () => {
  const { dir, cleanup } = tempDir();
  const fig = mn.stickman();
  const seq = mn.createSequence(fig, { rotation: 'squad', translation: 'linear' });
  try {
    const keys = [
      { frame: 0, pose: {} },
      { frame: 20, pose: bend },
      { frame: 30, pose: {} },
    ];
    for (const k of keys) seq.setKey(k.frame, stateOf(fig, k.pose));
    // the palm's keyed path: its plain path, moved
    const hand = fig.jointNames.indexOf('right hand');
    const palmAt = () => [0, 1, 2].map((r) => fig.frames[12 * hand + 9 + r] - 0.08 * fig.frames[12 * hand + 3 * r + 1]);
    const targetKeys = PATH.map(([f, d]) => {
      seq.sample(f);
      return { frame: f, target: palmAt().map((v, i) => v + d[i]) };
    });
    const doc = {
      figure: 'stickman',
      fps: 30,
      interpolation: { rotation: 'squad', translation: 'linear' },
      keys,
      handles: [
        { name: 'lf', joint: 'left foot' },
        { name: 'rf', joint: 'right foot' },
        { name: 'palm', joint: 'right hand', point: [0, -0.08, 0] },
        { name: 'body', type: 'com' },
      ],
      constraints: [
        { type: 'pin', handle: 'lf', lock: true },
        { type: 'pin', handle: 'rf', lock: true },
        { type: 'pin', handle: 'palm', frames: [3, 14], target_interpolation: 'catmull-rom', target_keys: targetKeys },
        { type: 'balance', handle: 'body', frames: [15, 30], polygon, up: [0, 1, 0], margin: 0.01 },
      ],
    };
    const lf = seq.addHandle({ joint: 'left foot' }),
      rf = seq.addHandle({ joint: 'right foot' });
    const palm = seq.addHandle({ joint: 'right hand', point: [0, -0.08, 0] });
    seq.addConstraint({ type: 'pin', handle: lf, lock: true });
    seq.addConstraint({ type: 'pin', handle: rf, lock: true });
    const reach = seq.addConstraint({ type: 'pin', handle: palm, start: 3, end: 14, targetInterpolation: 'catmull-rom' });
    for (const k of targetKeys) seq.setTargetKey(reach, k);
    const bal = seq.addBalance({ polygon, up: [0, 1, 0], margin: 0.01, start: 15, end: 30 });
    assert.equal(bal, 3);
    assert.equal(seq.handleCount, 4);
    assert.equal(seq.constraintCount, 4);
    assert.equal(seq.targetKeyCount(reach), 4);
    assert.deepEqual(seq.targetKey(reach, 1).position, targetKeys[1].target);
    assert.deepEqual(seq.targetAt(reach, 7).position, targetKeys[1].target);
    assert.deepEqual(seq.targetAt(reach, 0).position, targetKeys[0].target, 'constant before the first key');
    const path = join(dir, 'reach.json'),
      out = join(dir, 'reach.bvh');
    writeFileSync(path, JSON.stringify(doc));
    native(['anim', 'bake', path, '--out', out]);
    for (let f = 0; f <= 30; f++) {
      const r = seq.solveFrame(f, { maxIters: 20, tol: 1e-5, tolRot: 1e-5 });
      assert.ok(r.ok, `frame ${f}: ${r.message}`);
      const ref = JSON.parse(native(['fk', out, '--json', '--frame', String(f)]));
      const worst = bvhDistance(fig, ref);
      assert.ok(worst <= 1e-9, `frame ${f}: largest difference ${worst}`);
      if (f >= 3 && f <= 14) {
        const p = palmAt(),
          t = seq.targetAt(reach, f).position;
        assert.ok(Math.hypot(p[0] - t[0], p[1] - t[1], p[2] - t[2]) < 1e-4, `frame ${f}: palm on its path`);
      }
    }
    // balance holds the bend back: without it the pelvis stays where the keys put it
    const pelvisZ = (options) => {
      assert.ok(seq.solveFrame(20, { warmStart: false, ...options }).ok);
      return fig.positions[2];
    };
    const held = pelvisZ({}),
      free = pelvisZ({ balance: false });
    assert.ok(held < free - 0.02, `balance moves the pelvis back (${held} against ${free})`);
  } finally {
    seq.dispose();
    fig.dispose();
    cleanup();
  }
});

test('a 30 s sequence with locked feet plays frame by frame without allocating, warm-started', () => {
  const fig = mn.stickman();
  const seq = mn.createSequence(fig, { fps: 30, rotation: 'squad', translation: 'catmull-rom' });
  const crouch = {
    pelvis: { position: [0, -0.2, 0.04], rotation: [1, 0, 0, 0] },
    'right leg.2': -0.9,
    'left leg.2': -0.9,
    'right knee': 1.4,
    'left knee': 1.4,
    'right foot.1': -0.45,
    'left foot.1': -0.45,
  };
  try {
    for (let f = 0; f <= 900; f += 150) seq.setKey(f, stateOf(fig, (f / 150) % 2 ? crouch : {}));
    const feet = ['left foot', 'right foot'].map((j) => seq.addHandle({ joint: j }));
    for (const h of feet) seq.addConstraint({ type: 'pin', handle: h, start: 0, end: 900, lock: true });
    const ids = ['left foot', 'right foot'].map((j) => fig.jointNames.indexOf(j));
    seq.solveFrame(0); // the solver is built here, once
    const at0 = ids.map((j) => Array.from(fig.positions.subarray(3 * j, 3 * j + 3)));
    const run = (options) => {
      let iters = 0,
        worst = 0;
      for (let f = 0; f <= 900; f += 0.5) {
        // a 60 Hz display showing a 30 fps sequence
        const r = seq.solveFrame(f, options);
        assert.ok(r.ok, `frame ${f}: ${r.message}`);
        iters += r.iterations;
        ids.forEach((j, i) => {
          for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(fig.positions[3 * j + k] - at0[i][k]));
        });
      }
      return { iters, worst };
    };
    const before = mn.allocations().total;
    const warm = run({});
    assert.equal(mn.allocations().total, before, 'no allocation while playing');
    assert.ok(warm.worst < 1e-4, `feet stay locked (${warm.worst})`);
    const cold = run({ warmStart: false });
    assert.ok(cold.worst < 1e-4);
    assert.ok(warm.iters < cold.iters, `warm start saves iterations (${warm.iters} against ${cold.iters})`);
    // the plain in-betweens move the feet: the constraints are what keeps them
    seq.sample(75);
    const moved = ids.map((j, i) => Math.hypot(...[0, 1, 2].map((k) => fig.positions[3 * j + k] - at0[i][k])));
    assert.ok(Math.max(...moved) > 0.01, `plain in-betweens move a foot (${moved})`);
  } finally {
    seq.dispose();
    fig.dispose();
  }
});
