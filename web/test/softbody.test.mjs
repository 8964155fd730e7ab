// Soft bodies in the module, coupled both ways to a rig (Wu & Umetani 2023), against what
// the library's own tests assert natively (tests/skin/test_coupling.c): the complementary
// constraint holds after every step, a driven controller moves the body and the body moves
// the free ones, grabs hold, the plane stays the plane, nothing allocates in a step, and
// bad arguments are refused with their name. CesiumMan's skin comes from the native build
// (`marionette convert`) and is transferred to the lattice of tetrahedra that embeds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../marionette.mjs';
import { documentOf, tempDir, data, join } from './helpers.mjs';
import { boxSurface, barSkin, makeBar, rotZ } from './softbody-fixtures.mjs';

const mn = await load();
const DT = 1 / 60;

function centroid(sb) {
  const x = sb.positions(),
    m = sb.masses(),
    c = [0, 0, 0];
  let M = 0;
  for (let i = 0; i < m.length; i++) {
    for (let k = 0; k < 3; k++) c[k] += m[i] * x[3 * i + k];
    M += m[i];
  }
  return c.map((v) => v / M);
}
function allFinite(a) {
  for (const v of a) if (!Number.isFinite(v)) return false;
  return true;
}

test('the bar: the complementary constraint holds after every step, no step allocates, the free bones hang with the body', () => {
  // test_residual_and_follow: 2 m bar, resolution 10, 4 bones, the root swung then held
  const sb = makeBar(mn, [2, 0.2, 0.2], 10, 4, { edgeCompliance: 1e-5, damping: 5 });
  try {
    assert.equal(sb.controllerCount, 4);
    assert.deepEqual(sb.driven, [true, false, false, false]);
    let worst = 0,
      r;
    const before = mn.allocations().total;
    for (let t = 1; t <= 120; t++) {
      const P = sb.poses();
      sb.drive(0, [...rotZ(t <= 60 ? 0.4 * Math.sin((2 * Math.PI * t) / 60) : 0), P[9], P[10], P[11]]);
      r = sb.step(DT);
      assert.ok(r.ok, r.message);
      assert.equal(r.substeps, 5);
      assert.ok(r.fitIterations >= 5);
      worst = Math.max(worst, r.residual);
    }
    assert.equal(mn.allocations().total, before, 'no allocation in 120 steps');
    assert.ok(worst < 1e-12, `worst residual ${worst}`);
    assert.equal(sb.residual(), r.residual);
    assert.ok(allFinite(sb.positions()));
    // the far end sags in the plane of the swing, has nearly settled, and the last bone's
    // tail is there too
    const x = sb.positions(),
      rest = sb.restPositions(),
      end = [0, 0, 0];
    let ne = 0;
    for (let i = 0; i < sb.vertexCount; i++) {
      if (rest[3 * i] > 1.99) {
        for (let k = 0; k < 3; k++) end[k] += x[3 * i + k];
        ne++;
      }
    }
    for (let k = 0; k < 3; k++) end[k] /= ne;
    const P = sb.poses(),
      R = P.subarray(36, 45);
    const tail = [P[45] + R[0] * 0.5, P[46] + R[3] * 0.5, P[47] + R[6] * 0.5];
    assert.ok(end[1] < -0.05, `sags: ${end[1]}`);
    assert.ok(Math.abs(end[2]) < 0.05);
    assert.ok(r.maxSpeed < 0.5, `settles: ${r.maxSpeed}`);
    assert.ok(Math.hypot(tail[0] - end[0], tail[1] - end[1], tail[2] - end[2]) < 0.1);
    // every part timed
    for (const k of ['sim', 'fit', 'couple', 'surface', 'total']) assert.ok(r.us[k] >= 0, k);
    assert.ok(r.us.total >= r.us.sim);
  } finally {
    sb.dispose();
  }
});

test('both ways: a driven controller moves the body, a falling body takes its free controllers along', () => {
  // test_two_way: no gravity, the root raised 0.5 m
  let sb = makeBar(mn, [1, 0.2, 0.2], 5, 2, { gravity: [0, 0, 0], damping: 2 });
  try {
    const c0 = centroid(sb);
    for (let t = 1; t <= 120; t++) {
      const P = sb.poses();
      sb.drive('b0', { R: P.subarray(0, 9), p: [P[9], 0.5 * Math.min(1, t / 30), P[11]] });
      assert.ok(sb.step(DT).ok);
    }
    const c1 = centroid(sb);
    assert.ok(Math.abs(c1[1] - c0[1] - 0.5) < 0.01, `the body moved ${c1[1] - c0[1]}`);
    assert.ok(Math.abs(sb.poses()[12 + 10] - 0.5) < 0.01, 'the free bone came along');
  } finally {
    sb.dispose();
  }
  // every controller free: the body falls and the rig follows it
  sb = mn.createSoftBody({ ...boxSurface([0, -0.1, -0.1], [1, 0.1, 0.1]), resolution: 5, density: 100, damping: 0.5 });
  const rig = mn.createRig(barSkin(sb.restPositions(), 0, 1, 2));
  try {
    sb.couple(rig, { over: 'nodes' });
    for (let t = 1; t <= 30; t++) assert.ok(sb.step(DT).ok);
    const c = centroid(sb);
    assert.ok(c[1] < -0.9 * 0.5 * 9.81 * 0.25, `fell ${c[1]}`);
    assert.ok(Math.abs(sb.poses()[10] - c[1]) < 0.02);
    // setDriven: pinned where it is, the root holds while the rest keeps falling
    sb.setDriven(0, true);
    assert.deepEqual(sb.driven, [true, false]);
    const y0 = sb.poses()[10];
    for (let t = 1; t <= 10; t++) assert.ok(sb.step(DT).ok);
    assert.ok(Math.abs(sb.poses()[10] - y0) < 1e-9, 'a pinned controller stays');
    // falling at 4.9 m/s when pinned, it would have fallen 0.8 m more: the pin holds it
    assert.ok(Math.abs(centroid(sb)[1] - c[1]) < 0.1, `the pinned root holds the body: ${centroid(sb)[1]} vs ${c[1]}`);
    sb.setDriven('b0', false);
    assert.throws(() => sb.drive(0, sb.posesCopy().subarray(0, 12)), /controller: b0 is free/);
  } finally {
    rig.dispose();
    sb.dispose();
  }
});

test('a grab holds its vertex at the target; released, the body falls; reset is the rest state', () => {
  const sb = makeBar(mn, [2, 0.2, 0.2], 20, 2);
  try {
    sb.setDriven(0, false);
    const x = sb.positions(),
      target = [x[0], x[1] + 0.3, x[2]];
    sb.grab(0, target);
    assert.equal(sb.grabCount, 1);
    for (let t = 0; t < 30; t++) assert.ok(sb.step(DT).ok);
    // the grab is projected before the complementary constraint, so it holds to a mm or so
    assert.ok(Math.abs(sb.positions()[1] - target[1]) < 2e-3, `held at ${sb.positions()[1]}`);
    assert.ok(centroid(sb)[1] < target[1] - 0.05, 'the rest hangs below');
    assert.ok(sb.residual() < 1e-12);
    // the nearest vertices of a point, nearest first
    const near = sb.nearest(target, 3);
    assert.equal(near[0], 0);
    sb.release();
    assert.equal(sb.grabCount, 0);
    const y0 = centroid(sb)[1];
    for (let t = 0; t < 10; t++) sb.step(DT);
    assert.ok(centroid(sb)[1] < y0 - 0.05);
    sb.reset();
    assert.deepEqual(Array.from(sb.positions()), Array.from(sb.restPositions()));
    assert.ok(sb.velocities().every((v) => v === 0));
    assert.throws(() => sb.grab(sb.vertexCount, target), /vertex: out of range/);
    assert.throws(() => sb.grab(0, [0, NaN, 0]), /target\[1\]: expected a finite number/);
    for (let i = 0; i < 64; i++) sb.grab(i, target, 1e-3);
    assert.throws(() => sb.grab(64, target), /at most 64 vertices/);
  } finally {
    sb.dispose();
  }
});

test('in the plane: the driven point turns and the body and the free point follow, all in the plane', () => {
  // test_plane: a strip of 11 x 3 vertices, two point controllers
  const NX = 11,
    NY = 3,
    vertices = [],
    triangles = [];
  for (let y = 0; y < NY; y++) for (let x = 0; x < NX; x++) vertices.push(0.2 * x, 0.1 * y - 0.1);
  for (let y = 0; y + 1 < NY; y++) {
    for (let x = 0; x + 1 < NX; x++) {
      const a = y * NX + x,
        b = a + 1,
        c = a + NX,
        d = c + 1;
      triangles.push(a, b, d, a, d, c);
    }
  }
  const sb = mn.createSoftBody({ dim: 2, vertices, triangles, edgeCompliance: 1e-5, substeps: 5, density: 1 });
  const n = NX * NY,
    weightIndex = [],
    weight = [];
  for (let i = 0; i < n; i++) {
    const s = Math.min(1, Math.max(0, (vertices[2 * i] - 0.4) / 1.2));
    weightIndex.push(0, 1);
    weight.push(1 - s, s);
  }
  const rig = mn.createRig({
    dim: 2,
    vertices,
    influences: 2,
    weightIndex,
    weight,
    controllers: [
      { name: 'left', pivot: [0.3, 0, 0] },
      { name: 'right', pivot: [1.7, 0, 0] },
    ],
  });
  try {
    assert.equal(sb.corners, 3);
    assert.equal(sb.elementCount, 40);
    sb.couple(rig, { driven: ['left'] });
    rig.dispose();
    let worst = 0;
    for (let t = 1; t <= 60; t++) {
      const P = sb.poses();
      sb.drive('left', [...rotZ(0.5 * Math.min(1, t / 30)), P[9], P[10], P[11]]);
      const r = sb.step(DT);
      assert.ok(r.ok, r.message);
      worst = Math.max(worst, r.residual);
    }
    assert.ok(worst < 1e-12, `worst residual ${worst}`);
    const x = sb.positions();
    for (let i = 0; i < n; i++) assert.equal(x[3 * i + 2], 0);
    const P = sb.poses();
    assert.deepEqual([P[14], P[17], P[18], P[19], P[20]], [0, 0, 0, 0, 1]);
    assert.ok(P[12 + 10] > 0.2, `the right end rose: ${P[22]}`);
  } finally {
    rig.dispose();
    sb.dispose();
  }
});

test('CesiumMan: the skin the native build reads, transferred to the lattice; the root bone moves the flesh', () => {
  const { dir, cleanup } = tempDir();
  let sb = null,
    rig = null;
  try {
    const fig = mn.figureFromDocument(documentOf(join(data, 'skinned', 'CesiumMan.glb'), dir));
    const skin = fig.skin;
    fig.dispose();
    sb = mn.createSoftBody({ vertices: skin.vertices, triangles: skin.triangles, resolution: 12, gravity: [0, 0, 0] });
    assert.equal(sb.surfaceCount, skin.vertices.length / 3);
    assert.equal(sb.corners, 4);
    assert.ok(sb.vertexCount > 100 && sb.vertexCount < 3000, `${sb.vertexCount} nodes`);
    // the embedded surface is the character's at rest
    const s0 = sb.surfaceCopy();
    for (let i = 0; i < s0.length; i++) assert.ok(Math.abs(s0[i] - skin.vertices[i]) < 1e-9);
    rig = mn.createRig(skin);
    sb.couple(rig, { driven: [0] });
    assert.equal(sb.controllerCount, 19);
    let worst = 0;
    const P0 = sb.posesCopy();
    for (let t = 1; t <= 60; t++) {
      sb.drive(0, [...P0.subarray(0, 9), P0[9] + 0.2 * Math.min(1, t / 20), P0[10], P0[11]]);
      const r = sb.step(DT);
      assert.ok(r.ok, r.message);
      worst = Math.max(worst, r.residual);
    }
    assert.ok(worst < 1e-12, `worst residual ${worst}`);
    // the surface came along 0.2 m in x (no gravity: the driven root alone moved it)
    const s1 = sb.surface();
    let dx = 0;
    for (let i = 0; i < s1.length; i += 3) dx += s1[i] - s0[i];
    dx /= s1.length / 3;
    assert.ok(Math.abs(dx - 0.2) < 0.02, `the surface moved ${dx}`);
    assert.ok(allFinite(s1));
    // a rig of the wrong size is refused
    const bar = mn.createRig(barSkin([0, 0, 0, 1, 0, 0, 2, 0, 0], 0, 2, 2));
    assert.throws(() => sb.couple(bar), /vertex count is not the surface's/);
    bar.dispose();
  } finally {
    sb?.dispose();
    rig?.dispose();
    cleanup();
  }
});

test('a controller thrown 1 m back and forth every frame never leaves a non-finite state', () => {
  const sb = makeBar(mn, [2, 0.2, 0.2], 10, 4);
  try {
    sb.setDriven(0, false);
    sb.setDriven(1, true);
    for (let t = 1; t <= 100; t++) {
      const P = sb.posesCopy();
      const a = t % 2 ? 1.5 : -1.5,
        c = Math.cos(a),
        s = Math.sin(a);
      sb.drive(1, [c, 0, s, 0, 1, 0, -s, 0, c, P[21] + (t % 2 ? 1 : -1), P[22] + (t % 3 ? 1 : -1), P[23]]);
      const r = sb.step(DT);
      assert.ok(r.ok || (r.status === 'NOCONVERGE' && r.message), r.message);
      assert.ok(allFinite(sb.positions()) && allFinite(sb.velocities()) && allFinite(sb.poses()));
    }
  } finally {
    sb.dispose();
  }
});

test('bad bodies and arguments are refused with their name', () => {
  const box = boxSurface([0, 0, 0], [1, 1, 1]);
  assert.throws(() => mn.createSoftBody({ ...box, resolution: 0 }), /body.resolution: out of range/);
  assert.throws(() => mn.createSoftBody({ ...box, triangles: [0, 1, 8] }), /body.triangles\[2\]: out of range/);
  assert.throws(() => mn.createSoftBody({ ...box, density: 0 }), /body.density: must be > 0/);
  assert.throws(
    () => mn.createSoftBody({ ...box, vertices: [0, 0, NaN, ...box.vertices.slice(3)] }),
    /body.vertices\[2\]: expected a finite number/,
  );
  assert.throws(() => mn.createSoftBody({ dim: 2, vertices: [0, 0, 1, 0, 2, 0], triangles: [0, 1, 2] }), /degenerate/);
  const sb = mn.createSoftBody({ ...box, resolution: 2 });
  try {
    assert.ok(Number.isNaN(sb.residual()), 'not coupled');
    assert.ok(sb.step(DT).ok, 'an uncoupled body steps');
    assert.equal(sb.step(-1).status, 'ARG');
    assert.throws(() => sb.drive(0, new Array(12).fill(0)), /controller: no controller 0/);
  } finally {
    sb.dispose();
  }
  assert.throws(() => sb.step(), /soft body: this soft body was disposed/);
});

test('malformed soft bodies and couplings: a table, each refused with the argument it names', () => {
  const box = boxSurface([0, 0, 0], [1, 1, 1]);
  const rows = [
    [{ ...box, dim: 4 }, /body.dim: out of range/],
    [{ ...box, vertices: box.vertices.slice(0, 23) }, /body.vertices: expected nverts x 3 numbers/],
    [{ dim: 2, vertices: [0, 0, 1, 0, 0], triangles: [0, 1, 2] }, /body.vertices: expected nverts x 2 numbers/],
    [{ ...box, triangles: [0, 1] }, /body.triangles: expected ntris x 3 integers/],
    [{ ...box, triangles: [0, 1, 2.5] }, /body.triangles\[2\]: expected an integer/],
    [{ ...box, triangles: [0, 1, -1] }, /body.triangles\[2\]: out of range/],
    [{ ...box, resolution: 257 }, /body.resolution: out of range/],
    [{ ...box, substeps: 0 }, /body.substeps: out of range/],
    [{ ...box, edgeCompliance: -1 }, /body: compliances and damping must be >= 0/],
    [{ ...box, gravity: [0, NaN, 0] }, /body.gravity\[1\]: expected a finite number/],
    [{ ...box, ground: 'low' }, /body.ground: expected a finite number/],
    [{ ...box, density: Infinity }, /body.density: expected a finite number/],
    [null, /body: expected an object/],
  ];
  for (const [def, re] of rows) assert.throws(() => mn.createSoftBody(def), re, JSON.stringify(def)?.slice(0, 60));
  const sb = mn.createSoftBody({ ...box, resolution: 2 });
  const rig2 = mn.createRig({
    dim: 2,
    vertices: [0, 0, 1, 0, 0, 1],
    influences: 1,
    weightIndex: [0, 0, 0],
    weight: [1, 1, 1],
    controllers: [{ name: 'a', pivot: [0, 0, 0] }],
  });
  const rig3 = mn.createRig({
    dim: 3,
    vertices: box.vertices,
    influences: 1,
    weightIndex: new Array(8).fill(0),
    weight: new Array(8).fill(1),
    controllers: [{ name: 'a', pivot: [0.5, 0.5, 0.5] }],
  });
  try {
    assert.throws(() => sb.couple(rig2), /rig: its dimension is not the body's/);
    assert.throws(() => sb.couple(rig3, { driven: ['b'] }), /options.driven\[0\]: no controller b/);
    assert.throws(() => sb.couple(rig3, { over: 'lattice' }), /options.over: expected 'surface' or 'nodes'/);
    assert.throws(() => sb.couple(rig3, { over: 'nodes' }), /its vertex count is not the body's/);
    assert.throws(() => sb.couple(rig3, { fitIterations: 0 }), /options.fitIterations: out of range/);
    assert.throws(() => sb.couple({}), /rig: not a rig of this module/);
    sb.couple(rig3, { driven: ['a'] });
    assert.throws(() => sb.drive('a', [1, 0, 0]), /pose: expected 12 numbers/);
    assert.throws(() => sb.drive('a', { R: [1, 0, 0, 0, 1, 0, 0, 0, 1], p: [0, NaN, 0] }), /pose.p\[1\]: expected a finite number/);
    assert.throws(() => sb.setDriven('a', 1), /on: expected true or false/);
    assert.throws(() => sb.release(-2), /vertex: out of range/);
    assert.throws(() => sb.nearest([0, 0], 1), /point: expected 3 numbers/);
    assert.ok(sb.step(DT).ok, 'the body still steps after the refusals');
  } finally {
    rig2.dispose();
    rig3.dispose();
    sb.dispose();
  }
});

test('a thousand soft bodies made, coupled, stepped and disposed leave no memory behind', () => {
  const box = boxSurface([0, 0, 0], [1, 0.5, 0.5]);
  const once = () => {
    const sb = mn.createSoftBody({ ...box, resolution: 3 });
    const rig = mn.createRig(barSkin(sb.restPositions(), 0, 1, 2));
    sb.couple(rig, { over: 'nodes', driven: [0] });
    rig.dispose();
    sb.grab(0, [0, 0, 0]);
    sb.step(DT);
    sb.reset();
    sb.dispose();
  };
  once();
  const live = mn.allocations().live,
    bytes = mn.memoryBytes();
  for (let i = 0; i < 1000; i++) once();
  assert.equal(mn.allocations().live, live);
  assert.equal(mn.memoryBytes(), bytes);
});
