// The sequence document (docs/sequence.md) as a module Sequence, read by the command line's
// own reader inside the module (mn.sequenceFromDocument, docs/web.md): keys, interpolation,
// layers and time warps, and, for the constrained in-betweens, handles and constraints with
// their frame ranges, locks, animated targets (target keys) and balance (Welman 6.3, 7.2.1).
// What the page plays is what `marionette` reads and the server saves.

/** A figure of its own for a sequence: solveFrame writes its state. */
export function figureFor(store) {
  return store.figureDoc ? store.m.figureFromDocument(store.figureDoc) : store.m.stickman();
}

// The document read by the module for figure (its "figure" member is kept, not opened). A
// document needs a key: with none yet, an empty sequence at the document's rate. The page's
// own members of a document of several figures joined into one (`roots`, `places`:
// figures.js) are not the reader's.
function read(m, figure, doc) {
  if (!doc.keys?.length) return m.createSequence(figure, { fps: doc.fps ?? 30 });
  const { roots, places, ...plain } = doc;
  void roots;
  void places;
  return m.sequenceFromDocument(figure, { ...plain, figure: doc.figure ?? 'stickman' }, 'sequence');
}

/** The keys of doc into a new Sequence of figure (interpolation, layers; no constraints). */
export function keysSequence(m, figure, doc) {
  return read(m, figure, { ...doc, handles: undefined, constraints: undefined, contacts: undefined });
}

/** The whole document: keys, handles, constraints over frames, target keys. */
export function fullSequence(m, figure, doc) {
  return read(m, figure, doc);
}

/** Does the document have any constraint for the in-betweens to keep? */
export function hasConstraints(doc) {
  return (doc.constraints ?? []).some((c) => c.enabled !== false);
}
