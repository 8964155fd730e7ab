// The constraint system in the module against the native build (`marionette pose --scene
// --json`) on the same scene: pins, an orientation, a drag; every solver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load, CSOLVERS } from '../marionette.mjs';
import { native, tempDir, writeFileSync, join, pinsScene } from './helpers.mjs';

const mn = await load();

const scene1 = pinsScene;

// hands together, the centre of mass over the feet, the head on a line
const scene2 = {
  handles: [
    { name: 'lf', joint: 'left foot' },
    { name: 'rf', joint: 'right foot' },
    { name: 'lh', joint: 'left hand' },
    { name: 'rh', joint: 'right hand' },
    { name: 'body', type: 'com' },
    { name: 'head', joint: 'head' },
  ],
  constraints: [
    { type: 'pin', handle: 'lf', target: [0.1, 0.05, 0] },
    { type: 'pin', handle: 'rf', target: [-0.1, 0.05, 0] },
    { type: 'equal', handle: 'lh', handle2: 'rh' },
    {
      type: 'balance',
      handle: 'body',
      polygon: [
        [-0.2, 0, -0.1],
        [0.2, 0, -0.1],
        [0.2, 0, 0.15],
        [-0.2, 0, 0.15],
      ],
      up: [0, 1, 0],
      margin: 0.02,
    },
    { type: 'line', handle: 'head', origin: [0, 0, 0], direction: [0, 1, 0.2] },
  ],
  drags: [{ handle: 'lh', target: [0, 1.1, 0.35], weight: 1, priority: 1 }],
  frames: 1,
};

for (const [sceneName, scene] of [
  ['pins, orientation, plane', scene1],
  ['equal, balance, line', scene2],
])
  for (const solver of CSOLVERS) {
    test(`constraint solve (${solver}; ${sceneName}) agrees with the native build`, () => {
      const { dir, cleanup } = tempDir();
      const fig = mn.stickman();
      const sys = mn.createConstraintSystem([fig]);
      try {
        const path = join(dir, 'scene.json');
        writeFileSync(path, JSON.stringify(scene));
        const ref = JSON.parse(native(['pose', 'stickman', '--scene', path, '--json', '--solver', solver]));
        const idx = {};
        for (const h of scene.handles)
          idx[h.name] = sys.addHandle({ type: h.type ?? 'point', joint: h.joint ?? -1, point: h.point, name: h.name });
        for (const c of scene.constraints) {
          sys.addConstraint({
            type: c.type,
            handle: idx[c.handle],
            target: c.type === 'pin' ? c.target : undefined,
            targetRotation: c.type === 'orient' ? c.target : undefined,
            origin: c.origin,
            dir: c.normal ?? c.direction,
            handle2: c.handle2 === undefined ? undefined : idx[c.handle2],
            polygon: c.polygon,
            up: c.up,
            margin: c.margin,
          });
        }
        for (const d of scene.drags) sys.drag(idx[d.handle], d.target, { weight: d.weight, priority: d.priority });
        const r = sys.solve({ method: solver, maxIters: 50, tol: 1e-4, tolRot: 1e-4, dragTol: 1e-4 });
        assert.equal(r.status, ref.status);
        assert.equal(r.iterations, ref.iters);
        assert.equal(fig.nq, ref.q.length);
        for (let i = 0; i < fig.nq; i++) assert.ok(Math.abs(fig.q[i] - ref.q[i]) <= 1e-9, `q[${i}] ${fig.q[i]} vs ${ref.q[i]}`);
        // the positions view follows the solve
        const foot = fig.jointNames.indexOf('left foot'),
          pin = sys.handleValue(idx.lf).position; // a view of the solve
        for (let k = 0; k < 3; k++) assert.ok(Math.abs(fig.positions[3 * foot + k] - pin[k]) < 1e-12);
        if (r.ok) for (let c = 0; c < sys.constraintCount; c++) assert.ok(sys.residual(c) <= 1e-3);
        else assert.ok(r.message.length > 0);
        const dragged = scene.drags[0].handle;
        assert.ok(Math.abs(sys.dragError(idx[dragged]) - ref.max_drag_error) <= 1e-6 * Math.max(1, ref.max_drag_error));
      } finally {
        sys.dispose();
        fig.dispose();
        cleanup();
      }
    });
  }

test('a figure in use by a system cannot be disposed first; edits are checked', () => {
  const fig = mn.stickman();
  const sys = mn.createConstraintSystem([fig]);
  const h = sys.addHandle({ joint: 'left hand' });
  const c = sys.addConstraint({ type: 'pin', handle: h, target: [0, 1, 0] });
  assert.throws(() => fig.dispose(), /figure: still used/);
  assert.throws(() => sys.setTarget(c, [0, NaN, 0]), /^Error: target\[1\]/);
  assert.throws(() => sys.setWeight(c, -1), /weight/);
  assert.throws(() => sys.setTarget(5, [0, 0, 0]), /constraint: out of range/);
  assert.throws(() => sys.addConstraint({ type: 'orient', handle: h }), /handle/);
  assert.throws(() => sys.addHandle({ joint: 'tail' }), /handle.joint: no joint named 'tail'/);
  assert.throws(() => sys.drag(h, [0, 0]), /target: expected 3 numbers/);
  assert.throws(() => sys.solve({ method: 'magic' }), /options.method/);
  sys.setTarget(c, [0.2, 1.2, 0.1]);
  assert.ok(sys.solve().maxViolation < 1e-3);
  // a second pin that conflicts: flagged unmet; switching it off restores a clean solve
  const h2 = sys.addHandle({ joint: 'left hand', point: [0, 0, 0] });
  const c2 = sys.addConstraint({ type: 'pin', handle: h2, target: [-0.5, 0.2, 0.4] });
  const bad = sys.solve();
  assert.notEqual(bad.status, 'OK');
  assert.ok(sys.unmet(c) || sys.unmet(c2));
  sys.setEnabled(c2, false);
  assert.equal(sys.solve().status, 'OK');
  // drags by orientation and force, then release
  const head = sys.addHandle({ type: 'orientation', joint: 'head' });
  sys.dragRotation(head, [Math.cos(0.2), 0, Math.sin(0.2), 0]);
  sys.solve();
  assert.ok(sys.dragError(head) < 0.2);
  sys.release(head);
  assert.equal(sys.dragError(head), 0);
  assert.throws(() => sys.dragRotation(head, [0, 0, 0, 0]), /targetRotation/);
  sys.dispose();
  fig.dispose();
  assert.throws(() => fig.fk(), /figure: this figure was disposed/);
});

// Per-joint mobility and one-axis orientation locks (the editor's drag modes, weights and
// partial locks, Welman 6.2, 6.3): the same behaviour as the native tests, and the native
// pose command on a scene with an axis lock.
test('a frozen joint does not move under any solver; axis locks hold one direction', () => {
  for (const method of CSOLVERS) {
    const fig = mn.stickman().fk();
    const sys = mn.createConstraintSystem([fig]);
    const lf = sys.addHandle({ joint: 'left foot', name: 'lf' });
    sys.addConstraint({ type: 'pin', handle: lf, target: sys.handleValue(lf).position });
    const sole = sys.addHandle({ type: 'orientation', joint: 'right foot' });
    const R = sys.handleValue(sole).rotation; // row-major
    const yAxis = [R[1], R[4], R[7]];
    // the target: the foot's frame now (w, x, y, z from R)
    const w = Math.sqrt(Math.max(0, 1 + R[0] + R[4] + R[8])) / 2;
    const qt = [w, (R[7] - R[5]) / (4 * w), (R[2] - R[6]) / (4 * w), (R[3] - R[1]) / (4 * w)];
    sys.addConstraint({ type: 'orient', handle: sole, targetRotation: qt, axis: 'y' });
    const hand = sys.addHandle({ joint: 'right hand' });
    assert.equal(sys.jointScale('pelvis'), 1);
    sys.setJointScale('pelvis', 0).setJointScale('torso.1', 0).setJointScale('torso.2', 0).setJointScale('torso', 0);
    assert.equal(sys.jointScale('pelvis'), 0);
    const q0 = Float64Array.from(fig.q);
    const p = sys.handleValue(hand).position;
    sys.drag(hand, [p[0] + 0.1, p[1] + 0.15, p[2] + 0.1]);
    for (let i = 0; i < 5; i++) sys.solve({ method });
    const pelvis = fig.joints[fig.joint('pelvis')],
      torso = fig.joints[fig.joint('torso.2')];
    for (let k = 0; k < 7; k++) assert.equal(fig.q[pelvis.qadr + k], q0[pelvis.qadr + k], `${method} pelvis`);
    assert.equal(fig.q[torso.qadr], q0[torso.qadr], `${method} torso`);
    const elbow = fig.joints[fig.joint('right elbow')];
    assert.ok(Math.abs(fig.q[elbow.qadr] - q0[elbow.qadr]) > 1e-3, `${method}: the arm took the drag`);
    assert.ok(sys.residual(0) < 2e-3, `${method} pin ${sys.residual(0)}`);
    const R2 = sys.handleValue(sole).rotation;
    const dot = R2[1] * yAxis[0] + R2[4] * yAxis[1] + R2[7] * yAxis[2];
    assert.ok(dot > 1 - 1e-5, `${method}: the sole's y axis held (${dot})`);
    sys.resetJointScales();
    assert.equal(sys.jointScale('pelvis'), 1);
    assert.throws(() => sys.setJointScale('pelvis', -1), /^Error: scale/);
    assert.throws(() => sys.setJointScale('nosuch', 1), /joint/);
    assert.throws(() => sys.addConstraint({ type: 'orient', handle: sole, axis: 'w' }), /constraint.axis/);
    assert.throws(() => sys.addConstraint({ type: 'pin', handle: lf, axis: 'x' }), /axis/);
    sys.dispose();
    fig.dispose();
  }
});

// the dragged arm free (weight 0), the spine eight times as stiff toward rest as the legs (the
// editor's drag: posing.js)
test('comfort: a long hand pull with both feet pinned keeps the spine nearer rest; the pins hold', () => {
  const spine = ['torso.1', 'torso.2', 'torso'];
  const run = (method, comfort) => {
    const fig = mn.stickman().fk();
    const rest = Float64Array.from(fig.q);
    const sys = mn.createConstraintSystem([fig]);
    const pins = ['left foot', 'right foot'].map((j) => {
      const h = sys.addHandle({ joint: j });
      return sys.addConstraint({ type: 'pin', handle: h, target: sys.handleValue(h).position });
    });
    const hand = sys.addHandle({ joint: 'right hand' });
    if (comfort) {
      sys.setComfort(comfort);
      for (const j of ['right arm.1', 'right arm.2', 'right arm', 'right elbow']) sys.setComfortWeight(j, 0);
      for (const j of spine) sys.setComfortWeight(j, 8);
    }
    const p = sys.handleValue(hand).position;
    let worst = 0;
    for (let f = 1; f <= 60; f++) {
      const t = f / 60;
      sys.drag(hand, [p[0] - 0.6 * t, p[1] + 0.2 * t, p[2] + 0.3 * t]);
      sys.solve({ method, tol: 1e-5 });
      for (const c of pins) worst = Math.max(worst, sys.residual(c));
    }
    const dev = Math.hypot(...spine.map((j) => fig.q[fig.joints[fig.joint(j)].qadr] - rest[fig.joints[fig.joint(j)].qadr]));
    const err = sys.dragError(hand);
    sys.dispose();
    fig.dispose();
    return { dev, worst, err };
  };
  for (const method of ['lagrange', 'dls']) {
    const off = run(method, null),
      on = run(method, { gain: 0.1 });
    assert.ok(off.dev > 0.05, `${method}: the pull bent the spine (${off.dev})`);
    assert.ok(on.dev < 0.8 * off.dev, `${method}: spine ${on.dev} with comfort, ${off.dev} without`);
    assert.ok(on.worst < 1e-5, `${method}: pins ${on.worst}`);
    assert.ok(on.err < off.err + 0.01, `${method}: hand ${on.err} against ${off.err}`);
  }
  const sys = mn.createConstraintSystem([mn.stickman()]);
  assert.throws(() => sys.setComfort({ gain: 2 }), /comfort.gain/);
  assert.throws(() => sys.setComfort({ limitMargin: -1 }), /comfort.limitMargin/);
  assert.throws(() => sys.setRest([1, 2]), /rest/);
  assert.throws(() => sys.setComfortWeight('torso', -1), /weight/);
  assert.throws(() => sys.setComfortWeight('nosuch', 1), /joint/);
  sys.setComfort().setComfort(null).setRest(null);
  sys.dispose();
});

test('a target out of reach of any number: the solve throws instead of reporting Infinity', () => {
  const fig = mn.stickman();
  const sys = mn.createConstraintSystem([fig]);
  try {
    const h = sys.addHandle({ joint: 'left foot' });
    sys.addConstraint({ type: 'pin', handle: h, target: [1e300, 0, 0] });
    for (const method of CSOLVERS) {
      assert.throws(() => sys.solve({ method }), /maxViolation: Infinity: the constraints cannot be measured/);
    }
  } finally {
    sys.dispose();
    fig.dispose();
  }
});
