// The module's forward kinematics against the native build's (`marionette fk --json`) on
// every shipped figure: at rest and at random states, to 1e-12.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../marionette.mjs';
import { figures, native, tempDir, documentOf, rng, randomState, readFileSync, join } from './helpers.mjs';

const mn = await load();
const TOL = 1e-12;

function compare(fig, ref, label) {
  assert.equal(ref.joints.length, fig.jointCount, `${label}: joint count`);
  let worst = 0;
  ref.joints.forEach((j, i) => {
    assert.equal(j.name, fig.jointNames[i], `${label}: joint ${i} name`);
    for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(j.position[k] - fig.positions[3 * i + k]));
  });
  assert.ok(worst <= TOL, `${label}: largest difference ${worst}`);
}

for (const file of figures) {
  test(`fk of ${file.split('/').pop()} from its figure document`, () => {
    const { dir, cleanup } = tempDir();
    try {
      const fig = mn.figureFromDocument(documentOf(file, dir));
      try {
        compare(fig, JSON.parse(native(['fk', file, '--json'])), 'rest');
        const rand = rng(7 + fig.jointCount);
        for (let trial = 0; trial < 3; trial++) {
          const q = randomState(fig, rand);
          fig.setQ(q).fk();
          compare(fig, JSON.parse(native(['fk', file, '--json', '--q', Array.from(q).join(',')])), `state ${trial}`);
        }
      } finally {
        fig.dispose();
      }
    } finally {
      cleanup();
    }
  });
}

test('fk of BVH files read inside the module, frame by frame', () => {
  for (const file of figures.filter((f) => f.endsWith('.bvh')).slice(0, 2)) {
    const fig = mn.figureFromBVH(readFileSync(file, 'utf8'), { name: file });
    try {
      assert.ok(fig.motion.nframes > 10);
      for (const k of [0, 1, Math.floor(fig.motion.nframes / 2), fig.motion.nframes - 1]) {
        fig.setFrame(k);
        compare(fig, JSON.parse(native(['fk', file, '--json', '--frame', String(k)])), `${file} frame ${k}`);
      }
    } finally {
      fig.dispose();
    }
  }
});

test('fk of skeleton text read inside the module', () => {
  const { dir, cleanup } = tempDir();
  try {
    const path = join(dir, 'stickman.skel');
    native(['convert', 'stickman', path]);
    const fig = mn.figureFromSkeleton(readFileSync(path, 'utf8'), 'stickman.skel');
    try {
      compare(fig, JSON.parse(native(['fk', path, '--json'])), 'skel rest');
      const q = randomState(fig, rng(3));
      fig.setQ(q).fk();
      compare(fig, JSON.parse(native(['fk', path, '--json', '--q', Array.from(q).join(',')])), 'skel state');
    } finally {
      fig.dispose();
    }
  } finally {
    cleanup();
  }
});

test('the position and frame views are views of the module memory, not copies', () => {
  const fig = mn.stickman();
  try {
    const pos = fig.positions,
      frames = fig.frames;
    assert.equal(pos.length, 3 * fig.jointCount);
    assert.equal(frames.length, 12 * fig.jointCount);
    assert.equal(pos.buffer, frames.buffer);
    const before = pos[3 * 9 + 1];
    fig.q[0] += 0.5; // the root's x
    fig.fk();
    assert.equal(fig.positions, pos, 'the same view object while memory did not grow');
    assert.ok(Math.abs(pos[0] - 0.5) < 1e-15 && pos[3 * 9 + 1] === before);
    for (let j = 0; j < fig.jointCount; j++) for (let k = 0; k < 3; k++) assert.equal(frames[12 * j + 9 + k], pos[3 * j + k]);
  } finally {
    fig.dispose();
  }
});

test('a figure document without the members at their defaults reads as one that spells them out', () => {
  const short = { name: 'h', parent: 1, type: 'hinge', offset: [0.5, 0, 0], axis: [1, 0, 0] };
  const joints = [{ name: 'r', parent: -1, type: 'free' }, { name: 'b', parent: 0, type: 'ball', offset: [0, 1, 0] }, short];
  const full = joints.map((j) => ({
    offset: [0, 0, 0],
    orient: [1, 0, 0, 0],
    axis: [0, 0, 1],
    limited: false,
    range: [-Math.PI, Math.PI],
    swing: Math.PI,
    twist: [-Math.PI, Math.PI],
    mass: 0,
    com: [0, 0, 0],
    stiffness: 1,
    q0: { free: [0, 0, 0, 1, 0, 0, 0], ball: [1, 0, 0, 0], hinge: [0] }[j.type],
    rot_order: 'zxy',
    object: null,
    ...j,
  }));
  const a = mn.figureFromDocument({ format: 'marionette-figure', version: 1, joints });
  const b = mn.figureFromDocument({ format: 'marionette-figure', version: 1, joints: full });
  try {
    assert.deepEqual(Array.from(a.q), Array.from(b.q));
    const q = randomState(a, rng(11));
    a.setQ(q).fk();
    b.setQ(q).fk();
    assert.deepEqual(Array.from(a.positions), Array.from(b.positions));
    assert.deepEqual(Array.from(a.frames), Array.from(b.frames));
  } finally {
    a.dispose();
    b.dispose();
  }
});

// Figure.reroot and rerootState (docs/web.md, "Figures"; the library's mn_model_reroot and
// mn_model_reroot_state): the stick figure hung from its left hand at a random state keeps
// every joint where it was, to 1e-12, and the state maps back.
test('reroot keeps every joint where it is, and rerootState maps the state both ways', () => {
  const fig = mn.stickman();
  const rand = rng(31);
  fig.setQ(randomState(fig, rand)).fk();
  const r = fig.reroot('left hand');
  try {
    assert.equal(r.joints[0].name, 'left hand');
    assert.ok(r.jointNames.includes('left elbow~'));
    r.fk();
    let worst = 0;
    fig.jointNames.forEach((name, i) => {
      const k = r.jointNames.indexOf(name);
      assert.ok(k >= 0, name);
      for (let c = 0; c < 3; c++) worst = Math.max(worst, Math.abs(r.positions[3 * k + c] - fig.positions[3 * i + c]));
    });
    assert.ok(worst <= TOL, `largest difference ${worst}`);
    // back: the state of the stick figure that puts every joint where the hung figure has it
    const want = Float64Array.from(fig.positions);
    fig.setQ(r.rerootState(fig)).fk();
    let back = 0;
    for (let i = 0; i < want.length; i++) back = Math.max(back, Math.abs(fig.positions[i] - want[i]));
    assert.ok(back <= TOL, `back: largest difference ${back}`);
    assert.throws(() => fig.reroot('tail'), /tail/);
  } finally {
    r.dispose();
    fig.dispose();
  }
});
