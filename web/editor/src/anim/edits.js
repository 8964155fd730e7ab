// The timeline's edits of the keys (Welman 6.1.2): every range operation runs in the module
// (Sequence.copy, cut, paste, insert, delete, stretch, slide: the library's one
// implementation), and its record (the keys it removed and added) is written back into the
// document inside store.apply, so each is one undo step of the editor. Keys the edit only
// moved keep their pose maps as written (joints left out stay left out).
import { qToPose } from '../docmodel.js';
import { keysSequence } from './sequence.js';

const bytes = (q) => new Uint8Array(Float64Array.from(q).buffer).join(',');

/** Thrown by an edit that would change nothing (no undo step is made). */
export class NothingToDo extends Error {}

/**
 * Runs op(seq, figure) -> SequenceEdit on the document's keys and writes its result into the
 * document as one undo step labelled `label`. known: extra { q, pose, tcb } keys whose pose
 * maps an added key may take (a pasted clip's). Returns the edit's { removed, added } frames.
 */
export function runEdit(anim, label, op, known = [], { whole = false } = {}) {
  const { store } = anim;
  const figure = anim.editFigure();
  const seq = keysSequence(store.m, figure, store.doc);
  const poses = new Map();
  let removed, added;
  try {
    // each key's state as the module holds it (quaternions normalised) -> its document key
    const byFrame = new Map(store.doc.keys.map((k) => [k.frame, k]));
    for (let k = 0; k < seq.keyCount; k++) poses.set(bytes(seq.keyQ(k)), byFrame.get(seq.keyFrame(k)));
    for (const k of known) poses.set(bytes(k.q), k);
    const edit = op(seq, figure);
    removed = edit.removed;
    added = edit.added;
  } finally {
    seq.dispose();
  }
  if (!removed.length && !added.length) throw new NothingToDo(`${label}: no keys in the range`);
  // a sequence document holds at least one key (docs/sequence.md): the server refuses less
  if (store.doc.keys.length - removed.length + added.length < 1) throw new NothingToDo(`${label}: a sequence keeps at least one key`);
  // whole: the keys the edit put at fractional frames (a stretch by 0.5 of an odd span,
  // 30.5) go to the nearest whole frame; of keys landing on one frame the edit's last wins,
  // and it replaces a key that was there
  if (whole) {
    const at = new Map();
    for (const k of added) at.set(Math.round(k.frame), { ...k, frame: Math.round(k.frame) });
    added = [...at.values()];
  }
  store.apply(label, (doc) => {
    const gone = new Set([...removed.map((k) => k.frame), ...(whole ? added.map((k) => k.frame) : [])]);
    const keys = doc.keys.filter((k) => !gone.has(k.frame));
    for (const k of added) {
      const was = poses.get(bytes(k.q));
      const key = { frame: k.frame, pose: was ? structuredClone(was.pose) : qToPose(figure, k.q) };
      if (k.tcb.some((x) => x !== 0)) key.tcb = k.tcb;
      keys.push(key);
    }
    keys.sort((a, b) => a.frame - b.frame);
    doc.keys = keys;
  });
  return { removed: removed.map((k) => k.frame), added: added.map((k) => k.frame) };
}

/** The frames lo..hi (whole frames, both included) as the half-open range [lo, hi + 1). */
export function halfOpen(lo, hi) {
  return [Math.min(lo, hi), Math.max(lo, hi) + 1];
}
