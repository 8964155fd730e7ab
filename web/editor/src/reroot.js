// Make root (Welman 2.1.2: "an existing hierarchy around a new root joint at any time"; 6.3:
// a hand holding a bar, a foot planted). The sequence document records the joint as its
// `root` (a figure's `root` in a document of several figures; docs/sequence.md "The root"): the server answers the figure file's figure re-rooted
// there (/api/figure?root=), and every key is carried over by the module's rerootState, so
// each joint stays where it is at every key. The page then loads again on the new figure
// (the views, panels and animation are built for a figure); the undo history goes with it
// through sessionStorage, and undoing a change of root loads the page again the other way.
import { poseToQ, qToPose, scaleFigureDoc } from './docmodel.js';
import { beside } from './server.js';

const UNDO_KEY = 'marionette.undo';

/**
 * The figure a joint belongs to, as Make root sees it: the joint-name prefix of its joints
 * in the page's figure ('' for a document of one figure, `name/` for one of several), its
 * file, scale and current root (null: the file's own), and how the document records a root.
 */
function partOf(store, joint) {
  if (!store.multi) {
    const doc = store.doc;
    return {
      prefix: '',
      file: doc.figure,
      scale: doc.scale ?? 1,
      root: doc.root ?? null,
      record: (d, r) => (r ? (d.root = r) : delete d.root),
    };
  }
  const f = store.multi.figures.find((x) => joint.startsWith(`${x.name}/`));
  if (!f) return null;
  return {
    prefix: `${f.name}/`,
    file: f.file,
    scale: 1,
    root: store.doc.roots?.[f.name] ?? null,
    record: (d, r) => {
      d.roots ??= {};
      if (r) d.roots[f.name] = r;
      else delete d.roots[f.name];
      if (!Object.keys(d.roots).length) delete d.roots;
    },
  };
}

/** Why joint's figure cannot be re-rooted in the page ('' when it can). */
export function rerootRefusal(store, joint) {
  const part = partOf(store, joint);
  if (!part) return `${joint}: not a joint of a figure of the document`;
  if (store.figureDoc?.skin) return 'a skinned figure is not re-rooted (its skin follows the file\u2019s joints)';
  if ((store.doc.layers ?? []).length) return 'a sequence with layers is not re-rooted (its layers name the joints)';
  const roots = store.figure.joints.filter((j) => j.parent < 0 && j.name.startsWith(part.prefix));
  if (roots.length !== 1 || roots[0].type !== 'free')
    return 'only a figure with one free root (a person, a BVH skeleton) is re-rooted here';
  return '';
}

async function figureDoc(store, part, root) {
  const r = await store.server.figure(beside(store.sequencePath, part.file), root);
  if (!r.ok || !r.body) throw new Error(`${part.file}${root ? ` at ${root}` : ''}: ${r.body?.error ?? `HTTP ${r.status}`}`);
  return scaleFigureDoc(r.body, part.scale);
}

/** Saves, keeps the undo history (and the pose to show, q) for the page loaded again, and
 * loads it again. */
async function reloadWith(store, q) {
  const st = await store.save();
  if (st !== 'saved') throw new Error(`not saved (${store.saveError || st})`);
  const keep = (n) =>
    JSON.stringify({
      path: store.sequencePath,
      undo: store._undo.slice(-n),
      redo: store._redo.slice(-n),
      q: q ? Array.from(q) : null,
      frame: store.ui.frame,
    });
  for (const n of [200, 20, 1]) {
    try {
      sessionStorage.setItem(UNDO_KEY, keep(n));
      break;
    } catch {
      // too large for the session's storage: keep the last steps only
    }
  }
  setTimeout(() => location.reload(), 0);
}

/** After the page loaded again: the undo history and the pose it kept (for this sequence). */
export function restoreHistory(store) {
  const text = sessionStorage.getItem(UNDO_KEY);
  sessionStorage.removeItem(UNDO_KEY);
  if (!text) return false;
  try {
    const h = JSON.parse(text);
    if (h.path !== store.sequencePath) return false;
    store._undo = h.undo;
    store._redo = h.redo;
    if (h.frame === store.ui.frame && h.q?.length === store.figure.nq) store.setPose(Float64Array.from(h.q));
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes joint `name` the root of its figure, every joint where it is: the document's keys
 * (and the unkeyed pose) carried to the re-rooted figure, its per-joint interpolation moved
 * to the joints that carry each motion, the root recorded (`root`, or the figure's `root` in
 * a document of several figures; dropped when it is the file's own root again), one undo
 * step; then the page loads again. Resolves to false (with the reason in store.rerootError)
 * when it cannot.
 */
export async function makeRoot(store, name) {
  store.rerootError = rerootRefusal(store, name);
  if (store.rerootError) return false;
  const part = partOf(store, name),
    pre = part.prefix;
  let local = name.slice(pre.length);
  if (local.endsWith('~')) local = local.slice(0, -1); // a motion's own joint: its segment
  const rootNow = store.figure.joints.find((j) => j.parent < 0 && j.name.startsWith(pre)).name;
  if (rootNow === pre + local) {
    store.rerootError = `${name} is already the root`;
    return false;
  }
  const baseDoc = await figureDoc(store, part, null);
  const base = store.m.figureFromDocument(baseDoc);
  const cur = part.root ? store.m.figureFromDocument(await figureDoc(store, part, part.root)) : base;
  const fileRoot = base.jointNames[base.joints.findIndex((j) => j.parent < 0)];
  const root = local === fileRoot ? null : local;
  const nuDoc = root ? await figureDoc(store, part, root) : null;
  const nu = root ? store.m.figureFromDocument(nuDoc) : base;
  try {
    // the figure's part of a pose map, through the file's figure to the new one (each a
    // re-rooting of it), back into the map
    const carry = (pose) => {
      const own = {},
        out = {};
      for (const [k, v] of Object.entries(pose ?? {})) {
        if (k.startsWith(pre)) own[k.slice(pre.length)] = v;
        else out[k] = v;
      }
      const q = poseToQ(cur, own);
      const qb = cur !== base ? cur.rerootState(base, q) : q;
      for (const [k, v] of Object.entries(qToPose(nu, nu !== base ? base.rerootState(nu, qb) : qb))) out[pre + k] = v;
      return out;
    };
    const poseNow = carry(qToPose(store.figure, store.figure.q));
    const entry = store._snapshot(`make root ${name}`);
    const doc = store.doc;
    for (const k of doc.keys) k.pose = carry(k.pose);
    const joints = doc.interpolation?.joints;
    if (joints) {
      const type = (n) => nu.joints[nu.jointNames.indexOf(n)]?.type;
      for (const [j, modes] of Object.entries(joints)) {
        if (!j.startsWith(pre)) continue;
        const l = j.slice(pre.length);
        const to = type(l) === 'fixed' && type(`${l}~`) ? `${l}~` : l.endsWith('~') && !type(l) ? l.slice(0, -1) : l;
        if (to === l) continue;
        delete joints[j];
        joints[pre + to] = modes;
      }
    }
    part.record(doc, root);
    // a placed figure of several: its root state is moved from the new root's frame now
    const place = part.prefix && doc.places?.[part.prefix.slice(0, -1)];
    if (place) {
      const rj = (nuDoc ?? baseDoc).joints.find((j) => j.parent < 0);
      Object.assign(place, { root: rj.name, off: rj.offset ?? [0, 0, 0], orient: rj.orient ?? [1, 0, 0, 0] });
    }
    store._push(entry);
    if (store.keyIndexAt(store.ui.frame) < 0) store.settings.pose = { frame: store.ui.frame, pose: poseNow };
    else delete store.settings.pose;
    store.settings.frame = store.ui.frame;
    store._dirty.add('editor.json');
    store._docChanged(`make root ${name}`);
    sessionStorage.setItem('marionette.notice', `${name} is the root: every joint where it was`);
    await reloadWith(store, null);
    return true;
  } finally {
    if (nu !== base) nu.dispose();
    if (cur !== base) cur.dispose();
    base.dispose();
  }
}

/**
 * Undo or redo to a document of another root (store._restore): the document and the locks
 * as they were, saved, and the page loaded again on that root's figure with the state the
 * step kept.
 */
export function restoreAcrossRoot(store, entry) {
  store.doc = JSON.parse(entry.doc);
  if (entry.locks !== undefined) store.settings.locks = JSON.parse(entry.locks);
  delete store.settings.pose;
  store._dirty.add('editor.json');
  store._docChanged(entry.label);
  // after undo()/redo() has moved the step to the other stack
  setTimeout(() => reloadWith(store, entry.q).catch((e) => console.error(e)), 0);
}

/** Does going to this undo step change the figure's root? */
export function changesRoot(store, entry) {
  try {
    const d = JSON.parse(entry.doc);
    return (d.root ?? null) !== (store.doc.root ?? null) || JSON.stringify(d.roots ?? {}) !== JSON.stringify(store.doc.roots ?? {});
  } catch {
    return false;
  }
}
