// The web IK benchmark (make bench-web): marionette-wasm (LM and CCD), three.js's
// CCDIKSolver and closed-chain-ik on the same chains and targets, and the native build on
// the same target files (`marionette bench targets`). Prints key=value lines (one per chain,
// goal and solver, and one per peer for the targets both it and LM solved), then the same
// figures as two markdown tables.
//
// Chains: the Panda arm from URDF (7 DOF), the stick figure's right arm from the torso
// (6 DOF), a 20-link snake (URDF written here). Targets: FK of random joint vectors within
// the limits (seeded), in the chain base's frame; every solve starts from the rest pose
// (a peer's restarts, where set, from random poses within the limits). A target counts as
// solved when the returned joint values are within the limits (to 1e-6 rad) and put
// the tip within 1e-4 of the target position (and 1e-3 rad of the orientation), both
// checked with marionette's FK in double precision (the same check for every solver).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import * as THREE from 'three';
import { CCDIKSolver } from 'three/examples/jsm/animation/CCDIKSolver.js';
import { Solver, Joint, Link, Goal, DOF, SOLVE_STATUS } from 'closed-chain-ik/src/core/index.js';
import { load } from '../marionette.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = process.env.MN_CLI ?? join(root, 'build', 'marionette');
const N = Number(process.env.MN_BENCH_N ?? 2000);
const POS_TOL = 1e-4,
  ROT_TOL = 1e-3;
const RESTART_TOL = 1e-5; // a peer's own success test before a restart (marionette's tol_pos)
// a joint value counts as within a limit to 1e-6 rad: closed-chain-ik holds its limits and
// values in 32-bit floats, so a value clamped to a limit can lie 1e-7 outside it in double
const LIMIT_TOL = 1e-6;

const mn = await load();
const tmp = mkdtempSync(join(tmpdir(), 'mn_bench_web_'));

function snakeURDF(n) {
  let s = '<?xml version="1.0"?>\n<robot name="snake20">\n  <link name="link0"/>\n';
  for (let i = 1; i <= n; i++) {
    s +=
      `  <link name="link${i}"/>\n  <joint name="j${i}" type="revolute">\n` +
      `    <parent link="link${i - 1}"/><child link="link${i}"/>\n` +
      `    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="${i % 2 ? '0 0 1' : '0 1 0'}"/>\n` +
      '    <limit lower="-1.2" upper="1.2" effort="1" velocity="1"/>\n  </joint>\n';
  }
  return s + '</robot>\n';
}
writeFileSync(join(tmp, 'snake20.urdf'), snakeURDF(20));

const chains = [
  {
    name: 'Panda (URDF, 7 DOF)',
    file: join(root, 'data/robots/franka_panda/panda.urdf'),
    base: 'world',
    tip: 'panda_link8',
    orientation: true,
  },
  { name: 'stick figure arm (6 DOF)', file: 'stickman', base: 'torso', tip: 'right hand' },
  { name: 'snake (20 DOF)', file: join(tmp, 'snake20.urdf'), base: 'world', tip: 'link20' },
];

function native(args) {
  return execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}
function keyValues(line) {
  return Object.fromEntries(
    line
      .trim()
      .split(/\s+/)
      .map((kv) => kv.split('=')),
  );
}
function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}
function quatOfMatrix(R) {
  // row-major 3x3 -> [w, x, y, z]
  const t = R[0] + R[4] + R[8];
  let w, x, y, z;
  if (t > 0) {
    const s = 2 * Math.sqrt(t + 1);
    w = s / 4;
    x = (R[7] - R[5]) / s;
    y = (R[2] - R[6]) / s;
    z = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    const s = 2 * Math.sqrt(1 + R[0] - R[4] - R[8]);
    w = (R[7] - R[5]) / s;
    x = s / 4;
    y = (R[1] + R[3]) / s;
    z = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    const s = 2 * Math.sqrt(1 + R[4] - R[0] - R[8]);
    w = (R[2] - R[6]) / s;
    x = (R[1] + R[3]) / s;
    y = s / 4;
    z = (R[5] + R[7]) / s;
  } else {
    const s = 2 * Math.sqrt(1 + R[8] - R[0] - R[4]);
    w = (R[3] - R[1]) / s;
    x = (R[2] + R[6]) / s;
    y = (R[5] + R[7]) / s;
    z = s / 4;
  }
  return [w, x, y, z];
}
const mean = (a) => a.reduce((s, v) => s + v, 0) / Math.max(a.length, 1);
const median = (a) => {
  const b = [...a].sort((u, v) => u - v);
  return b.length ? (b.length % 2 ? b[(b.length - 1) / 2] : (b[b.length / 2 - 1] + b[b.length / 2]) / 2) : NaN;
};

// ---- a chain: its joints from the figure document, targets, and the shared check --------
function setup(c) {
  const docPath = join(tmp, 'figure.json');
  native(['convert', c.file, docPath]);
  const doc = JSON.parse(readFileSync(docPath, 'utf8'));
  const fig = mn.figureFromDocument(doc);
  const base = c.base === 'world' ? -1 : fig.jointNames.indexOf(c.base);
  const tip = fig.jointNames.indexOf(c.tip);
  const path = [];
  for (let j = tip; j !== base; j = doc.joints[j].parent) path.unshift(j);
  const joints = path.map((j) => ({ index: j, ...doc.joints[j], qadr: fig.joints[j].qadr }));
  const moving = joints.filter((j) => j.type === 'hinge');
  return { ...c, doc, fig, base, tip, joints, moving };
}

function baseFrame(ch) {
  // world frame of the base (rotation row-major, origin)
  if (ch.base < 0) return { R: [1, 0, 0, 0, 1, 0, 0, 0, 1], o: [0, 0, 0] };
  const F = ch.fig.frames,
    b = 12 * ch.base;
  return { R: Array.from(F.subarray(b, b + 9)), o: Array.from(F.subarray(b + 9, b + 12)) };
}

// Tip position (and orientation) in the base frame for chain values qc (one per moving joint).
function tipPose(ch, qc) {
  const { fig } = ch;
  fig.reset();
  ch.moving.forEach((j, i) => {
    fig.q[j.qadr] = qc[i];
  });
  fig.fk();
  const { R, o } = baseFrame(ch),
    F = fig.frames,
    t = 12 * ch.tip;
  const d = [0, 1, 2].map((k) => F[t + 9 + k] - o[k]);
  const p = [0, 1, 2].map((k) => R[k] * d[0] + R[3 + k] * d[1] + R[6 + k] * d[2]);
  const Rt = [];
  for (let r = 0; r < 3; r++)
    for (let col = 0; col < 3; col++) Rt.push(R[r] * F[t + col] + R[3 + r] * F[t + 3 + col] + R[6 + r] * F[t + 6 + col]);
  return { p, q: quatOfMatrix(Rt) };
}

function check(ch, qc, target, orient) {
  for (let i = 0; i < ch.moving.length; i++) {
    const j = ch.moving[i];
    if (!Number.isFinite(qc[i])) return false;
    if (j.limited && (qc[i] < j.range[0] - LIMIT_TOL || qc[i] > j.range[1] + LIMIT_TOL)) return false;
  }
  const { p, q } = tipPose(ch, qc);
  const e = Math.hypot(p[0] - target[0], p[1] - target[1], p[2] - target[2]);
  if (!(e <= POS_TOL)) return false;
  if (!orient) return true;
  const dot = Math.abs(q[0] * target[3] + q[1] * target[4] + q[2] * target[5] + q[3] * target[6]);
  return 2 * Math.acos(Math.min(1, dot)) <= ROT_TOL;
}

function makeTargets(ch, orient, seed, n = N) {
  const rand = rng(seed),
    out = [];
  for (let k = 0; k < n; k++) {
    const qc = ch.moving.map((j) => (j.limited ? j.range[0] + (j.range[1] - j.range[0]) * rand() : -Math.PI + 2 * Math.PI * rand()));
    const { p, q } = tipPose(ch, qc);
    out.push(orient ? [...p, ...q] : p);
  }
  return out;
}

// ---- solvers ----------------------------------------------------------------------------
function runMarionette(ch, method, targets, orient) {
  const { fig } = ch,
    times = [],
    inner = [],
    ok = [];
  let solved = 0;
  const problem = { base: ch.base, tip: ch.tip, target: [0, 0, 0] };
  const options = { method, timeoutMs: 0 };
  for (const t of targets) {
    problem.target = t.slice(0, 3);
    if (orient) problem.targetRotation = t.slice(3);
    fig.reset().clampToLimits();
    const t0 = performance.now();
    const r = fig.solveIK(problem, options);
    times.push(1000 * (performance.now() - t0));
    inner.push(r.timeUs);
    const qc = ch.moving.map((j) => fig.q[j.qadr]);
    ok.push(check(ch, qc, t, orient));
    if (ok[ok.length - 1]) solved++;
  }
  return { solved, times, inner, ok };
}

// The seed of every solve: the rest pose projected onto the limits.
function rest(j) {
  return j.limited ? Math.min(Math.max(j.q0[0], j.range[0]), j.range[1]) : j.q0[0];
}

// A random start within the limits (a peer's restart), seeded.
function randomValue(j, rand) {
  return j.limited ? j.range[0] + (j.range[1] - j.range[0]) * rand() : -Math.PI + 2 * Math.PI * rand();
}

function axisIndex(a) {
  // 0, 1, 2 for +-x, +-y, +-z; -1 otherwise
  for (let k = 0; k < 3; k++) if (Math.abs(Math.abs(a[k]) - 1) < 1e-12) return k;
  return -1;
}

// settings: { iterations, restarts }. A restart (from a random pose within the limits) follows
// when the effector, by three.js's own bone matrices, ends farther than RESTART_TOL from the
// target: what a caller of CCDIKSolver would check, since update() reports nothing.
function runThree(ch, targets, settings) {
  // bones: per chain joint a fixed bone (offset, orient) and, for a hinge, a child bone that
  // turns about the hinge axis (CCDIKSolver's `limitation` makes a link a hinge about an
  // axis of its parent bone; rotationMin/Max are Euler limits about the same axis)
  const bones = [new THREE.Bone()],
    links = [];
  let parent = bones[0];
  for (const j of ch.joints) {
    const fixed = new THREE.Bone();
    fixed.position.set(...j.offset);
    fixed.quaternion.set(j.orient[1], j.orient[2], j.orient[3], j.orient[0]);
    parent.add(fixed);
    bones.push(fixed);
    parent = fixed;
    if (j.type === 'hinge') {
      const k = axisIndex(j.axis);
      if (k < 0) return null; // an axis that is not a coordinate axis: no Euler limits
      const hinge = new THREE.Bone();
      parent.add(hinge);
      bones.push(hinge);
      parent = hinge;
      const s = Math.sign(j.axis[k]);
      const lo = new THREE.Vector3(-Math.PI, -Math.PI, -Math.PI),
        hi = new THREE.Vector3(Math.PI, Math.PI, Math.PI);
      const range = j.limited ? (s > 0 ? j.range : [-j.range[1], -j.range[0]]) : [-Math.PI, Math.PI];
      lo.setComponent(k, range[0]);
      hi.setComponent(k, range[1]);
      for (let m = 0; m < 3; m++)
        if (m !== k) {
          lo.setComponent(m, 0);
          hi.setComponent(m, 0);
        }
      links.unshift({
        index: bones.length - 1,
        limitation: new THREE.Vector3().setComponent(k, 1),
        rotationMin: lo,
        rotationMax: hi,
        joint: j,
        axis: k,
        sign: s,
        set: (b, v) => b.quaternion.setFromAxisAngle(new THREE.Vector3().setComponent(k, 1), s * v),
      });
    }
  }
  const effector = bones.length - 1;
  const target = new THREE.Bone();
  bones[0].add(target);
  bones.push(target);
  const mesh = { skeleton: { bones } };
  const ik = { target: bones.length - 1, effector, links, iteration: settings.iterations };
  const warn = console.warn;
  console.warn = () => {}; // it warns that the fixed bones between the hinges are not links
  const solver = new CCDIKSolver(mesh, [ik]);
  console.warn = warn;
  const times = [],
    ok = [],
    rand = rng(settings.seed ?? 99);
  const tip = new THREE.Vector3();
  let solved = 0;
  for (const t of targets) {
    for (const l of links) l.set(bones[l.index], rest(l.joint));
    target.position.set(t[0], t[1], t[2]);
    bones[0].updateMatrixWorld(true);
    const t0 = performance.now();
    solver.update();
    for (let r = 0; r < settings.restarts; r++) {
      if (tip.setFromMatrixPosition(bones[effector].matrixWorld).distanceTo(target.position) <= RESTART_TOL) break;
      for (const l of links) l.set(bones[l.index], randomValue(l.joint, rand));
      bones[0].updateMatrixWorld(true);
      solver.update();
    }
    times.push(1000 * (performance.now() - t0));
    // hinge angles back from the bones (pure rotations about their axes)
    const byJoint = new Map(
      links.map((l) => {
        const b = bones[l.index].quaternion,
          v = [b.x, b.y, b.z][l.axis];
        return [l.joint.index, l.sign * 2 * Math.atan2(v, b.w)];
      }),
    );
    const qc = ch.moving.map((j) => byJoint.get(j.index));
    ok.push(check(ch, qc, t, false));
    if (ok[ok.length - 1]) solved++;
  }
  return { solved, times, ok };
}

// settings: { options (Solver fields), restarts }. A restart (from a random pose within the
// limits) follows when solve() does not report CONVERGED (its own check against its
// thresholds) or throws.
function runClosedChain(ch, targets, orient, settings) {
  const rootLink = new Link();
  let parent = rootLink;
  const hinges = [];
  for (const j of ch.joints) {
    const joint = new Joint();
    joint.setPosition(...j.offset);
    joint.setQuaternion(j.orient[1], j.orient[2], j.orient[3], j.orient[0]);
    if (j.type === 'hinge') {
      const k = axisIndex(j.axis);
      if (k < 0) return null;
      joint.setDoF([DOF.EX, DOF.EY, DOF.EZ][k]);
      const s = Math.sign(j.axis[k]);
      const range = j.limited ? (s > 0 ? j.range : [-j.range[1], -j.range[0]]) : [-Math.PI, Math.PI];
      joint.setMinLimits(range[0]);
      joint.setMaxLimits(range[1]);
      hinges.push({ joint, j, sign: s });
    }
    const link = new Link();
    parent.addChild(joint);
    joint.addChild(link);
    parent = link;
  }
  const goal = new Goal();
  if (!orient) goal.setGoalDoF(DOF.X, DOF.Y, DOF.Z);
  goal.makeClosure(parent);
  const solver = new Solver(rootLink);
  Object.assign(solver, settings.options);
  const times = [],
    ok = [],
    rand = rng(settings.seed ?? 99);
  let solved = 0,
    thrown = 0;
  const attempt = () => {
    try {
      return solver.solve()[0] === SOLVE_STATUS.CONVERGED;
    } catch {
      thrown++; // it throws when every free DOF is locked at a limit: not solved
      return false;
    }
  };
  for (const t of targets) {
    for (const h of hinges) h.joint.setDoFValues(h.sign * rest(h.j));
    goal.setPosition(t[0], t[1], t[2]);
    if (orient) goal.setQuaternion(t[4], t[5], t[6], t[3]);
    const t0 = performance.now();
    for (let r = 0; !attempt() && r < settings.restarts; r++) for (const h of hinges) h.joint.setDoFValues(h.sign * randomValue(h.j, rand));
    times.push(1000 * (performance.now() - t0));
    const byJoint = new Map(hinges.map((h) => [h.j.index, h.sign * h.joint.dofValues[h.joint.dof[0]]]));
    const qc = ch.moving.map((j) => byJoint.get(j.index));
    ok.push(check(ch, qc, t, orient));
    if (ok[ok.length - 1]) solved++;
  }
  return { solved, times, thrown, ok };
}

// ---- the run ----------------------------------------------------------------------------
// Each peer twice: with the settings of earlier runs (one start, 100 iterations) and with the
// settings that gave it its best solve rate in trials (web.md, "Peer settings"): restarts
// from random poses within the limits, as marionette's LM makes (up to 100).
const CCIK_ONE = { maxIterations: 100, translationConvergeThreshold: 1e-5, rotationConvergeThreshold: 1e-5, stallThreshold: 1e-7 };
const CCIK_BEST = {
  maxIterations: 50,
  translationConvergeThreshold: 1e-5,
  rotationConvergeThreshold: 1e-5,
  stallThreshold: 0,
  divergeThreshold: Infinity,
  restPoseFactor: 0,
  dampingFactor: 0.03,
};
const peers = [
  { solver: 'three.js CCDIKSolver, 100 iterations', key: 'three_100', kind: 'three', iterations: 100, restarts: 0 },
  { solver: 'three.js CCDIKSolver, 300 iterations, 100 restarts', key: 'three_best', kind: 'three', iterations: 300, restarts: 100 },
  { solver: 'closed-chain-ik, 100 iterations', key: 'ccik_100', kind: 'ccik', options: CCIK_ONE, restarts: 0 },
  {
    solver: 'closed-chain-ik, 50 iterations, damping 0.03, 100 restarts',
    key: 'ccik_best',
    kind: 'ccik',
    options: CCIK_BEST,
    restarts: 100,
  },
];
const WARM_BEST = 200; // warm-up targets for the slow (restarting) peer settings

const rows = [],
  common = [],
  kv = [];
const fmt = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : 'n/a');
const sum = (a) => a.reduce((s, v) => s + v, 0);
const chainKey = (name) => name.split(' ')[0].toLowerCase();
for (const c of chains) {
  const ch = setup(c);
  for (const orient of c.orientation ? [false, true] : [false]) {
    const targets = makeTargets(ch, orient, 12345);
    const file = join(tmp, 'targets.txt');
    writeFileSync(file, targets.map((t) => t.join(' ')).join('\n') + '\n');
    const goal = orient ? 'position + orientation' : 'position';
    const tag = `chain=${chainKey(c.name)} goal=${orient ? 'pose' : 'position'}`;
    const results = [];
    // each solver first runs on other targets untimed (the JIT compilers tier up; the
    // module twice: V8 compiles its hot functions again in the background)
    const warm = makeTargets(ch, orient, 777);
    for (const method of ['lm', 'ccd']) {
      runMarionette(ch, method, warm, orient);
      runMarionette(ch, method, warm, orient);
      const r = runMarionette(ch, method, targets, orient);
      const nat = keyValues(native(['bench', 'targets', c.file, '--base', c.base, '--tip', c.tip, '--targets', file, '--method', method]));
      results.push({ solver: `marionette-wasm ${method.toUpperCase()}`, key: `mn_${method}`, ...r, native: nat });
    }
    for (const p of peers) {
      const run = (ts) => (p.kind === 'three' ? (orient ? null : runThree(ch, ts, p)) : runClosedChain(ch, ts, orient, p));
      const w = p.restarts ? warm.slice(0, WARM_BEST) : warm;
      const r = run(w) && run(targets);
      results.push(r ? { ...p, ...r } : { ...p, note: orient ? 'cannot express an orientation goal' : 'axis not expressible' });
    }
    const lm = results[0];
    for (const r of results) {
      if (r.note) {
        rows.push(`| ${c.name} | ${goal} | ${r.solver} | ${r.note} | | | | |`);
        kv.push(`bench=web ${tag} solver=${r.key} expressible=0`);
        continue;
      }
      const perSolved = r.solved ? sum(r.times) / r.solved : NaN;
      const rate = (100 * r.solved) / targets.length;
      let ratio = '',
        ratioKv = '';
      if (r.native) {
        const rm = mean(r.inner) / Number(r.native.mean_us),
          rd = median(r.inner) / Number(r.native.median_us);
        ratio =
          `${fmt(rm, 2)} / ${fmt(rd, 2)} (native ${fmt(Number(r.native.mean_us))} / ` +
          `${fmt(Number(r.native.median_us))} us, ${fmt(Number(r.native.solve_rate))} %)`;
        ratioKv =
          ` wasm_native_mean=${fmt(rm, 3)} wasm_native_median=${fmt(rd, 3)}` +
          ` native_mean_us=${r.native.mean_us}` +
          ` native_median_us=${r.native.median_us} native_solve_rate=${r.native.solve_rate}`;
      }
      const thrown = r.thrown ? ` (threw on ${r.thrown})` : '';
      rows.push(
        `| ${c.name} | ${goal} | ${r.solver} | ${fmt(rate)} %${thrown} | ` +
          `${fmt(mean(r.times))} | ${fmt(median(r.times))} | ${fmt(perSolved)} | ${ratio} |`,
      );
      kv.push(
        `bench=web ${tag} solver=${r.key} targets=${targets.length} solved=${r.solved}` +
          ` solve_rate=${fmt(rate, 2)}` +
          ` mean_us=${fmt(mean(r.times), 2)} median_us=${fmt(median(r.times), 2)} us_per_solved=${fmt(perSolved, 2)}` +
          `${r.thrown ? ` thrown=${r.thrown}` : ''}${ratioKv}`,
      );
      if (r === lm || r.native) continue;
      // the same targets: those both LM and this peer solved
      const both = [];
      for (let k = 0; k < targets.length; k++) if (lm.ok[k] && r.ok[k]) both.push(k);
      const lt = both.map((k) => lm.times[k]),
        pt = both.map((k) => r.times[k]);
      const rMean = mean(pt) / mean(lt),
        rMed = median(pt) / median(lt);
      common.push(
        `| ${c.name} | ${goal} | ${r.solver} | ${both.length} | ${fmt(mean(lt))} / ${fmt(median(lt))} | ` +
          `${fmt(mean(pt))} / ${fmt(median(pt))} | ${fmt(rMean)}x / ${fmt(rMed)}x | ` +
          `${fmt(perSolved / (sum(lm.times) / lm.solved))}x |`,
      );
      kv.push(
        `bench=web part=common ${tag} peer=${r.key} common=${both.length} lm_mean_us=${fmt(mean(lt), 2)}` +
          ` lm_median_us=${fmt(median(lt), 2)} peer_mean_us=${fmt(mean(pt), 2)} peer_median_us=${fmt(median(pt), 2)}` +
          ` peer_over_lm_mean=${fmt(rMean, 2)} peer_over_lm_median=${fmt(rMed, 2)}` +
          ` peer_over_lm_per_solved=${fmt(perSolved / (sum(lm.times) / lm.solved), 2)}`,
      );
    }
  }
  ch.fig.dispose();
}
rmSync(tmp, { recursive: true, force: true });
for (const line of kv) console.log(line);
console.log('');
console.log(`${N} targets per chain; solved: within ${POS_TOL} (and ${ROT_TOL} rad), joint limits kept.`);
console.log('| chain | goal | solver | solved | mean us | median us | us per solved target | wasm/native time, mean / median |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) console.log(r);
console.log('');
console.log('The same targets: those both marionette-wasm LM and the peer solved (times in us).');
console.log(
  '| chain | goal | peer | targets both solved | LM mean / median | peer mean / median | peer / LM, mean / median | peer / LM, time per solved target |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of common) console.log(r);
