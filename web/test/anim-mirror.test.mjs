// Mirroring a pose left to right (web/editor/src/anim/mirror.js): joint pairs from names,
// the value mapping from the figure's own axes and rest frames. On the stick figure (a
// symmetric rest pose) every joint of the mirrored pose lies at the reflection of its
// partner; on a CMU capture skeleton (offsets measured, not symmetric) every joint's
// rotation is the reflection of its partner's, and positions follow within the skeleton's
// own asymmetry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../marionette.mjs';
import { mirrorMap, mirrorName } from '../editor/src/anim/mirror.js';
import { readFileSync, join, data, rng, randomState } from './helpers.mjs';

const mn = await load();

test('mirror partners from joint names', () => {
  const cases = [
    ['left foot', 'right foot'],
    ['right arm.1', 'left arm.1'],
    ['LeftUpLeg', 'RightUpLeg'],
    ['RightHandIndex1', 'LeftHandIndex1'],
    ['LHipJoint', 'RHipJoint'],
    ['RThumb', 'LThumb'],
    ['lShldr', 'rShldr'],
    ['hand.L', 'hand.R'],
    ['arm_r', 'arm_l'],
    ['L_arm', 'R_arm'],
    ['LEFT_EYE', 'RIGHT_EYE'],
    ['pelvis', null],
    ['Spine1', null],
    ['Hips', null],
    ['Neck', null],
    ['LowerBack', null],
  ];
  for (const [a, b] of cases) assert.equal(mirrorName(a), b, a);
});

const reflect = (m, p) => {
  const c = m.center,
    n = m.normal,
    d = [0, 1, 2].map((r) => p[r] - c[r]);
  const t = 2 * (d[0] * n[0] + d[1] * n[1] + d[2] * n[2]);
  return [0, 1, 2].map((r) => c[r] + d[r] - t * n[r]);
};
function positionsOf(fig, q) {
  fig.setQ(q).fk();
  return Array.from(fig.positions);
}

test('the stick figure: the mirrored pose is the reflection of the pose, and mirroring twice gives it back', () => {
  const fig = mn.stickman();
  try {
    const m = mirrorMap(fig);
    assert.equal(m.pairs, 12);
    assert.deepEqual(m.unmapped, []);
    assert.deepEqual(m.normal.map(Math.abs), [1, 0, 0]);
    assert.equal(fig.jointNames[m.partner[fig.jointNames.indexOf('right knee')]], 'left knee');
    const rand = rng(11);
    for (let trial = 0; trial < 20; trial++) {
      const q = randomState(fig, rand);
      const P = positionsOf(fig, q),
        mq = m.apply(q),
        P2 = positionsOf(fig, mq);
      let worst = 0;
      for (let j = 0; j < fig.jointCount; j++) {
        const want = reflect(m, P.slice(3 * m.partner[j], 3 * m.partner[j] + 3));
        for (let r = 0; r < 3; r++) worst = Math.max(worst, Math.abs(want[r] - P2[3 * j + r]));
      }
      assert.ok(worst < 1e-9, `trial ${trial}: joints off their mirror images by ${worst}`);
      const back = positionsOf(fig, m.apply(mq));
      for (let i = 0; i < P.length; i++) assert.ok(Math.abs(back[i] - P[i]) < 1e-9);
    }
    // a pose with the right arm raised gives the left arm raised
    const q = fig.restQ;
    q[fig.joints[fig.jointNames.indexOf('right arm.2')].qadr] = -1.2;
    const mq = m.apply(q);
    assert.equal(mq[fig.joints[fig.jointNames.indexOf('right arm.2')].qadr], 0);
    assert.notEqual(mq[fig.joints[fig.jointNames.indexOf('left arm.2')].qadr], 0);
  } finally {
    fig.dispose();
  }
});

test('a CMU skeleton: each joint turns as the reflection of its partner', () => {
  const fig = mn.figureFromBVH(readFileSync(join(data, 'mocap/cmu_motionbuilder/cmu_02_01_walk.bvh'), 'utf8'), { scale: 0.056444 });
  try {
    const m = mirrorMap(fig);
    assert.equal(m.pairs, 15);
    assert.deepEqual(m.unmapped, []);
    assert.deepEqual(m.normal.map(Math.abs), [1, 0, 0]);
    assert.equal(fig.jointNames[m.partner[fig.jointNames.indexOf('LHipJoint')]], 'RHipJoint');
    // how far the rest pose is from symmetric
    const rest = positionsOf(fig, fig.restQ);
    let asym = 0;
    for (let j = 0; j < fig.jointCount; j++) {
      const want = reflect(m, rest.slice(3 * m.partner[j], 3 * m.partner[j] + 3));
      for (let r = 0; r < 3; r++) asym = Math.max(asym, Math.abs(want[r] - rest[3 * j + r]));
    }
    const rot = (q) => {
      fig.setQ(q).fk();
      return Array.from(fig.frames);
    };
    const R0 = rot(fig.restQ);
    const M = [0, 1, 2].map((r) => [0, 1, 2].map((c) => (r === c ? 1 : 0) - 2 * m.normal[r] * m.normal[c]));
    const mul = (A, B) => [0, 1, 2].map((r) => [0, 1, 2].map((c) => A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c]));
    const mat = (F, j) => [0, 1, 2].map((r) => [0, 1, 2].map((c) => F[12 * j + 3 * r + c]));
    const T = (A) => [0, 1, 2].map((r) => [0, 1, 2].map((c) => A[c][r]));
    for (const frame of [0, 60, 150, 300]) {
      const q = fig.motion.frames.slice(frame * fig.nq, (frame + 1) * fig.nq);
      const F = rot(q),
        F2 = rot(m.apply(q)),
        P = positionsOf(fig, q),
        P2 = positionsOf(fig, m.apply(q));
      let worstR = 0,
        worstP = 0;
      for (let j = 0; j < fig.jointCount; j++) {
        const k = m.partner[j];
        // the turn of each joint from rest, in world terms: R R0^T
        const want = mul(mul(M, mul(mat(F, k), T(mat(R0, k)))), M),
          got = mul(mat(F2, j), T(mat(R0, j)));
        for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) worstR = Math.max(worstR, Math.abs(want[r][c] - got[r][c]));
        const wp = reflect(m, P.slice(3 * k, 3 * k + 3));
        for (let r = 0; r < 3; r++) worstP = Math.max(worstP, Math.abs(wp[r] - P2[3 * j + r]));
      }
      assert.ok(worstR < 1e-9, `frame ${frame}: rotations off by ${worstR}`);
      // offsets that differ by asym between sides move a joint by at most about that much per link
      assert.ok(worstP < 8 * asym + 1e-9, `frame ${frame}: positions off by ${worstP} (rest asymmetry ${asym})`);
    }
  } finally {
    fig.dispose();
  }
});
