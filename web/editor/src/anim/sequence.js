// The sequence document (docs/sequence.md) as a module Sequence: keys, interpolation, and,
// for the constrained in-betweens, handles and constraints with their frame ranges, locks,
// animated targets (target keys) and balance (Welman 6.3, 7.2.1).
import { poseToQ, handleDef, constraintDef } from '../docmodel.js';
import { addLayers } from './layers.js';

/** A figure of its own for a sequence: solveFrame writes its state. */
export function figureFor(store) {
  return store.figureDoc ? store.m.figureFromDocument(store.figureDoc) : store.m.stickman();
}

/** The keys of doc into a new Sequence of figure (no constraints). */
export function keysSequence(m, figure, doc) {
  const interp = doc.interpolation ?? {};
  const seq = m.createSequence(figure, {
    fps: doc.fps ?? 30,
    rotation: interp.rotation ?? 'default',
    translation: interp.translation ?? 'default',
  });
  try {
    for (const [joint, modes] of Object.entries(interp.joints ?? {})) seq.setInterpolation(modes, joint);
    for (const key of doc.keys) {
      const k = seq.setKey(key.frame, poseToQ(figure, key.pose));
      if (key.tcb) seq.setKeyTCB(k, key.tcb);
    }
    addLayers(seq, figure, doc);
  } catch (e) {
    seq.dispose();
    throw e;
  }
  return seq;
}

/** The whole document: keys, handles, constraints over frames, target keys. */
export function fullSequence(m, figure, doc) {
  const seq = keysSequence(m, figure, doc);
  try {
    const byName = new Map();
    (doc.handles ?? []).forEach((h, i) => {
      const name = h.name ?? `handle ${i}`;
      byName.set(name, seq.addHandle({ ...handleDef(h), name }));
    });
    for (const c of doc.constraints ?? []) {
      const def = constraintDef(c, byName);
      if (c.frames) [def.start, def.end] = c.frames;
      const keyed = Array.isArray(c.target_keys) && c.target_keys.length > 0;
      // a pin or orientation without a target (or target keys) is locked where it stands
      if (c.lock || ((c.type === 'pin' || c.type === 'orient') && c.target === undefined && !keyed)) def.lock = true;
      if (keyed && c.target_interpolation) def.targetInterpolation = c.target_interpolation;
      if (c.axes !== undefined && def.axis === undefined) def.axis = c.axes;
      delete def.axes;
      const ci = seq.addConstraint(def);
      if (keyed) {
        for (const k of c.target_keys) {
          if (c.type === 'orient') seq.setTargetKey(ci, { frame: k.frame, targetRotation: k.target });
          else if (c.type === 'pin') seq.setTargetKey(ci, { frame: k.frame, target: k.target });
          else seq.setTargetKey(ci, { frame: k.frame, origin: k.origin, dir: k.normal ?? k.direction });
        }
      }
    }
  } catch (e) {
    seq.dispose();
    throw e;
  }
  return seq;
}

/** Does the document have any constraint for the in-betweens to keep? */
export function hasConstraints(doc) {
  return (doc.constraints ?? []).some((c) => c.enabled !== false);
}
