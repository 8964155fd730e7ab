// Documents of several figures (docs/sequence.md "Several figures"; Welman 6.1, 7.3) in the
// editor. The page poses one module Figure, so the figures of a document are joined into
// one: each figure's joints renamed `figure/joint` (the names the document's handles use),
// each figure placed where it stands by its free root's state in the keys, moved by the
// figure's `position` and `rotation` as the reader moves it (and moved back when saved). The keys of the figures
// become keys of the joined figure at every frame any figure has a key (a figure without a
// key there is keyed at its in-between, from its own keys and interpolation), each
// figure's interpolation the modes of its joints, the figures' roots as `roots` (name ->
// joint) and their placements as `places`. Saving splits the joined document back
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

const conj = (q) => [q[0], -q[1], -q[2], -q[3]];

/**
 * A free root's value ({position, rotation}) moved by a figure's placement, as the reader
 * moves it (src/doc/doc_figures.c, mn_doc_place_free_root: T = Trans(off + p) Rot(orient)
 * Rot(quat), so p' = R (off + p) + P - off and quat' = orient^-1 R orient quat), or moved
 * back (inverse). place: {R, P, off, orient}.
 */
export function placeRoot(v, place, inverse = false) {
  const { R, P, off, orient } = place;
  const Ri = inverse ? conj(R) : R;
  const a = inverse
    ? [v.position[0] + off[0] - P[0], v.position[1] + off[1] - P[1], v.position[2] + off[2] - P[2]]
    : v.position.map((x, k) => x + off[k]);
  const b = qrot(Ri, a);
  const position = inverse ? b.map((x, k) => x - off[k]) : b.map((x, k) => x + P[k] - off[k]);
  const rotation = unit(qmul(qmul(conj(orient), qmul(Ri, orient)), v.rotation));
  return { position, rotation };
}

/**
 * The figure documents of the figures joined into one: joints `name/joint`, parents
 * shifted; each figure stands where the document places it through its free root's state
 * (placeRoot), as the reader places it. parts: [{name, doc (a figure document)}]. Skins are
 * left out (the joints are drawn).
 */
export function joinFigureDocs(parts) {
  const joints = [];
  for (const part of parts) {
    const base = joints.length;
    for (const j of part.doc.joints) joints.push({ ...j, name: `${part.name}/${j.name}`, parent: j.parent >= 0 ? j.parent + base : -1 });
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
  // a figure's own layers, time warp and contact tracks (docs/sequence.md) are not edited
  // here yet: such a document is refused, naming the member, and never saved over
  doc.figures.forEach((f, i) => {
    for (const k of ['layers', 'time_warp', 'contacts'])
      if (f[k] !== undefined && !(Array.isArray(f[k]) && f[k].length === 0))
        throw new Error(
          `figures[${i}].${k}: the editor does not edit a figure's own layers, time warp or contact tracks yet (anim bake and anim info read them)`,
        );
  });
  const parts = [];
  for (const f of doc.figures) {
    const fd = await figureDoc(f.file, f.root); // re-rooted where the figure says
    parts.push({ ...f, doc: fd });
  }
  const joined = joinFigureDocs(parts);
  const frames = [...new Set(doc.figures.flatMap((f) => (f.keys ?? []).map((k) => k.frame)))].sort((a, b) => a - b);
  const keys = frames.map((frame) => ({ frame, pose: {} }));
  const interp = { joints: {} };
  const meta = [],
    places = {};
  for (const part of parts) {
    const fig = m.figureFromDocument(part.doc);
    try {
      // where the figure stands: its free root's state moved, as the reader does (a figure
      // whose root is not free cannot be placed)
      const r = fig.joints.findIndex((j) => j.parent < 0),
        rj = part.doc.joints[r];
      const place = {
        R: unit(part.rotation ?? [1, 0, 0, 0]),
        P: part.position ?? [0, 0, 0],
        off: rj.offset ?? [0, 0, 0],
        orient: unit(rj.orient ?? [1, 0, 0, 0]),
      };
      const placed = part.position !== undefined || part.rotation !== undefined;
      if (placed && (fig.joints[r].type !== 'free' || fig.joints.filter((j) => j.parent < 0).length !== 1))
        throw new Error(`figures: ${part.name}: a figure whose root is not free cannot be placed`);
      const rest = qToPose(fig, fig.restQ)[fig.jointNames[r]];
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
          const pose = { ...(k ? k.pose : qToPose(fig, seq.sampleBlendQ(key.frame))) };
          if (placed) {
            const v = pose[fig.jointNames[r]] ?? {};
            pose[fig.jointNames[r]] = placeRoot({ position: v.position ?? rest.position, rotation: v.rotation ?? rest.rotation }, place);
          }
          Object.assign(key.pose, prefixed(part.name, pose));
          if (k?.tcb && !key.tcb) key.tcb = k.tcb;
        });
      } finally {
        seq.dispose();
      }
      const { doc: figDoc, keys: figKeys, root: figRoot, ...entry } = part;
      void figDoc;
      void figKeys;
      void figRoot;
      meta.push({ ...entry, joints: fig.jointNames.slice(), rootJoint: fig.jointNames[r] });
      if (placed) places[part.name] = { ...place, root: fig.jointNames[r] };
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
    return f ? { ...rest, joint: `${f.name}/${f.rootJoint}` } : { ...h };
  });
  const out = { fps: doc.fps ?? 30, keys, interpolation: interp, handles, constraints: structuredClone(doc.constraints ?? []) };
  if (doc.comment !== undefined) out.comment = doc.comment;
  // each figure's `root` (docs/sequence.md "The root"), part of the document the page edits
  const roots = Object.fromEntries(doc.figures.filter((f) => f.root).map((f) => [f.name, f.root]));
  if (Object.keys(roots).length) out.roots = roots;
  // how each placed figure's root state was moved (splitDoc moves it back; Make root, which
  // changes the root, changes it: part of the document, so undo keeps them together)
  if (Object.keys(places).length) out.places = places;
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
    if (doc.roots?.[f.name]) out.root = doc.roots[f.name];
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
      // the root's state back in the figure's own frame
      const place = doc.places?.[f.name],
        rv = place && pose[place.root];
      if (rv?.position && rv?.rotation) pose[place.root] = placeRoot(rv, place, true);
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
