// Shared by the module's tests: the native command line (MN_CLI, default build/marionette)
// that produces the reference results, the shipped figures, and a temporary folder.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cli = process.env.MN_CLI ?? join(root, 'build', 'marionette');
export const data = join(root, 'data');

export const figures = [
  'stickman',
  'robots/franka_panda/panda.urdf',
  'robots/kuka_iiwa/model.urdf',
  'robots/nao/nao.urdf',
  'robots/ur5/ur5_robot.urdf',
  'robots/xarm6/xarm6_robot.urdf',
  'mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh',
  'mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh',
  'mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh',
  'mocap/cmu_motionbuilder/cmu_02_01_walk.bvh',
  'mocap/other_skeleton/Boxing_Toes.bvh',
  'skinned/CesiumMan.glb',
  'skinned/Fox.glb',
  'skinned/RiggedFigure.glb',
  'skinned/RiggedSimple.glb',
  'skinned/SimpleSkin.gltf',
].map((f) => (f === 'stickman' ? f : join(data, f)));

/** Runs the native tool; returns stdout (throws with stderr on a non-zero exit unless ok). */
export function native(args, { ok = [0] } = {}) {
  try {
    return execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  } catch (e) {
    if (ok.includes(e.status)) return e.stdout;
    throw new Error(`${cli} ${args.join(' ')}: exit ${e.status}: ${e.stderr}`);
  }
}

/** A private temporary folder, removed by the returned cleanup. */
// Largest distance between the joint origins `marionette fk --json` printed for a BVH that
// marionette wrote from fig (ref) and fig's own positions. A BVH joint carries the name of the
// figure joint it was written from, whitespace as '_' (a compound joint of hinges is one BVH
// joint, at the origin of its last hinge: docs/bvh.md), so joints are matched by that name, or
// by the figure's own name where the reader gave it back (the built-in figure's files).
export function bvhDistance(fig, ref) {
  const index = new Map(
    fig.jointNames.flatMap((n, i) => [
      [n, i],
      [n.replace(/\s/g, '_'), i],
    ]),
  );
  let worst = 0;
  for (const j of ref.joints) {
    const i = index.get(j.name);
    assert.ok(i !== undefined, `the BVH joint ${j.name} names no joint of the figure`);
    for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(j.position[k] - fig.positions[3 * i + k]));
  }
  return worst;
}

export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'mn_web_'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The figure document of a file, written by `marionette convert`. */
export function documentOf(file, dir) {
  const out = join(dir, 'figure.json');
  native(['convert', file, out]);
  const text = readFileSync(out, 'utf8');
  rmSync(out);
  return text;
}

export { writeFileSync, readFileSync, join };

/** xorshift64*: deterministic numbers in [0, 1). */
export function rng(seed) {
  let s = BigInt(seed) || 1n;
  return () => {
    s ^= s >> 12n;
    s ^= (s << 25n) & 0xffffffffffffffffn;
    s ^= s >> 27n;
    const v = (s * 2685821657736338717n) & 0xffffffffffffffffn;
    return Number(v >> 11n) / 9007199254740992;
  };
}

/** A random state of a figure: hinges and slides within their limits (or +-1), unit
 * quaternions for balls and free joints, free positions within +-0.5. */
export function randomState(fig, rand) {
  const q = new Float64Array(fig.nq);
  for (const j of fig.joints) {
    const a = j.qadr;
    if (j.type === 'hinge' || j.type === 'slide') {
      const [lo, hi] = j.limited ? j.range : [-1, 1];
      q[a] = lo + (hi - lo) * rand();
    } else if (j.type === 'ball' || j.type === 'free') {
      const o = j.type === 'free' ? 3 : 0;
      for (let i = 0; i < o; i++) q[a + i] = rand() - 0.5;
      let w = 0;
      const v = [0, 0, 0, 0].map(() => rand() * 2 - 1);
      for (const x of v) w += x * x;
      w = Math.sqrt(w);
      for (let i = 0; i < 4; i++) q[a + o + i] = v[i] / w;
    }
  }
  return q;
}

export { stateOf } from './pose.mjs';

/** The values of the moving joints from below base down to tip, root first: the native
 * `solve`'s "q". */
export function chainQ(fig, tipName, baseName) {
  const path = [];
  for (let j = fig.jointNames.indexOf(tipName); j >= 0 && fig.jointNames[j] !== baseName; j = fig.joints[j].parent) path.unshift(j);
  const q = [];
  for (const j of path) {
    const n = { fixed: 0, hinge: 1, slide: 1, ball: 4, free: 7 }[fig.joints[j].type];
    for (let k = 0; k < n; k++) q.push(fig.q[fig.joints[j].qadr + k]);
  }
  return q;
}

/** Writes a chain's values (in the order of chainQ) into the figure's state. */
export function setChainQ(fig, tipName, baseName, values) {
  const path = [];
  for (let j = fig.jointNames.indexOf(tipName); j >= 0 && fig.jointNames[j] !== baseName; j = fig.joints[j].parent) path.unshift(j);
  let k = 0;
  for (const j of path) {
    const n = { fixed: 0, hinge: 1, slide: 1, ball: 4, free: 7 }[fig.joints[j].type];
    for (let i = 0; i < n; i++) fig.q[fig.joints[j].qadr + i] = values[k++];
  }
}

// A scene of the stick figure for the constraint tests (Node and browser): both feet pinned,
// the head's orientation held, the centre of mass on a plane, the right hand dragged.
export const pinsScene = {
  handles: [
    { name: 'lf', joint: 'left foot' },
    { name: 'rf', joint: 'right foot' },
    { name: 'rh', joint: 'right hand', point: [0, -0.05, 0] },
    { name: 'head', type: 'orientation', joint: 'head' },
    { name: 'body', type: 'com' },
  ],
  constraints: [
    { type: 'pin', handle: 'lf', target: [0.1, 0.1, 0] },
    { type: 'pin', handle: 'rf', target: [-0.1, 0.1, 0] },
    { type: 'orient', handle: 'head', target: [1, 0, 0, 0] },
    { type: 'plane', handle: 'body', origin: [0, 0, 0.01], normal: [0, 0, 1] },
  ],
  drags: [{ handle: 'rh', target: [-0.3, 1.3, 0.3], weight: 1, priority: 1 }],
  frames: 1,
};
