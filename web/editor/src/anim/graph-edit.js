// The graph's edits of the sequence document (graph.js): a key's value for one variable, and a
// key's Kochanek-Bartels parameters with the joint's interpolation set to `kb`
// (docs/sequence.md, "Keys" and "Interpolation").

/** Pixels of a tangent handle from its key at tension 0 (none at tension 1, twice at -1). */
export const HANDLE_PX = 28;

/** Sets variable v (a hinge's angle, a slide's length, a component of a free joint's
 * position) of a key's pose to value. A joint the key left out had its rest value: the others
 * of a free joint's position are taken from the figure's rest state. */
export function editValue(figure, key, v, value) {
  if (v.type === 'hinge' || v.type === 'slide') {
    key.pose[v.joint] = value;
    return;
  }
  if (v.type === 'free') {
    const j = figure.joints[figure.joint(v.joint)];
    const cur = key.pose[v.joint] ?? {};
    const pos = cur.position ? [...cur.position] : Array.from(figure.restQ.slice(j.qadr, j.qadr + 3));
    pos[v.component] = value;
    key.pose[v.joint] = { ...cur, position: pos };
  }
}

const clamp1 = (x) => Math.max(-1, Math.min(1, x));

/** Key k's [tension, continuity, bias] (each clamped to [-1, 1]); the joint of variable v
 * interpolated as `kb` (its rotation for a hinge, its translation for a slide or free joint)
 * so that the parameters act. */
export function withTCB(doc, v, k, tcb) {
  doc.keys[k].tcb = tcb.map((x) => Math.round(clamp1(x) * 1000) / 1000);
  const mode = v.mode;
  const cur = doc.interpolation?.joints?.[v.joint]?.[mode];
  if (cur === 'kb') return;
  doc.interpolation ??= {};
  doc.interpolation.joints ??= {};
  doc.interpolation.joints[v.joint] = { ...(doc.interpolation.joints[v.joint] ?? {}), [mode]: 'kb' };
}
