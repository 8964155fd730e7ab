// Documents of several figures (docs/sequence.md "Several figures"; Welman 6.1, 7.3) in the
// editor. The page poses one module Figure, so the figures of a document are joined into
// one: each figure's joints renamed `figure/joint` (the names the document's handles use),
// each figure's root placed where the figure stands (its offset and orientation moved by
// the figure's `position` and `rotation`: the same world frames as the reader's moving of a
// free root's state, with the keys left in the figure's own frame). The keys of the figures
// become keys of the joined figure at every frame any figure has a key (a figure without a
// key there is keyed at its in-between, from its own keys and interpolation), each
// figure's interpolation the modes of its joints. Saving splits the joined document back
// into the figures' keys and interpolation. Pure functions but for the module's Figures and
// Sequences they make.
import { poseToQ, qToPose } from './docmodel.js';

/** Is doc a sequence document of several figures? */
export function isMulti(doc) {
  return Array.isArray(doc?.figures);
}

// q1 q2 (w, x, y, z)
function qmul(a, b) {
  return [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
}
function qrot(q, v) {
  const [w, x, y, z] = q;
  const t = [2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])];
  return [v[0] + w * t[0] + (y * t[2] - z * t[1]), v[1] + w * t[1] + (z * t[0] - x * t[2]), v[2] + w * t[2] + (x * t[1] - y * t[0])];
}
function unit(q) {
  const n = Math.hypot(...q);
  return q.map((x) => x / n);
}

/**
 * The figure documents of the figures joined into one: joints `name/joint`, parents
 * shifted, each root's offset and orientation moved by the figure's placement (T = P
 * Trans(offset) Rot(orient) M(q) = Trans(R offset + p) Rot(R orient) M(q)). parts: [{name,
 * doc (a figure document), position, rotation}]. Skins are left out (the joints are drawn).
 */
export function joinFigureDocs(parts) {
  const joints = [];
  for (const part of parts) {
    const base = joints.length;
    const R = unit(part.rotation ?? [1, 0, 0, 0]),
      p = part.position ?? [0, 0, 0];
    for (const j of part.doc.joints) {
      const out = { ...j, name: `${part.name}/${j.name}`, parent: j.parent >= 0 ? j.parent + base : -1 };
      if (j.parent < 0) {
        const off = qrot(R, j.offset ?? [0, 0, 0]);
        out.offset = [off[0] + p[0], off[1] + p[1], off[2] + p[2]];
        out.orient = unit(qmul(R, j.orient ?? [1, 0, 0, 0]));
      }
      joints.push(out);
    }
  }
  return { format: 'marionette-figure', version: 1, name: parts.map((x) => x.name).join('+'), joints };
}

const prefixed = (name, pose) => Object.fromEntries(Object.entries(pose ?? {}).map(([k, v]) => [`${name}/${k}`, v]));

// a figure's interpolation as modes of each of its joints in the joined document (its own
// modes, then each joint's), so that the joined sequence interpolates it as it did alone
function jointModes(f, figure) {
  const own = f.interpolation ?? {},
    out = {};
  for (const j of figure.joints) {
    if (j.type === 'fixed') continue;
    const je = own.joints?.[j.name] ?? {};
    const modes = {};
    const rot = je.rotation ?? own.rotation,
      trans = je.translation ?? own.translation;
    if (rot !== undefined) modes.rotation = rot;
    if (trans !== undefined) modes.translation = trans;
    if (Object.keys(modes).length) out[`${f.name}/${j.name}`] = modes;
  }
  return out;
}

/**
 * Opens a document of several figures for the page: the figures' documents are fetched
 * through figureDoc(file) (null for the built-in stick figure when the server has none), the
 * module m makes their Figures. Returns {doc, figureDoc, multi}: the joined sequence
 * document the page edits, the joined figure document, and what splitting it back needs.
 */
export async function openFigures(m, doc, figureDoc) {
  const parts = [];
  for (const f of doc.figures) {
    const fd = await figureDoc(f.file);
    parts.push({ ...f, doc: fd });
  }
  const joined = joinFigureDocs(parts);
  const frames = [...new Set(doc.figures.flatMap((f) => (f.keys ?? []).map((k) => k.frame)))].sort((a, b) => a - b);
  const keys = frames.map((frame) => ({ frame, pose: {} }));
  const interp = { joints: {} };
  const meta = [];
  for (const part of parts) {
    const fig = m.figureFromDocument(part.doc);
    try {
      Object.assign(interp.joints, jointModes(part, fig));
      const own = part.interpolation ?? {};
      const seq = m.createSequence(fig, {
        fps: doc.fps ?? 30,
        rotation: own.rotation ?? 'default',
        translation: own.translation ?? 'default',
      });
      try {
        for (const [joint, modes] of Object.entries(own.joints ?? {})) seq.setInterpolation(modes, joint);
        for (const k of part.keys ?? []) {
          const i = seq.setKey(k.frame, poseToQ(fig, k.pose));
          if (k.tcb) seq.setKeyTCB(i, k.tcb);
        }
        keys.forEach((key) => {
          const k = (part.keys ?? []).find((x) => x.frame === key.frame);
          const pose = k ? k.pose : qToPose(fig, seq.sampleBlendQ(key.frame));
          Object.assign(key.pose, prefixed(part.name, pose));
          if (k?.tcb && !key.tcb) key.tcb = k.tcb;
        });
      } finally {
        seq.dispose();
      }
      const { doc: figDoc, keys: figKeys, ...rest } = part;
      void figDoc;
      void figKeys;
      meta.push({ ...rest, joints: fig.jointNames.slice(), root: fig.jointNames[fig.joints.findIndex((j) => j.parent < 0)] });
    } finally {
      fig.dispose();
    }
  }
  // a centre of mass of one figure (`figure` member): the centre of mass of its root's subtree
  const handles = (doc.handles ?? []).map((h) => {
    if (h.figure === undefined || h.joint !== undefined) return { ...h };
    const f = meta.find((x) => x.name === h.figure);
    const { figure, ...rest } = h;
    void figure;
    return f ? { ...rest, joint: `${f.name}/${f.root}` } : { ...h };
  });
  const out = { fps: doc.fps ?? 30, keys, interpolation: interp, handles, constraints: structuredClone(doc.constraints ?? []) };
  if (doc.comment !== undefined) out.comment = doc.comment;
  return { doc: out, figureDoc: joined, multi: { figures: meta } };
}

const sameModes = (a, b) => (a?.rotation ?? null) === (b?.rotation ?? null) && (a?.translation ?? null) === (b?.translation ?? null);

/**
 * The joined document the page edits as a document of several figures (docs/sequence.md):
 * each figure's keys (every key of the joined document, its joints' values), its
 * interpolation, and the handles and constraints over all of them.
 */
export function splitDoc(doc, multi) {
  const top = doc.interpolation ?? {};
  const figures = multi.figures.map((f) => {
    const pre = `${f.name}/`;
    const out = { name: f.name, file: f.file };
    if (f.comment !== undefined) out.comment = f.comment;
    if (f.position !== undefined) out.position = f.position;
    if (f.rotation !== undefined) out.rotation = f.rotation;
    // the figure's own modes when it had them (joints keyed with them need not say so), else
    // the document's
    const own = f.interpolation ?? {};
    const level =
      own.rotation !== undefined || own.translation !== undefined
        ? { rotation: own.rotation, translation: own.translation }
        : { rotation: top.rotation, translation: top.translation };
    const joints = {};
    for (const [name, modes] of Object.entries(top.joints ?? {})) {
      if (!name.startsWith(pre)) continue;
      if (sameModes(modes, level)) continue;
      joints[name.slice(pre.length)] = modes;
    }
    const interp = {};
    if (level.rotation !== undefined && level.rotation !== 'default') interp.rotation = level.rotation;
    if (level.translation !== undefined && level.translation !== 'default') interp.translation = level.translation;
    if (Object.keys(joints).length) interp.joints = joints;
    if (Object.keys(interp).length) out.interpolation = interp;
    out.keys = doc.keys.map((k) => {
      const pose = {};
      for (const [name, v] of Object.entries(k.pose ?? {})) if (name.startsWith(pre)) pose[name.slice(pre.length)] = v;
      return k.tcb ? { frame: k.frame, pose, tcb: k.tcb } : { frame: k.frame, pose };
    });
    return out;
  });
  const out = {};
  if (doc.comment !== undefined) out.comment = doc.comment;
  out.fps = doc.fps ?? 30;
  out.figures = figures;
  out.handles = doc.handles ?? [];
  out.constraints = doc.constraints ?? [];
  return out;
}

/** The figure a joint name of the joined figure belongs to ('' for a one-figure document). */
export function figureOfJoint(name) {
  const i = name.indexOf('/');
  return i < 0 ? '' : name.slice(0, i);
}
