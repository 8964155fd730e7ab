// Posing (Welman 6.2, 6.3): the chain a drag moves (three modes), the goal found by casting a
// ray (Fig. 6.3), the solve of every refresh (single-chain IK, or the constraint solver when
// locks are involved), per-joint weights, and locks held during every edit.
import * as THREE from 'three';
import { activeAt, uniqueName } from './docmodel.js';
import { feetPolygon, handleValue } from './anim/animate.js';
import { figureFor, fullSequence } from './anim/sequence.js';

export const DRAG_MODES = ['part', 'branch', 'named'];

// Locks are solved to 1e-5 m, as the in-betweens and the export are: with the solver's
// default 1e-4 a solve stops as soon as every lock is within 1e-4 m, so a drag's lock error
// sat just under the bound it is meant to keep (9.99e-5 m on the CMU skeleton).
const LOCK_TOL = 1e-5;

// Comfort during a drag (Welman 7; constrain.h mn_csys_set_comfort): a tenth of the way to
// rest asked per frame (each joint at most 0.05 rad); the dragged limb has no pull toward
// rest (it goes where the mouse takes it), the core (the joints above a branching of the
// tree: pelvis to chest) eight times the limbs' pull, so a long reach bends the arm and the
// legs before the spine.
const COMFORT_GAIN = 0.1;
const CORE_WEIGHT = 8;

// Solves run when the page opens, before any drag (Poser.warm), and the most time they may
// take (a figure of many joints stops early).
const WARM_ROUNDS = 600;
const WARM_MS = 150;

/** Editing settings with their defaults (editor.json). */
export function posingSettings(settings) {
  return {
    dragMode: DRAG_MODES.includes(settings.dragMode) ? settings.dragMode : 'branch',
    dragBase: settings.dragBase ?? null,
    ikMethod: settings.ikMethod ?? 'dls',
    csolver: settings.csolver ?? 'lagrange',
    iterations: Number.isInteger(settings.iterations) && settings.iterations > 0 ? settings.iterations : 20,
    weights: settings.weights ?? {},
    locks: settings.locks ?? {},
    comfort: settings.comfort ?? null, // null: on for a figure with feet
    balance: settings.balance ?? null, // likewise
  };
}

/** Is comfort (key 'comfort') or balance (key 'balance') on during drags? editor.json's
 * value, else on for a figure with feet (joints named foot, toe or ankle). */
export function comfortOn(settings, figure, key = 'comfort') {
  const c = settings[key];
  if (c === true || c === false) return c;
  return figure.jointNames.some((n) => /foot|toe|ankle/i.test(n));
}

/** The joints of a figure's core: those above a branching of the tree into two or more limbs
 * (children whose subtrees are at least two joints deep: not a hand's finger and thumb), from
 * that branching down to the root, the root excluded: the stick figure's torso, a CMU
 * skeleton's LowerBack, Spine and Spine1. */
export function coreJoints(figure) {
  const n = figure.jointCount,
    height = new Array(n).fill(0),
    out = new Set();
  for (let j = n - 1; j >= 0; j--) {
    // children come after their parent
    const p = figure.joints[j].parent;
    if (p >= 0) height[p] = Math.max(height[p], height[j] + 1);
  }
  const limbs = new Array(n).fill(0);
  for (let j = 0; j < n; j++) {
    const p = figure.joints[j].parent;
    if (p >= 0 && height[j] >= 2) limbs[p]++;
  }
  for (let j = 0; j < n; j++) {
    if (limbs[j] < 2) continue;
    for (let a = j; a >= 0 && figure.joints[a].parent >= 0; a = figure.joints[a].parent) out.add(a);
  }
  return out;
}

/** Signed distance of a point's ground projection (x, z) inside a convex polygon (positive
 * inside), the polygon as [[x, y, z], ...] in either winding. */
export function insideDistance(poly, p) {
  let area = 0;
  for (let i = 0; i < poly.length; i++) {
    const a = poly[i],
      b = poly[(i + 1) % poly.length];
    area += a[0] * b[2] - b[0] * a[2];
  }
  const w = Math.sign(area) || 1;
  let d = Infinity;
  for (let i = 0; i < poly.length; i++) {
    const a = poly[i],
      b = poly[(i + 1) % poly.length];
    const ex = b[0] - a[0],
      ez = b[2] - a[2],
      len = Math.hypot(ex, ez) || 1;
    d = Math.min(d, (w * (ex * (p[2] - a[2]) - ez * (p[0] - a[0]))) / len);
  }
  return d;
}

/**
 * The joints a drag of joint `joint` moves (Welman 6.2), as joint indices, ordered root to
 * tip. sites/siteOf group compound joints. The dragged point is the joint's origin, so the
 * joints at that point (its own site) do not move it: the chain starts at the parent site.
 * part: that site only; branch: up the tree while the parent site has a single child;
 * named: up to and including the site of `base` (when it is an ancestor; else as branch).
 */
export function dragChain(sites, siteOf, joint, mode, base = null, figure = null) {
  let s = sites[siteOf[joint]].parent;
  if (s < 0) return [];
  const chain = [s];
  if (mode === 'part') return expand(sites, chain);
  let baseSite = -1;
  if (mode === 'named' && base !== null && figure) {
    const b = typeof base === 'number' ? base : figure.jointNames.indexOf(base);
    if (b >= 0) baseSite = siteOf[b];
    // only an ancestor site is a base
    let a = s,
      isAnc = false;
    while (a >= 0) {
      if (a === baseSite) {
        isAnc = true;
        break;
      }
      a = sites[a].parent;
    }
    if (!isAnc) baseSite = -1;
  }
  for (;;) {
    if (baseSite >= 0) {
      if (s === baseSite) break;
    } else {
      const g = sites[s].parent;
      if (g < 0 || sites[g].children.length !== 1) break;
    }
    s = sites[s].parent;
    if (s < 0) break;
    chain.push(s);
  }
  return expand(sites, chain.reverse());
}
function expand(sites, siteList) {
  return siteList.flatMap((s) => sites[s].joints);
}

/** Ancestor joints of a joint (root first), excluding the joint's own site. */
export function ancestorsOf(sites, siteOf, joint) {
  const out = [];
  let s = sites[siteOf[joint]].parent;
  while (s >= 0) {
    out.push(...sites[s].joints.slice().reverse());
    s = sites[s].parent;
  }
  return out.reverse();
}

/** Welman 6.3: the goal on the ray closest to the end-effector point p (Fig. 6.3), pushed
 * along the ray by `push` (the mouse wheel in perspective). */
export function goalOnRay(ray, p, push = 0) {
  const o = ray.origin,
    d = ray.direction;
  const t = d.dot(p.clone().sub(o));
  return o.clone().add(d.clone().multiplyScalar(t + push));
}

/** The lock kinds of the menu -> the handles and constraints they add to the document. */
export function lockRecipe(kind, jointName, figure, at) {
  const q = quatOfFrame(figure, figure.jointNames.indexOf(jointName));
  const pos = Array.from(at);
  switch (kind) {
    case 'position':
      return { handles: [{ type: 'point' }], constraints: [{ type: 'pin', target: pos }] };
    case 'orientation':
      return { handles: [{ type: 'orientation' }], constraints: [{ type: 'orient', target: q }] };
    case 'orientation-x':
    case 'orientation-y':
    case 'orientation-z':
      return { handles: [{ type: 'orientation' }], constraints: [{ type: 'orient', target: q, axis: kind.slice(-1) }] };
    case 'combined':
      return {
        handles: [{ type: 'point' }, { type: 'orientation' }],
        constraints: [
          { type: 'pin', target: pos, weight: 1 },
          { type: 'orient', target: q, weight: 0.5, handleIndex: 1 },
        ],
      };
    case 'plane':
      return { handles: [{ type: 'point' }], constraints: [{ type: 'plane', origin: pos, normal: [0, 1, 0] }] };
    default:
      throw new Error(`unknown lock kind ${kind}`);
  }
}

/** The unit quaternion (w, x, y, z) of a joint frame (rotation row-major in figure.frames). */
export function quatOfFrame(figure, j) {
  const f = figure.frames,
    b = 12 * j;
  const m = new THREE.Matrix4().set(
    f[b],
    f[b + 1],
    f[b + 2],
    0,
    f[b + 3],
    f[b + 4],
    f[b + 5],
    0,
    f[b + 6],
    f[b + 7],
    f[b + 8],
    0,
    0,
    0,
    0,
    1,
  );
  const q = new THREE.Quaternion().setFromRotationMatrix(m).normalize();
  return [q.w, q.x, q.y, q.z];
}

/**
 * A drag session and the locks: builds a constraint system from the document's locks
 * active at the current frame plus the dragged handle, freezes every joint outside the
 * chain and the contributing joints of the locks the chain moves, applies the weights.
 */
export class Poser {
  constructor(store, viewport) {
    this.store = store;
    this.viewport = viewport;
    this.stats = { dragMs: [], moveMs: [], iterations: [], maxViolation: 0 };
    this.session = null;
    this.lockEdit = null; // a lock's target being moved (marker drag or sliders)
  }
  get settings() {
    return posingSettings(this.store.settings);
  }

  /** The joints that maintain a lock (Welman 6.3 "the joints which can contribute"): the
   * chain from the locked part up to the lock's `from` joint (default: the root). */
  lockJoints(lockName, jointName) {
    const fig = this.store.figure,
      vp = this.viewport;
    const j = fig.jointNames.indexOf(jointName);
    if (j < 0) return [];
    const from = this.settings.locks[lockName]?.from ?? null;
    const anc = ancestorsOf(vp.sites, vp.siteOf, j);
    // a lock's own site turns the locked frame (orientation locks): include it
    const own = vp.sites[vp.siteOf[j]].joints;
    let list = anc;
    if (from !== null) {
      const f = fig.jointNames.indexOf(from);
      const at = anc.indexOf(f);
      if (at >= 0) {
        const s = vp.siteOf[f];
        const first = anc.findIndex((x) => vp.siteOf[x] === s);
        list = anc.slice(first);
      }
    }
    return [...list, ...own];
  }

  /** The document's locks active at a frame, each {constraint, handle, joints}. */
  activeLocks(frame = this.store.ui.frame) {
    const doc = this.store.doc,
      handles = new Map((doc.handles ?? []).map((h) => [h.name, h]));
    return (doc.constraints ?? [])
      .filter(
        (c) =>
          c.enabled !== false &&
          activeAt(c, frame) &&
          c.type !== 'balance' &&
          handles.has(c.handle) &&
          handles.get(c.handle).joint !== undefined &&
          // an equal joins two parts (two figures' hands): both handles on joints
          (c.type !== 'equal' || handles.get(c.handle2)?.joint !== undefined),
      )
      .map((c) => {
        const h = handles.get(c.handle),
          h2 = c.type === 'equal' ? handles.get(c.handle2) : null;
        const joints = this.lockJoints(c.name ?? c.handle, h.joint);
        if (h2) for (const j of this.lockJoints(c.name ?? c.handle, h2.joint)) if (!joints.includes(j)) joints.push(j);
        return h2 ? { constraint: c, handle: h, handle2: h2, joints } : { constraint: c, handle: h, joints };
      });
  }

  /**
   * The locks a motion of the chain disturbs, with the joints that may move to hold them
   * added to `moving`: a lock whose part the chain moves, then any lock whose part the joints
   * holding an equal move (an equal between two figures' hands moves the other figure, whose
   * own locks then hold too).
   */
  heldLocks(locks, chain, moving) {
    const fig = this.store.figure;
    const held = [],
      moved = new Set();
    const below = (js) => {
      for (const j of js) for (let k = j; k < fig.jointCount; k++) if (!moved.has(k) && isBelow(fig, k, j)) moved.add(k);
    };
    below(chain);
    const parts = (l) => [l.handle, l.handle2].filter(Boolean).map((h) => fig.jointNames.indexOf(h.joint));
    for (let grew = true; grew;) {
      grew = false;
      for (const l of locks) {
        if (held.includes(l) || !parts(l).some((j) => moved.has(j))) continue;
        held.push(l);
        for (const j of l.joints) moving.add(j);
        if (l.handle2) below(l.joints.filter((j) => fig.joints[j].type !== 'fixed'));
        grew = true;
      }
    }
    return held;
  }

  /**
   * A constraint system over the figure with the given locks, read by the module's scene
   * reader (the reader of `marionette pose`; its errors name "locks:line: field"): the
   * document's handles of the locks and their constraints at this frame, that is without the
   * members that say how they run over time (docs/sequence.md: `frames`, `lock`,
   * `target_keys`, `target_interpolation`). A pin or an orientation without a target (or
   * with its target keyed) holds where its handle is now; a keyed plane or line passes there
   * along its keyed direction (keyedPlanes). Room for the drag's handles and comfort's
   * balance. Returns
   * {sys, cons, handleIndex}.
   */
  buildSystem(locks, extraHandles = 0) {
    const handles = [],
      handleIndex = new Map();
    for (const l of locks)
      for (const h of [l.handle, l.handle2])
        if (h && !handleIndex.has(h.name)) {
          handleIndex.set(h.name, handles.length);
          handles.push(h);
        }
    const constraints = this.keyedPlanes(locks, (l, dir) => {
      const { frames, lock, target_keys, target_interpolation, ...atFrame } = l.constraint;
      void [frames, lock, target_keys, target_interpolation];
      if (dir) {
        // a plane or a line whose target is keyed: through where its handle is now, as a
        // pin without target holds, along the keyed direction at this frame
        atFrame.origin = handleValue(this.store.figure, l.handle).pos;
        atFrame[l.constraint.type === 'plane' ? 'normal' : 'direction'] = dir;
      }
      return atFrame;
    });
    const sys = this.store.m.constraintSystemFromDocument(
      [this.store.figure],
      { handles, constraints },
      { name: 'locks', spareHandles: 5 + extraHandles, spareConstraints: 3 },
    );
    return { sys, cons: constraints.map((_, i) => i), handleIndex };
  }

  /**
   * each(lock, dir) over the locks, dir the keyed direction at the frame of a plane or line
   * lock whose target is keyed (`target_keys`), else null: read by the module's sequence
   * reader (the document's constraint at its index, Sequence.targetAt), only when there is one.
   */
  keyedPlanes(locks, each) {
    const keyed = (c) => (c.type === 'plane' || c.type === 'line') && c.target_keys?.length;
    if (!locks.some((l) => keyed(l.constraint))) return locks.map((l) => each(l, null));
    const store = this.store,
      fig = figureFor(store),
      seq = fullSequence(store.m, fig, store.doc);
    try {
      return locks.map((l) =>
        keyed(l.constraint) ? each(l, seq.targetAt(store.doc.constraints.indexOf(l.constraint), store.ui.frame).dir) : each(l, null),
      );
    } finally {
      seq.dispose();
      fig.dispose();
    }
  }

  /**
   * Comfort and balance for a drag's system (editor.json `comfort` and `balance`; each on by
   * default for a figure with feet): comfort pulls the moving joints toward the rest pose (the
   * dragged limb free, the core stiffer, also where the drag's chain runs through it), in the
   * null space of the locks (Welman 5.2.2's applied forces); balance
   * keeps the centre of mass over the support polygon of the locked feet (Welman 7.2.1: the
   * convex hull on the ground of the foot and toe joints at or below a locked joint, as the
   * Animate menu's balance), an inequality the solver holds with the locks. Balance is only
   * added when the centre of mass is over that polygon when the drag begins (never a jump to
   * it) and the figure has masses. Returns {balance: constraint index or -1, polygon}.
   */
  applyComfort(sys, chain, locks) {
    const fig = this.store.figure;
    if (comfortOn(this.store.settings, fig)) {
      sys.setComfort({ gain: COMFORT_GAIN });
      const core = coreJoints(fig);
      for (const j of core) if (fig.joints[j].type !== 'fixed') sys.setComfortWeight(j, CORE_WEIGHT);
      for (const j of chain) if (!core.has(j)) sys.setComfortWeight(j, 0);
    }
    if (!comfortOn(this.store.settings, fig, 'balance')) return { balance: -1, polygon: null };
    const lockedJoints = locks.map((l) => fig.jointNames.indexOf(l.handle.joint)).filter((j) => j >= 0);
    const feet = (j) => lockedJoints.some((l) => isBelow(fig, j, l) || (isBelow(fig, l, j) && fig.joints[l].parent === j));
    const poly = lockedJoints.length ? feetPolygon(fig, feet) : null;
    if (!poly || poly.length < 3) return { balance: -1, polygon: null };
    let com;
    try {
      const h = sys.addHandle({ type: 'com', joint: -1 });
      com = sys.handleValue(h).position;
      const P = fig.positions;
      let y0 = Infinity,
        y1 = -Infinity;
      for (let j = 0; j < fig.jointCount; j++) {
        y0 = Math.min(y0, P[3 * j + 1]);
        y1 = Math.max(y1, P[3 * j + 1]);
      }
      const inside = insideDistance(poly, com);
      if (!(inside > 0)) return { balance: -1, polygon: poly };
      const margin = Math.min(0.006 * (y1 - y0), 0.5 * inside);
      const c = sys.addConstraint({ type: 'balance', handle: h, polygon: poly, up: [0, 1, 0], margin });
      return { balance: c, polygon: poly };
    } catch {
      return { balance: -1, polygon: poly }; // a figure without masses: no centre of mass
    }
  }

  /** Mobility of every joint: frozen outside `moving`, else the user's weight. */
  applyScales(sys, moving) {
    const fig = this.store.figure,
      w = this.settings.weights;
    for (let j = 0; j < fig.jointCount; j++) {
      if (fig.joints[j].type === 'fixed') continue;
      sys.setJointScale(j, moving.has(j) ? (w[fig.jointNames[j]] ?? 1) : 0);
    }
  }

  /**
   * Starts dragging joint j: the chain, the locks it disturbs, the system. A part that starts
   * at its parent's place (a CMU skeleton's LowerBack at the Hips) drags that place: the drag
   * is of the topmost site there. The root site (no parent to turn it) moves itself: its
   * translations (a free joint's, slides) carry the whole figure, and every active lock is
   * held by its own joints, so with the feet locked the body moves over them (Fig. 6.4).
   */
  begin(joint, view, ndc, together = []) {
    const st = this.settings,
      vp = this.viewport,
      fig = this.store.figure;
    // the joint a press drags: its site's, or the topmost site at its place; and the chain
    // that moves it (the root moves itself)
    const resolve = (j) => {
      let site = vp.sites[vp.siteOf[j]];
      while (site.samePlace && site.parent >= 0) site = vp.sites[site.parent];
      const d = site.joints[site.joints.length - 1];
      let c = dragChain(vp.sites, vp.siteOf, d, st.dragMode, st.dragBase, fig);
      const r = !c.length && site.parent < 0;
      if (r) c = site.joints.filter((x) => fig.joints[x].type === 'free' || fig.joints[x].type === 'slide');
      return { joint: d, chain: c, root: r };
    };
    const main = resolve(joint);
    let chain = main.chain;
    const root = main.root;
    if (!chain.length) return null;
    joint = main.joint;
    // joints selected with it go along, each pulled by the same displacement as the mouse's
    const extras = together.map(resolve).filter((x) => x.chain.length && x.joint !== joint);
    for (const x of extras) chain = [...chain, ...x.chain.filter((j) => !chain.includes(j))];
    const moving = new Set(chain);
    // locks whose part the chain moves: their contributing joints may move to hold them
    const held = this.heldLocks(this.activeLocks(), chain, moving);
    const qBefore = Float64Array.from(fig.q);
    const useIK = held.length === 0 && !root && !extras.length;
    const s = { joint, view, chain, moving, qBefore, push: 0, useIK, locks: held, ndc, goal: null, moved: false };
    if (!useIK) {
      const { sys, cons } = this.buildSystem(held, extras.length);
      s.sys = sys;
      s.cons = cons;
      s.hand = sys.addHandle({ joint });
      s.start = vp.jointPosition(joint);
      s.extras = extras.map((x) => ({ joint: x.joint, handle: sys.addHandle({ joint: x.joint }), start: vp.jointPosition(x.joint) }));
      this.applyScales(sys, moving);
      s.comfort = this.applyComfort(sys, root ? [] : chain, held);
      this._rehearse(s);
    }
    this.session = s;
    this.stats.dragMs = [];
    this.stats.moveMs = [];
    this.stats.iterations = [];
    vp.setHighlight({ selected: joint, chain: moving, locked: new Set(held.map((l) => fig.jointNames.indexOf(l.handle.joint))) });
    return s;
  }

  /**
   * Starts turning joint j's part about the axis a view looks along (the rotate ring): the
   * goal is an orientation of the part's frame (an orientation handle dragged to a target
   * rotation) that the joints of its own site reach (the part turns about its joint, as a
   * bone does in pose mode), the locks they disturb held.
   */
  beginRotate(joint, view) {
    const vp = this.viewport,
      fig = this.store.figure;
    const site = vp.sites[vp.siteOf[joint]];
    joint = site.joints[site.joints.length - 1];
    const own = site.joints.filter((j) => fig.joints[j].type !== 'fixed' && fig.joints[j].type !== 'slide');
    const chain = own;
    if (!own.length) return null;
    const moving = new Set(chain);
    const held = this.heldLocks(this.activeLocks(), chain, moving);
    const { sys, cons } = this.buildSystem(held, 1);
    const q0 = quatOfFrame(fig, joint);
    const s = {
      joint,
      view,
      chain,
      moving,
      qBefore: Float64Array.from(fig.q),
      push: 0,
      useIK: false,
      locks: held,
      sys,
      cons,
      rotate: true,
      axis: vp.viewAxis(view),
      qStart: new THREE.Quaternion(q0[1], q0[2], q0[3], q0[0]),
      extras: [],
      moved: false,
    };
    s.hand = sys.addHandle({ joint, type: 'orientation' });
    this.applyScales(sys, moving);
    s.comfort = this.applyComfort(sys, chain, held);
    this._rehearse(s);
    this.session = s;
    this.stats.dragMs = [];
    this.stats.moveMs = [];
    vp.setHighlight({ selected: joint, chain: moving, locked: new Set(held.map((l) => fig.jointNames.indexOf(l.handle.joint))) });
    return s;
  }

  /**
   * Two solves of the new system, the pose then put back as it was: the first solve of a
   * system runs code the page has not run before (the browser compiles the module's
   * functions, and the page's, when they are first called), which made the drag's first
   * frame the slowest by far. Done here, at the press, the drag's frames all run warm: a pull
   * of the dragged point by a hundredth of the figure's size (a turn of a hundredth of a
   * radian for the rotate ring: the path a moving drag takes, comfort, balance, steps held at
   * limits), then one with the part where it is (the solver left as a new one is, its last
   * drag reached). The pose, and what the drag then does, are unchanged.
   */
  _rehearse(s) {
    const fig = this.store.figure,
      st = this.settings,
      q = Float64Array.from(fig.q),
      opts = { method: st.csolver, maxIters: st.iterations, tol: LOCK_TOL };
    const pull = (k) => {
      if (s.rotate) {
        const r = new THREE.Quaternion().setFromAxisAngle(s.axis, 0.01 * k).multiply(s.qStart);
        s.sys.dragRotation(s.hand, [r.w, r.x, r.y, r.z]);
      } else {
        const at = s.start,
          d = 0.01 * k * this.viewport.size;
        s.sys.drag(s.hand, [at.x + d, at.y + d, at.z]);
      }
      s.sys.solve(opts);
      for (const c of s.cons) s.sys.residual(c);
      fig.setQ(q).fk();
      s.sys.invalidate();
    };
    pull(1);
    pull(0);
    s.sys.release(s.hand);
  }

  /**
   * The module's solver brought up to speed when the page opens. The browser runs the
   * module's functions first from a quick compile and, while the page runs, recompiles the
   * busiest ones with its optimising compiler on another thread; during a drag that
   * recompilation competed with the drag for the processor (traced on a two-core machine:
   * the optimising compiler ran through the first drag's slowest frames). So the page drags
   * a part of the figure here WARM_ROUNDS times (at most WARM_MS): its highest end joint pulled in a small
   * circle, its two lowest end joints pinned (a standing figure's feet), comfort, balance
   * and the solver as the settings have them, the path a drag takes. Then it puts the pose
   * back bit for bit. Nothing is drawn, emitted, recorded or saved. Best effort: a figure the
   * warm-up cannot drag is left alone. Returns the number of solves run.
   */
  warm(rounds = WARM_ROUNDS) {
    const fig = this.store.figure,
      st = this.settings;
    let done = 0;
    if (this.session || !fig || fig.jointCount < 2) return done;
    const q = Float64Array.from(fig.q),
      P = fig.positions,
      kids = new Array(fig.jointCount).fill(0);
    for (const j of fig.joints) if (j.parent >= 0) kids[j.parent]++;
    const ends = [];
    for (let j = 0; j < fig.jointCount; j++) if (!kids[j]) ends.push(j);
    ends.sort((a, b) => P[3 * a + 1] - P[3 * b + 1]);
    const pinned = ends.length >= 3 ? ends.slice(0, 2) : [];
    const hand = ends[ends.length - 1];
    if (hand === undefined || pinned.includes(hand)) return done;
    const locks = pinned.map((j, i) => ({
      handle: { name: `warm ${i}`, joint: fig.jointNames[j] },
      constraint: { type: 'pin', handle: `warm ${i}` },
    }));
    let sys = null;
    try {
      sys = this.buildSystem(locks).sys;
      const h = sys.addHandle({ joint: hand }),
        moving = new Set();
      for (let j = 0; j < fig.jointCount; j++) if (fig.joints[j].type !== 'fixed') moving.add(j);
      this.applyScales(sys, moving);
      this.applyComfort(sys, [], locks);
      const at = [P[3 * hand], P[3 * hand + 1], P[3 * hand + 2]],
        r = 0.02 * this.viewport.size,
        opts = { method: st.csolver, maxIters: st.iterations, tol: LOCK_TOL };
      const t0 = performance.now();
      for (let k = 0; k < rounds && performance.now() - t0 < WARM_MS; k++) {
        const a = (2 * Math.PI * k) / 50;
        sys.drag(h, [at[0] + r * Math.sin(a), at[1] - r * (1 - Math.cos(a)), at[2]]);
        sys.solve(opts);
        done++;
      }
    } catch {
      // best effort: the drag itself reports what is wrong with a figure
    } finally {
      sys?.dispose();
      fig.setQ(q).fk();
    }
    return done;
  }

  /** One refresh of a turn: the part's frame asked to be its start turned by `angle` (rad)
   * about the view's axis, one solve. */
  rotate(angle) {
    const s = this.session;
    if (!s?.rotate) return;
    const t0 = performance.now(),
      fig = this.store.figure,
      st = this.settings;
    const q = new THREE.Quaternion().setFromAxisAngle(s.axis, angle).multiply(s.qStart);
    s.sys.dragRotation(s.hand, [q.w, q.x, q.y, q.z]);
    s.sys.solve({ method: st.csolver, maxIters: st.iterations, tol: LOCK_TOL });
    let worst = 0;
    for (const c of s.cons) worst = Math.max(worst, s.sys.residual(c));
    this.stats.maxViolation = worst;
    this.stats.dragMs.push(performance.now() - t0);
    s.moved = true;
    this.store.setPose(fig.q);
    this.stats.moveMs.push(performance.now() - t0);
  }

  /** One refresh of the drag: the goal from the ray, one solve. */
  move(ndc, pushDelta = 0) {
    const s = this.session;
    if (!s) return;
    const tMove = performance.now();
    if (ndc) s.ndc = ndc;
    s.push += pushDelta;
    const vp = this.viewport,
      fig = this.store.figure;
    const ray = vp.rayAt(s.view, s.ndc).ray;
    const p = vp.jointPosition(s.joint);
    const goal = goalOnRay(ray, p, s.view === 'perspective' ? s.push : 0);
    if (s.view === 'perspective') s.push = 0; // the push moved the goal; the next ray starts there
    s.goal = goal;
    const st = this.settings;
    const t0 = performance.now();
    if (s.useIK) {
      const top = s.chain[0],
        base = fig.joints[top].parent;
      fig.solveIK(
        { base, tip: s.joint, target: toFrame(fig, base, goal) },
        { method: st.ikMethod, maxIters: st.iterations, respectLimits: true, timeoutMs: 0 },
      );
      this._restoreFrozen(s);
    } else {
      s.sys.drag(s.hand, [goal.x, goal.y, goal.z]);
      for (const x of s.extras) {
        const t = x.start.clone().add(goal).sub(s.start);
        s.sys.drag(x.handle, [t.x, t.y, t.z]);
      }
      const r = s.sys.solve({ method: st.csolver, maxIters: st.iterations, tol: LOCK_TOL });
      let worst = 0;
      for (const c of s.cons) worst = Math.max(worst, s.sys.residual(c));
      this.stats.maxViolation = worst;
      // the solver's work of the frame, which the machine's load does not change
      this.stats.iterations.push(r.iterations);
      if (this.stats.iterations.length > 1000) this.stats.iterations.shift();
    }
    const ms = performance.now() - t0;
    this.stats.dragMs.push(ms);
    if (this.stats.dragMs.length > 1000) this.stats.dragMs.shift();
    s.moved = true;
    vp.showGoal(goal);
    this.store.setPose(fig.q);
    // the page's JavaScript work for this mouse event: the solve, the views' and panels'
    // updates (not the drawing, which the next animation frame does on the GPU)
    this.stats.moveMs.push(performance.now() - tMove);
    if (this.stats.moveMs.length > 1000) this.stats.moveMs.shift();
  }

  // a single-chain IK solve moves only the chain (base..tip); nothing else changes
  _restoreFrozen() {}

  /** Escape or a right-click during a drag: the pose (and a moved lock's target) as it was
   * when the drag began; nothing is recorded or saved. Returns whether a drag was cancelled. */
  cancel() {
    const s = this.session,
      e = this.lockEdit;
    if (s) {
      this.session = null;
      if (s.sys) {
        s.sys.release(s.hand);
        s.sys.dispose();
      }
      this.viewport.showGoal(null);
      this.viewport.setHighlight({ selected: s.joint, chain: new Set(), locked: new Set() });
      this.store.setPose(s.qBefore);
      return true;
    }
    if (e?.view) {
      this.lockEdit = null;
      this.viewport.showGoal(null);
      if (e.moved) {
        this.store.doc = JSON.parse(e.docBefore);
        this.store._invalidateSequence();
        this.store.setPose(e.qBefore);
        this.store.emit('doc', { label: 'cancel' });
      }
      return true;
    }
    return false;
  }

  end() {
    const s = this.session;
    if (!s) return;
    this.session = null;
    if (s.sys) {
      s.sys.release(s.hand);
      s.sys.dispose();
    }
    this.viewport.showGoal(null);
    this.viewport.setHighlight({ selected: s.joint, chain: new Set(), locked: new Set() });
    if (s.moved) this.store.commitPose('drag', s.qBefore);
  }

  /** The "Solve" button and the refresh after an FK edit: iterate until the locks hold. */
  solveLocks(maxRounds = 50) {
    const locks = this.activeLocks();
    if (!locks.length) return { ok: true, maxViolation: 0 };
    const fig = this.store.figure;
    const { sys, cons } = this.buildSystem(locks);
    const moving = new Set();
    for (const l of locks) for (const j of l.joints) moving.add(j);
    this.applyScales(sys, moving);
    let r = null;
    for (let i = 0; i < maxRounds; i++) {
      r = sys.solve({ method: this.settings.csolver, maxIters: this.settings.iterations, tol: LOCK_TOL });
      if (r.ok) break;
    }
    let worst = 0;
    for (const c of cons) worst = Math.max(worst, sys.residual(c));
    sys.dispose();
    this.stats.maxViolation = worst;
    this.store.setPose(fig.q);
    return { ok: r.ok, maxViolation: worst, status: r.status };
  }

  // ---- a lock's target moved (Welman 6.3): its marker dragged, or its sliders ----

  /** The point a lock's marker stands at: a pin's target, a plane's origin, else the part. */
  lockPoint(c) {
    if (c.type === 'pin' && c.target) return new THREE.Vector3(...c.target);
    if (c.type === 'plane' && c.origin) return new THREE.Vector3(...c.origin);
    const h = (this.store.doc.handles ?? []).find((x) => x.name === c.handle);
    const j = h?.joint !== undefined ? this.store.figure.jointNames.indexOf(h.joint) : -1;
    return j >= 0 ? this.viewport.jointPosition(j) : null;
  }

  /** Starts an edit of lock `name`'s target: remembers the document and pose for undo. */
  beginLockEdit(name) {
    if (this.lockEdit?.name === name) return this.lockEdit;
    const c = (this.store.doc.constraints ?? []).find((x) => x.name === name);
    if (!c) return null;
    this.lockEdit = { name, docBefore: JSON.stringify(this.store.doc), qBefore: Float64Array.from(this.store.figure.q), moved: false };
    this.stats.dragMs = [];
    return this.lockEdit;
  }

  /** Changes the lock's target live (edit(c) mutates the constraint) and lets the figure
   * follow: every active lock held by the chosen solver. */
  editLock(edit) {
    const e = this.lockEdit;
    if (!e) return;
    const c = this.store.doc.constraints.find((x) => x.name === e.name);
    if (!c) return;
    edit(c);
    e.moved = true;
    this.store._invalidateSequence();
    const t0 = performance.now();
    this.solveLocks(5);
    this.stats.dragMs.push(performance.now() - t0);
    this.viewport.updateLocks();
  }

  /** A marker drag: the new target is the point on the ray under the mouse closest to the
   * marker (Fig. 6.3, as a part's drag): in an orthographic view it moves parallel to the screen. */
  beginLockDrag(name, view) {
    const e = this.beginLockEdit(name);
    if (!e) return null;
    const c = this.store.doc.constraints.find((x) => x.name === name);
    if (c.type !== 'pin' && c.type !== 'plane') {
      this.lockEdit = null;
      return null;
    }
    e.view = view;
    e.key = c.type === 'pin' ? 'target' : 'origin';
    e.point = this.lockPoint(c);
    return e;
  }
  moveLockDrag(ndc, push = 0) {
    const e = this.lockEdit;
    if (!e?.view) return;
    const ray = this.viewport.rayAt(e.view, ndc).ray;
    const goal = goalOnRay(ray, e.point, e.view === 'perspective' ? push : 0);
    e.point = goal;
    this.editLock((c) => {
      c[e.key] = [goal.x, goal.y, goal.z];
    });
    this.viewport.showGoal(goal);
  }

  /** Ends a lock edit: one undo step (target and pose), saved. */
  endLockEdit(label = 'move lock') {
    const e = this.lockEdit;
    this.lockEdit = null;
    this.viewport.showGoal(null);
    if (e?.moved) this.store.commitEdit(`${label} ${e.name}`, e.docBefore, e.qBefore);
  }

  /** Adds a lock of a kind on a joint at its current place; returns the constraint names. */
  addLock(kind, jointName) {
    const fig = this.store.figure,
      j = fig.jointNames.indexOf(jointName);
    const at = fig.positions.subarray(3 * j, 3 * j + 3);
    const recipe = lockRecipe(kind, jointName, fig, at);
    return this.store.apply(`lock ${jointName}`, (doc) => {
      doc.handles ??= [];
      doc.constraints ??= [];
      const hn = doc.handles.map((h) => h.name),
        cn = doc.constraints.map((c) => c.name).filter(Boolean);
      const label =
        { position: 'position', orientation: 'orientation', combined: 'lock', plane: 'plane' }[kind] ?? `orientation ${kind.slice(-1)}`;
      const handleNames = recipe.handles.map((h) => {
        const name = uniqueName(`${jointName} ${h.type === 'orientation' ? 'frame' : 'point'}`, hn);
        hn.push(name);
        const existing = doc.handles.find((x) => x.name === name);
        if (!existing) doc.handles.push({ name, ...(h.type === 'point' ? {} : { type: h.type }), joint: jointName });
        return name;
      });
      const base = uniqueName(`${jointName} ${label}`, cn);
      return recipe.constraints.map((c, i) => {
        const { handleIndex, ...rest } = c;
        const name = recipe.constraints.length > 1 ? uniqueName(`${base} ${c.type}`, cn) : base;
        cn.push(name);
        doc.constraints.push({ type: rest.type, name, handle: handleNames[handleIndex ?? 0], ...withoutType(rest) });
        void i;
        return name;
      });
    });
  }

  /**
   * Joins two parts (two figures' hands): a point handle on each and an `equal` constraint
   * between them (Welman 6.1, 7.3), the figures then moved by every lock until they meet.
   * One undo step; returns the constraint's name.
   */
  addJoin(jointA, jointB) {
    const store = this.store,
      doc = store.doc;
    const docBefore = JSON.stringify(doc),
      qBefore = Float64Array.from(store.figure.q);
    doc.handles ??= [];
    doc.constraints ??= [];
    const hn = doc.handles.map((h) => h.name),
      cn = doc.constraints.map((c) => c.name).filter(Boolean);
    const [ha, hb] = [jointA, jointB].map((joint) => {
      const name = uniqueName(`${joint} point`, hn);
      hn.push(name);
      doc.handles.push({ name, joint });
      return name;
    });
    const name = uniqueName(`${jointA} = ${jointB}`, cn);
    doc.constraints.push({ name, type: 'equal', handle: ha, handle2: hb });
    store._invalidateSequence();
    this.solveLocks(200);
    store.commitEdit(`join ${jointA} and ${jointB}`, docBefore, qBefore);
    return name;
  }

  deleteLock(name) {
    this.store.apply(`delete lock ${name}`, (doc) => {
      const c = doc.constraints.find((x) => x.name === name);
      if (!c) return;
      doc.constraints = doc.constraints.filter((x) => x !== c);
      // a handle no constraint uses any more goes too
      const used = new Set(doc.constraints.flatMap((x) => [x.handle, x.handle2]).filter(Boolean));
      doc.handles = doc.handles.filter((h) => used.has(h.name));
    });
  }
}

function withoutType(c) {
  const { type, ...rest } = c;
  void type;
  return rest;
}

// is joint k in the subtree of joint j (or j itself)?
function isBelow(fig, k, j) {
  for (let a = k; a >= 0; a = fig.joints[a].parent) if (a === j) return true;
  return false;
}

// a world point in a joint's frame (the IK target is given in the base frame); -1: world
function toFrame(fig, j, p) {
  if (j < 0) return [p.x, p.y, p.z];
  const f = fig.frames,
    b = 12 * j;
  const d = [p.x - f[b + 9], p.y - f[b + 10], p.z - f[b + 11]];
  // R^T d with R row-major
  return [
    f[b] * d[0] + f[b + 3] * d[1] + f[b + 6] * d[2],
    f[b + 1] * d[0] + f[b + 4] * d[1] + f[b + 7] * d[2],
    f[b + 2] * d[0] + f[b + 5] * d[1] + f[b + 8] * d[2],
  ];
}
