// Sequences (the anim layer) in the module against the native build: the plain and the
// constrained in-betweens of a sequence document, baked by `marionette anim bake` to BVH
// and read back with `marionette fk --frame`, frame by frame.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../marionette.mjs';
import { native, tempDir, writeFileSync, readFileSync, join, data, stateOf, bvhDistance } from './helpers.mjs';

const mn = await load();

const doc = {
  figure: 'stickman',
  fps: 30,
  interpolation: { rotation: 'squad', translation: 'catmull-rom', joints: { 'right elbow': { rotation: 'kb' } } },
  keys: [
    { frame: 0, pose: {} },
    {
      frame: 12,
      pose: {
        pelvis: { position: [0, -0.1, 0.02], rotation: [1, 0, 0, 0] },
        'torso.2': 0.2,
        'right leg.2': -0.5,
        'left leg.2': -0.5,
        'right knee': 0.8,
        'left knee': 0.8,
        'right elbow': -0.6,
      },
      tcb: [0.3, -0.2, 0.1],
    },
    {
      frame: 20,
      pose: {
        pelvis: { position: [0.05, -0.2, 0.04], rotation: [0.995, 0, 0.0998, 0] },
        'torso.2': 0.35,
        'right leg.2': -0.9,
        'left leg.2': -0.9,
        'right knee': 1.4,
        'left knee': 1.4,
        'right foot.1': -0.45,
        'left foot.1': -0.45,
        'right elbow': -1.2,
        'right arm.1': -0.7,
      },
    },
    { frame: 30, pose: {} },
  ],
  handles: [
    { name: 'left foot', joint: 'left foot' },
    { name: 'right foot', joint: 'right foot' },
    { name: 'palm', joint: 'right hand', point: [0, -0.08, 0] },
  ],
  constraints: [
    { type: 'pin', handle: 'left foot', frames: [0, 30], lock: true },
    { type: 'pin', handle: 'right foot', frames: [0, 30], lock: true },
    { type: 'plane', handle: 'palm', frames: [8, 24], origin: [0, 0, 0.25], normal: [0, 0, 1] },
  ],
};

function build(fig) {
  const seq = mn.createSequence(fig, { fps: doc.fps, rotation: doc.interpolation.rotation, translation: doc.interpolation.translation });
  for (const [joint, modes] of Object.entries(doc.interpolation.joints)) seq.setInterpolation(modes, joint);
  for (const k of doc.keys) {
    const i = seq.setKey(k.frame, stateOf(fig, k.pose));
    if (k.tcb) seq.setKeyTCB(i, k.tcb);
  }
  const idx = {};
  for (const h of doc.handles) idx[h.name] = seq.addHandle({ joint: h.joint, point: h.point, name: h.name });
  for (const c of doc.constraints)
    seq.addConstraint({
      type: c.type,
      handle: idx[c.handle],
      start: c.frames[0],
      end: c.frames[1],
      lock: c.lock,
      origin: c.origin,
      dir: c.normal,
    });
  return seq;
}

function compare(fig, ref, label) {
  // every named joint of the figure is in the file (the compound joints' inner hinges are not)
  assert.equal(ref.joints.length, fig.jointNames.filter((n) => !/\.\d+$/.test(n)).length);
  const worst = bvhDistance(fig, ref);
  // the BVH file holds 12 decimals of degrees and 14 digits of lengths
  assert.ok(worst <= 1e-9, `${label}: largest difference ${worst}`);
}

for (const plain of [true, false]) {
  test(`${plain ? 'plain' : 'constrained'} in-betweens agree with marionette anim bake`, () => {
    const { dir, cleanup } = tempDir();
    const fig = mn.stickman();
    const seq = build(fig);
    try {
      const path = join(dir, 'seq.json'),
        bvh = join(dir, 'out.bvh');
      writeFileSync(path, JSON.stringify(doc));
      native(['anim', 'bake', path, '--out', bvh, ...(plain ? ['--plain'] : [])]);
      for (let f = 0; f <= 30; f++) {
        if (plain) seq.sample(f);
        else {
          const r = seq.solveFrame(f, { maxIters: 20, tol: 1e-5, tolRot: 1e-5 });
          assert.ok(r.ok, `frame ${f}: ${r.message}`);
        }
        if (f % 3 === 0 || (f >= 8 && f <= 24 && f % 2 === 0))
          compare(fig, JSON.parse(native(['fk', bvh, '--json', '--frame', String(f)])), `frame ${f}`);
      }
      if (!plain) {
        // the locked feet stay where they stood at frame 0
        const lf = fig.jointNames.indexOf('left foot');
        seq.solveFrame(20);
        const at20 = Array.from(fig.positions.subarray(3 * lf, 3 * lf + 3));
        fig.reset().fk();
        const rest = Array.from(fig.positions.subarray(3 * lf, 3 * lf + 3));
        for (let k = 0; k < 3; k++) assert.ok(Math.abs(at20[k] - rest[k]) < 1e-4);
      }
    } finally {
      seq.dispose();
      fig.dispose();
      cleanup();
    }
  });
}

test('sequences: keys from a motion, sampling into a state, refusals', () => {
  const fig = mn.figureFromBVH(readFileSync(join(data, 'mocap/cmu_motionbuilder/cmu_02_01_walk.bvh'), 'utf8'), { scale: 0.056444 });
  const seq = mn.createSequence(fig, { fps: 1 / fig.motion.frameTime, rotation: 'squad', translation: 'catmull-rom' });
  try {
    const every = seq.addMotion(fig.motion.frames);
    assert.equal(every.keys, fig.motion.nframes);
    assert.equal(seq.keyCount, fig.motion.nframes);
    // every key is the take's frame, so sampling at a key reproduces it
    const q = seq.sampleQ(17);
    const frame = fig.motion.frames.subarray(17 * fig.nq, 18 * fig.nq);
    for (let i = 0; i < fig.nq; i++) assert.ok(Math.abs(q[i] - frame[i]) < 1e-12);
    const reduced = mn.createSequence(fig, { fps: 120, rotation: 'squad', translation: 'catmull-rom' });
    try {
      const r = reduced.addMotion(fig.motion.frames, { tol: 0.01 });
      assert.ok(r.keys > 2 && r.keys < fig.motion.nframes / 2 && r.maxError <= 0.01, JSON.stringify(r));
      assert.equal(reduced.start, 0);
      assert.equal(reduced.end, fig.motion.nframes - 1);
    } finally {
      reduced.dispose();
    }
    assert.throws(() => seq.sample(NaN), /^Error: frame: expected a finite number/);
    assert.throws(() => seq.setKey(0, [1, 2]), /^Error: q: expected/);
    assert.throws(() => seq.setInterpolation({ translation: 'slerp' }), /modes/);
    assert.throws(() => seq.setInterpolation({ rotation: 'bezier' }), /modes.rotation: expected one of/);
    assert.throws(() => seq.removeKey(1e6), /key: out of range/);
    assert.throws(() => seq.addConstraint({ type: 'pin', handle: 0 }), /constraint.handle: out of range/);
    assert.throws(() => mn.createSequence(fig, { fps: 0 }), /options.fps/);
    assert.throws(() => fig.dispose(), /still used/);
    const empty = mn.createSequence(fig);
    assert.throws(() => empty.sample(0), /frame/);
    empty.dispose();
  } finally {
    seq.dispose();
    fig.dispose();
  }
});
