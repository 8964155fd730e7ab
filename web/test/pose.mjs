// A state of a figure from a sequence key's pose (joint name -> value, docs/sequence.md),
// rest values elsewhere. Shared by the Node tests and the browser test page.
export function stateOf(fig, pose) {
  const q = fig.restQ;
  for (const [name, v] of Object.entries(pose)) {
    const j = fig.joints[fig.jointNames.indexOf(name)];
    if (j.type === 'hinge' || j.type === 'slide') q[j.qadr] = v;
    else if (j.type === 'ball') q.set(v, j.qadr);
    else if (j.type === 'free') {
      if (v.position) q.set(v.position, j.qadr);
      if (v.rotation) q.set(v.rotation, j.qadr + 3);
    }
  }
  return q;
}
