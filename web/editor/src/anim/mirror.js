// Mirror a pose left to right. Pairs of joints come from their names (left/right words, L/R
// and l/r prefixes, .L/_R-style suffixes); the mapping of each joint's values comes from the
// figure itself: its rest frames, and the axis of each hinge or slide measured by moving it.
//
// Every joint's motion is written as a rotation in world coordinates of the rest pose, W_j
// (R_j(q) = W_root ... W_j R_j(rest)); mirroring by the reflection M (the plane between the
// left and right joints, through the root at rest) maps W_j to M W_j M at its partner, a
// rotation about M a by minus the angle. A hinge of world axis a_j whose partner's axis is
// s M a_j (s = +-1) takes -s times the angle; a ball or free rotation (w, v) becomes
// (w, -M v) in world terms, converted back through the partner's rest frame; a free joint's
// position is reflected; a slide takes s times the length. For a figure whose rest pose is
// symmetric, every joint of the mirrored pose lies at the reflection of its partner.

/** The name of a joint's mirror partner by its name alone (or null): "left foot" <->
 * "right foot", LeftArm <-> RightArm, LHipJoint <-> RHipJoint, lShldr <-> rShldr, hand.L <->
 * hand.R, arm_l <-> arm_r, L_arm <-> R_arm. */
export function mirrorName(name) {
  const word = name.replace(/left|right/gi, (w) => {
    const to = w.toLowerCase() === 'left' ? 'right' : 'left';
    if (w === w.toUpperCase()) return to.toUpperCase();
    return w[0] === w[0].toUpperCase() ? to[0].toUpperCase() + to.slice(1) : to;
  });
  if (word !== name) return word;
  const swap = (c) => ({ L: 'R', R: 'L', l: 'r', r: 'l' })[c];
  let m = /^([LRlr])([A-Z_.\- ].*)$/.exec(name); // LHipJoint, L_arm, lShldr
  if (m) return swap(m[1]) + m[2];
  m = /^(.*[_.\- ])([LRlr])$/.exec(name); // hand.L, arm_l, foot R
  if (m) return m[1] + swap(m[2]);
  return null;
}

// quaternions (w, x, y, z) and 3x3 row-major matrices
const qmul = (a, b) => [
  a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
  a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
  a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
  a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
];
const qconj = (a) => [a[0], -a[1], -a[2], -a[3]];
function qnorm(a) {
  const n = Math.hypot(a[0], a[1], a[2], a[3]);
  return a.map((x) => x / n);
}
/** The unit quaternion of a row-major rotation matrix (Shepperd's method). */
export function quatOfMatrix(m) {
  const [a, b, c, d, e, f, g, h, i] = m,
    t = a + e + i;
  let q;
  if (t > 0) {
    const s = 2 * Math.sqrt(1 + t);
    q = [s / 4, (h - f) / s, (c - g) / s, (d - b) / s];
  } else if (a > e && a > i) {
    const s = 2 * Math.sqrt(1 + a - e - i);
    q = [(h - f) / s, s / 4, (b + d) / s, (c + g) / s];
  } else if (e > i) {
    const s = 2 * Math.sqrt(1 + e - a - i);
    q = [(c - g) / s, (b + d) / s, s / 4, (f + h) / s];
  } else {
    const s = 2 * Math.sqrt(1 + i - a - e);
    q = [(d - b) / s, (c + g) / s, (f + h) / s, s / 4];
  }
  return qnorm(q);
}
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/**
 * The mirror of a figure (a marionette.mjs Figure): { partner (joint index per joint, itself
 * when unpaired), pairs (count), normal (the mirror plane's normal, world), unmapped (joints
 * whose values cannot be mirrored exactly: kept), apply(q) -> the mirrored state }.
 * The figure's state is restored afterwards.
 */
export function mirrorMap(figure) {
  const joints = figure.joints,
    n = joints.length,
    saved = new Float64Array(figure.q);
  const index = new Map(joints.map((j, i) => [j.name, i]));
  const partner = joints.map((j, i) => {
    const other = mirrorName(j.name);
    const k = other === null ? undefined : index.get(other);
    return k === undefined || joints[k].type !== j.type ? i : k;
  });
  const rest = figure.restQ;
  figure.setQ(rest).fk();
  const R0 = [],
    P0 = [];
  for (let j = 0; j < n; j++) {
    R0.push(Array.from(figure.frames.subarray(12 * j, 12 * j + 9)));
    P0.push(Array.from(figure.frames.subarray(12 * j + 9, 12 * j + 12)));
  }
  // the mirror plane: normal along the left-right differences, through the root at rest
  const sum = [0, 0, 0];
  let pairs = 0;
  for (let j = 0; j < n; j++) {
    const k = partner[j];
    if (k <= j) continue;
    pairs++;
    const d = [0, 1, 2].map((r) => P0[j][r] - P0[k][r]);
    const s = dot(d, sum) < 0 ? -1 : 1;
    for (let r = 0; r < 3; r++) sum[r] += s * d[r];
  }
  const len = Math.hypot(...sum);
  let normal = len > 1e-12 ? sum.map((x) => x / len) : [1, 0, 0];
  // a figure measured in a coordinate frame (a capture skeleton's offsets are not exactly
  // symmetric): within 8 degrees of a coordinate axis, the plane is that axis's
  const big = normal.reduce((b, x, i) => (Math.abs(x) > Math.abs(normal[b]) ? i : b), 0);
  if (Math.abs(normal[big]) > Math.cos((8 * Math.PI) / 180)) normal = [0, 1, 2].map((i) => (i === big ? 1 : 0));
  const reflect = (v) => {
    const t = 2 * dot(v, normal);
    return [v[0] - t * normal[0], v[1] - t * normal[1], v[2] - t * normal[2]];
  };
  // world axes of hinges and slides at rest, measured by moving each joint
  const axis = new Array(n).fill(null);
  const eps = 1e-4;
  for (let j = 0; j < n; j++) {
    const jt = joints[j];
    if (jt.type !== 'hinge' && jt.type !== 'slide') continue;
    const q = new Float64Array(rest);
    q[jt.qadr] += eps;
    figure.setQ(q).fk();
    if (jt.type === 'slide') {
      const p = figure.frames.subarray(12 * j + 9, 12 * j + 12);
      axis[j] = [0, 1, 2].map((r) => (p[r] - P0[j][r]) / eps);
    } else {
      // R(eps) R0^T = Rot(world axis, eps): the axis from its skew part
      const R = figure.frames.subarray(12 * j, 12 * j + 9),
        A = R0[j];
      const m = (r, c) => R[3 * r] * A[3 * c] + R[3 * r + 1] * A[3 * c + 1] + R[3 * r + 2] * A[3 * c + 2];
      const a = [m(2, 1) - m(1, 2), m(0, 2) - m(2, 0), m(1, 0) - m(0, 1)];
      const l = Math.hypot(...a);
      axis[j] = a.map((x) => x / l);
    }
  }
  figure.setQ(saved).fk();
  // per joint: how its values land on its partner
  const unmapped = [];
  const sign = new Array(n).fill(0);
  const restQuat = new Array(n).fill(null); // b_j: world rest frame of the joint's local rotation
  for (let j = 0; j < n; j++) {
    const jt = joints[j],
      k = partner[j];
    if (jt.type === 'hinge' || jt.type === 'slide') {
      const s = dot(reflect(axis[j]), axis[k]);
      if (Math.abs(Math.abs(s) - 1) > 1e-6) unmapped.push(jt.name);
      else sign[j] = s > 0 ? 1 : -1;
    } else if (jt.type === 'ball' || jt.type === 'free') {
      const off = jt.type === 'free' ? 3 : 0;
      const l0 = Array.from(rest.subarray(jt.qadr + off, jt.qadr + off + 4));
      restQuat[j] = qmul(quatOfMatrix(R0[j]), qconj(qnorm(l0)));
    }
  }
  function apply(q) {
    const out = new Float64Array(q);
    for (let j = 0; j < n; j++) {
      const jt = joints[j],
        k = partner[j],
        a = jt.qadr,
        b = joints[k].qadr;
      if (jt.type === 'hinge') {
        if (sign[j]) out[b] = rest[b] - sign[j] * (q[a] - rest[a]);
      } else if (jt.type === 'slide') {
        if (sign[j]) out[b] = rest[b] + sign[j] * (q[a] - rest[a]);
      } else if (jt.type === 'ball' || jt.type === 'free') {
        const off = jt.type === 'free' ? 3 : 0;
        if (off) {
          const d = reflect([0, 1, 2].map((r) => q[a + r] - rest[a + r]));
          for (let r = 0; r < 3; r++) out[b + r] = rest[b + r] + d[r];
        }
        const lj = qnorm(Array.from(q.subarray(a + off, a + off + 4)));
        const l0j = qnorm(Array.from(rest.subarray(a + off, a + off + 4)));
        const bj = restQuat[j],
          bk = restQuat[k];
        const w = qmul(qmul(bj, qmul(lj, qconj(l0j))), qconj(bj)); // W_j
        const mv = reflect([w[1], w[2], w[3]]);
        const wm = [w[0], -mv[0], -mv[1], -mv[2]]; // M W_j M
        const l0k = qnorm(Array.from(rest.subarray(b + off, b + off + 4)));
        const lk = qmul(qmul(qmul(qconj(bk), wm), bk), l0k);
        out.set(lk[0] < 0 ? lk.map((x) => -x) : lk, b + off);
      }
    }
    return out;
  }
  return { partner, pairs, normal, center: P0[0], unmapped, apply };
}
