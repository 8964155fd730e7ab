// Make root (Welman 2.1.2: "an existing hierarchy around a new root joint at any time"; 6.3:
// a hand holding a bar, a foot planted). The sequence document records the joint as its
// `root` (docs/sequence.md "The root"): the server answers the figure file's figure re-rooted
// there (/api/figure?root=), and every key is carried over by the module's rerootState, so
// each joint stays where it is at every key. The page then loads again on the new figure
// (the views, panels and animation are built for a figure); the undo history goes with it
// through sessionStorage, and undoing a change of root loads the page again the other way.
import { poseToQ, qToPose, scaleFigureDoc } from './docmodel.js';

const UNDO_KEY = 'marionette.undo';

/** Why the figure cannot be re-rooted in the page ('' when it can). */
export function rerootRefusal(store) {
  if (store.multi) return 'a document of several figures: each figure is re-rooted in the document ("root" of the figure)';
  if (store.figureDoc?.skin) return 'a skinned figure is not re-rooted (its skin follows the file\u2019s joints)';
  if ((store.doc.layers ?? []).length) return 'a sequence with layers is not re-rooted (its layers name the joints)';
  const roots = store.figure.joints.filter((j) => j.parent < 0);
  if (roots.length !== 1 || roots[0].type !== 'free')
    return 'only a figure with one free root (a person, a BVH skeleton) is re-rooted here';
  return '';
}

async function figureDoc(store, root) {
  const r = await store.server.figure(store.doc.figure, root);
  if (!r.ok || !r.body) throw new Error(`${store.doc.figure}${root ? ` at ${root}` : ''}: ${r.body?.error ?? `HTTP ${r.status}`}`);
  return scaleFigureDoc(r.body, store.doc.scale ?? 1);
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
      q: Array.from(q),
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
 * Makes joint `name` the figure's root, every joint where it is: the document's keys (and
 * the unkeyed pose) carried to the re-rooted figure, its per-joint interpolation moved to
 * the joints that carry each motion, `root` recorded (dropped when it is the file's own
 * root again), one undo step; then the page loads again. Resolves to false (with the reason
 * in store.rerootError) when it cannot.
 */
export async function makeRoot(store, name) {
  store.rerootError = rerootRefusal(store);
  if (store.rerootError) return false;
  const cur = store._seqFigure;
  if (name.endsWith('~')) name = name.slice(0, -1); // a motion's own joint: its segment
  if (cur.joints.findIndex((j) => j.parent < 0) === cur.jointNames.indexOf(name)) {
    store.rerootError = `${name} is already the root`;
    return false;
  }
  const baseDoc = await figureDoc(store, null);
  const base = store.m.figureFromDocument(baseDoc);
  const fileRoot = base.jointNames[base.joints.findIndex((j) => j.parent < 0)];
  const root = name === fileRoot ? null : name;
  const nu = root ? store.m.figureFromDocument(await figureDoc(store, root)) : base;
  try {
    // a state of the page's figure -> the file's figure -> the new one (each a re-rooting)
    const carry = (q) => {
      const qb = store.doc.root ? cur.rerootState(base, q) : Float64Array.from(q);
      return root ? base.rerootState(nu, qb) : qb;
    };
    const qNow = carry(store.figure.q);
    const entry = store._snapshot(`make root ${name}`);
    const doc = store.doc;
    for (const k of doc.keys) k.pose = qToPose(nu, carry(poseToQ(cur, k.pose)));
    const joints = doc.interpolation?.joints;
    if (joints) {
      const type = (n) => nu.joints[nu.jointNames.indexOf(n)]?.type;
      for (const [j, modes] of Object.entries(joints)) {
        const to = type(j) === 'fixed' && type(`${j}~`) ? `${j}~` : j.endsWith('~') && !type(j) ? j.slice(0, -1) : j;
        if (to === j) continue;
        delete joints[j];
        joints[to] = modes;
      }
    }
    if (root) doc.root = root;
    else delete doc.root;
    store._push(entry);
    if (store.keyIndexAt(store.ui.frame) < 0) store.settings.pose = { frame: store.ui.frame, pose: qToPose(nu, qNow) };
    else delete store.settings.pose;
    store.settings.frame = store.ui.frame;
    store._dirty.add('editor.json');
    store._docChanged(`make root ${name}`);
    sessionStorage.setItem('marionette.notice', `${name} is the root: every joint where it was`);
    await reloadWith(store, qNow);
    return true;
  } finally {
    if (nu !== base) nu.dispose();
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
    return (JSON.parse(entry.doc).root ?? null) !== (store.doc.root ?? null);
  } catch {
    return false;
  }
}
