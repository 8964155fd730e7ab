// A constraint system built from a document's handles and constraints by the module's scene
// reader (constraintSystemFromDocument: the editor's locks): the same solve as `marionette
// pose --scene` on the same document, and every malformed document refused with the message
// `marionette pose` prints, file, line and field. These are the cases the page's own reader of
// handles and constraints (removed) was tested with, now answered by the C reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { load, CSOLVERS } from '../marionette.mjs';
import { native, cli, tempDir, writeFileSync, join, pinsScene } from './helpers.mjs';

const mn = await load();

for (const solver of CSOLVERS)
  test(`a system read from a scene document solves as marionette pose (${solver})`, () => {
    const { dir, cleanup } = tempDir();
    const fig = mn.stickman();
    const sys = mn.constraintSystemFromDocument([fig], pinsScene, { name: 'pins.json', spareHandles: 1 });
    try {
      const path = join(dir, 'scene.json');
      writeFileSync(path, JSON.stringify(pinsScene));
      const ref = JSON.parse(native(['pose', 'stickman', '--scene', path, '--json', '--solver', solver]));
      assert.equal(sys.handleCount, pinsScene.handles.length);
      assert.equal(sys.constraintCount, pinsScene.constraints.length);
      // the drag's handle is one of the document's, by its index there
      const d = pinsScene.drags[0];
      const h = pinsScene.handles.findIndex((x) => x.name === d.handle);
      sys.drag(h, d.target, { weight: d.weight, priority: d.priority });
      const r = sys.solve({ method: solver, maxIters: 50, tol: 1e-4, tolRot: 1e-4, dragTol: 1e-4 });
      assert.equal(r.status, ref.status);
      assert.equal(r.iterations, ref.iters);
      for (let i = 0; i < fig.nq; i++) assert.ok(Math.abs(fig.q[i] - ref.q[i]) <= 1e-9, `q[${i}] ${fig.q[i]} vs ${ref.q[i]}`);
      // room for one more handle (spareHandles), then full
      sys.addHandle({ joint: 'left hand' });
      assert.throws(() => sys.addHandle({ joint: 'right hand' }), /at most/);
    } finally {
      sys.dispose();
      fig.dispose();
      cleanup();
    }
  });

test('a pin or an orientation without a target holds where its handle is; a one-axis lock holds one axis', () => {
  const fig = mn.stickman();
  const doc = {
    handles: [
      { name: 'lf', joint: 'left foot' },
      { name: 'hand frame', type: 'orientation', joint: 'left hand' },
    ],
    constraints: [
      { type: 'pin', handle: 'lf', name: 'foot' },
      { type: 'orient', handle: 'hand frame', axis: 'y', target: [Math.cos(0.4), Math.sin(0.4), 0, 0] },
    ],
  };
  const foot = fig.jointNames.indexOf('left foot'),
    hand = fig.jointNames.indexOf('left hand');
  const at = Array.from(fig.positions.subarray(3 * foot, 3 * foot + 3));
  const sys = mn.constraintSystemFromDocument([fig], doc, { spareHandles: 1 });
  try {
    const h = sys.addHandle({ joint: 'right hand' });
    sys.drag(h, [-0.4, 1.0, 0.3]);
    sys.solve({ maxIters: 200 });
    for (let k = 0; k < 3; k++) assert.ok(Math.abs(fig.positions[3 * foot + k] - at[k]) < 1e-4, 'the foot stayed');
    // the hand's y axis turned 0.4 rad about x; its other axes free (the residual is of y only)
    const y = [fig.frames[12 * hand + 1], fig.frames[12 * hand + 4], fig.frames[12 * hand + 7]];
    const want = [0, Math.cos(0.8), Math.sin(0.8)];
    assert.ok(Math.hypot(y[0] - want[0], y[1] - want[1], y[2] - want[2]) < 1e-3, `y axis ${y}`);
    assert.ok(sys.residual(1) < 1e-3);
  } finally {
    sys.dispose();
  }
  // the lock holds the y axis only: a target turned about the hand's own y axis is met as the
  // hand is, where a whole orientation lock to the same target turns the hand
  const q0 = Float64Array.from(fig.q);
  const R = Array.from(fig.frames.subarray(12 * hand, 12 * hand + 9));
  const turned = qmul(quatOfRows(R), [Math.cos(0.5), 0, Math.sin(0.5), 0]);
  const turn = (axis) => {
    const one = { type: 'orient', handle: 'f', target: turned, ...(axis ? { axis } : {}) };
    const handles = [{ name: 'f', type: 'orientation', joint: 'left hand' }];
    const s = mn.constraintSystemFromDocument([fig], { handles, constraints: [one] });
    try {
      const r = s.solve({ maxIters: 100 });
      assert.ok(r.ok && s.residual(0) < 1e-4, `${axis}: ${r.status} ${s.residual(0)}`);
      let most = 0;
      for (let k = 0; k < 9; k++) most = Math.max(most, Math.abs(fig.frames[12 * hand + k] - R[k]));
      return most;
    } finally {
      s.dispose();
      fig.q.set(q0);
      fig.fk();
    }
  };
  assert.ok(turn('y') < 1e-9, `one axis: the hand turned ${turn('y')}`);
  assert.ok(turn(null) > 0.3, `whole: the hand turned ${turn(null)}`);
  assert.ok(turn('x') > 0.3, `the x axis: the hand turned ${turn('x')}`);
  fig.dispose();
});

// The unit quaternion (w, x, y, z) of a rotation matrix given by rows (Shepperd's method).
function quatOfRows(m) {
  const t = m[0] + m[4] + m[8];
  let q;
  if (t > 0) {
    const r = Math.sqrt(1 + t) * 2;
    q = [r / 4, (m[7] - m[5]) / r, (m[2] - m[6]) / r, (m[3] - m[1]) / r];
  } else if (m[0] > m[4] && m[0] > m[8]) {
    const r = Math.sqrt(1 + m[0] - m[4] - m[8]) * 2;
    q = [(m[7] - m[5]) / r, r / 4, (m[1] + m[3]) / r, (m[2] + m[6]) / r];
  } else if (m[4] > m[8]) {
    const r = Math.sqrt(1 + m[4] - m[0] - m[8]) * 2;
    q = [(m[2] - m[6]) / r, (m[1] + m[3]) / r, r / 4, (m[5] + m[7]) / r];
  } else {
    const r = Math.sqrt(1 + m[8] - m[0] - m[4]) * 2;
    q = [(m[3] - m[1]) / r, (m[2] + m[6]) / r, (m[5] + m[7]) / r, r / 4];
  }
  return q;
}
function qmul(a, b) {
  return [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
}

// [case, document text, field]: each refused by the module as marionette pose refuses it
const pin = (c, h = [{ name: 'h', joint: 'left hand' }]) => JSON.stringify({ handles: h, constraints: [c] }, null, 2);
const malformed = [
  ['no such handle', pin({ type: 'pin', handle: 'nope', target: [0, 1, 0] }), 'constraints[0].handle'],
  [
    'no such second handle',
    pin({ type: 'equal', handle: 'h', handle2: 'nope' }, [
      { name: 'h', joint: 'left hand' },
      { name: 'g', joint: 'right hand' },
    ]),
    'constraints[0].handle2',
  ],
  ['no such joint', pin({ type: 'pin', handle: 'h', target: [0, 1, 0] }, [{ name: 'h', joint: 'left paw' }]), 'handles[0].joint'],
  ['a handle without a name', pin({ type: 'pin', handle: 'h' }, [{ joint: 'left hand' }]), 'handles[0]'],
  ['an unknown handle type', pin({ type: 'pin', handle: 'h' }, [{ name: 'h', type: 'vertex', joint: 'left hand' }]), 'handles[0].type'],
  ['an unknown constraint type', pin({ type: 'glue', handle: 'h' }), 'constraints[0].type'],
  ['a target of the wrong length', pin({ type: 'pin', handle: 'h', target: [0, 1] }), 'constraints[0].target'],
  ['a target not a number', pin({ type: 'pin', handle: 'h', target: [0, '1', 0] }), 'constraints[0].target'],
  ['a zero plane normal', pin({ type: 'plane', handle: 'h', origin: [0, 0, 0], normal: [0, 0, 0] }), 'constraints[0].normal'],
  ['a plane without origin', pin({ type: 'plane', handle: 'h', normal: [0, 1, 0] }), 'constraints[0]'],
  [
    'a member of another type',
    pin({ type: 'plane', handle: 'h', origin: [0, 0, 0], normal: [0, 1, 0], target: [0, 1, 0] }),
    'constraints[0].target',
  ],
  ['an unknown member', pin({ type: 'pin', handle: 'h', stiffness: 3 }), 'constraints[0].stiffness'],
  ['an orient on a point handle', pin({ type: 'orient', handle: 'h' }), 'constraints[0]'],
  [
    'an unknown axis',
    pin({ type: 'orient', handle: 'f', axis: 'w' }, [{ name: 'f', type: 'orientation', joint: 'head' }]),
    'constraints[0].axis',
  ],
  [
    'a duplicate handle name',
    pin({ type: 'pin', handle: 'h' }, [
      { name: 'h', joint: 'left hand' },
      { name: 'h', joint: 'right hand' },
    ]),
    'handles[1].name',
  ],
  ['a handle equal to itself', pin({ type: 'equal', handle: 'h', handle2: 'h' }), 'constraints[0].handle2'],
  ['a negative weight', pin({ type: 'pin', handle: 'h', weight: -1 }), 'constraints[0].weight'],
  ['not JSON', '{"handles": [\n  {"name": "h",, "joint": "head"}\n]}', null],
];

test('a malformed document of handles and constraints: the module says what marionette pose says, file, line and field', () => {
  const { dir, cleanup } = tempDir();
  const fig = mn.stickman();
  try {
    const live = mn.allocations().live;
    for (const [what, text, field] of malformed) {
      const path = join(dir, 'locks.json');
      writeFileSync(path, text);
      const r = spawnSync(cli, ['pose', 'stickman', '--scene', path], { encoding: 'utf8' });
      assert.notEqual(r.status, 0, `${what}: marionette pose refused it`);
      assert.throws(
        () => mn.constraintSystemFromDocument([fig], text, { name: path }),
        (e) => {
          const at = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          assert.match(e.message, new RegExp(`^${at}:\\d+: `), what);
          assert.ok(r.stderr.includes(e.message), `${what}: marionette said ${r.stderr}, the module ${e.message}`);
          if (field) assert.ok(e.message.includes(`: ${field}`), `${what}: ${e.message} names ${field}`);
          return true;
        },
      );
    }
    assert.equal(mn.allocations().live, live, 'a refused document leaves nothing allocated');
  } finally {
    fig.dispose();
    cleanup();
  }
});

test('the arguments are checked', () => {
  const fig = mn.stickman();
  try {
    assert.throws(() => mn.constraintSystemFromDocument([], pinsScene), /^Error: figures/);
    assert.throws(() => mn.constraintSystemFromDocument([fig], 42), /document/);
    assert.throws(() => mn.constraintSystemFromDocument([fig], pinsScene, { spareHandles: -1 }), /options.spareHandles/);
    // a scene of two figures given one
    assert.throws(
      () =>
        mn.constraintSystemFromDocument([fig], {
          figures: [
            { name: 'a', file: 'a.json' },
            { name: 'b', file: 'b.json' },
          ],
        }),
      /figures/,
    );
  } finally {
    fig.dispose();
  }
});
