// The sequence document (docs/sequence.md) and the module's definitions: pure functions
// shared by the posing UI and the animation UI. No DOM, no state.

/** The number of state values of a joint type. */
export function jointQSize(type) {
  return { fixed: 0, hinge: 1, slide: 1, ball: 4, free: 7 }[type];
}

/**
 * A key's pose map (joint name -> value, docs/sequence.md "Keys") as a state q of the
 * figure: joints left out keep their rest values. Read by the module's own reader (a
 * document of that one key), so a pose is read as `marionette` reads it; throws its error
 * (`pose: keys[0].pose.neck: no joint named "neck" ...`) on unknown joints or bad values.
 */
export function poseToQ(figure, pose) {
  const doc = { figure: figure.name || 'figure', keys: [{ frame: 0, pose: pose ?? {} }] };
  const seq = figure._mn.sequenceFromDocument(figure, doc, 'pose');
  try {
    return new Float64Array(seq.keyQ(0));
  } finally {
    seq.dispose();
  }
}

/** A state q as a key's pose map: every joint that has a value. */
export function qToPose(figure, q) {
  const pose = {};
  for (const j of figure.joints) {
    const at = j.qadr;
    if (j.type === 'hinge' || j.type === 'slide') pose[j.name] = q[at];
    else if (j.type === 'ball') pose[j.name] = Array.from(q.subarray ? q.subarray(at, at + 4) : q.slice(at, at + 4));
    else if (j.type === 'free') {
      pose[j.name] = { position: [q[at], q[at + 1], q[at + 2]], rotation: [q[at + 3], q[at + 4], q[at + 5], q[at + 6]] };
    }
  }
  return pose;
}

/** A fresh sequence document for a figure path: one key at frame 0 (the rest pose). */
export function newSequenceDoc(figurePath = 'stickman') {
  return { figure: figurePath, fps: 30, keys: [{ frame: 0, pose: {} }], handles: [], constraints: [] };
}

/** Is a constraint active at a frame (its `frames` range, default every frame)? */
export function activeAt(c, frame) {
  return !c.frames || (frame >= c.frames[0] && frame <= c.frames[1]);
}

/** A name not yet used among `names`: base, then "base 2", "base 3", ... */
export function uniqueName(base, names) {
  const taken = new Set(names);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base} ${i}`)) return `${base} ${i}`;
}

/**
 * A figure document with every length multiplied by s: the sequence document's `scale`
 * (BVH figures, docs/sequence.md). Offsets, centres of mass, slide ranges and the
 * translations of the rest state and of the motion.
 */
export function scaleFigureDoc(fd, s) {
  if (!(s > 0) || s === 1) return fd;
  const out = structuredClone(fd);
  const trans = []; // indices into a state that are lengths
  let at = 0;
  for (const j of out.joints) {
    j.offset = j.offset?.map((x) => x * s);
    if (j.com) j.com = j.com.map((x) => x * s);
    const n = jointQSize(j.type);
    if (j.type === 'slide') {
      if (j.range) j.range = j.range.map((x) => x * s);
      trans.push(at);
    }
    if (j.type === 'free') trans.push(at, at + 1, at + 2);
    if (j.q0) for (const k of trans.filter((t) => t >= at && t < at + n)) j.q0[k - at] *= s;
    at += n;
  }
  if (out.motion?.frames)
    out.motion.frames = out.motion.frames.map((f) => {
      const g = f.slice();
      for (const k of trans) g[k] *= s;
      return g;
    });
  return out;
}

/**
 * The units of a figure file guessed from its height at rest (the vertical extent of its
 * joints, or its largest extent when that is flat), for a BVH file whose lengths are not in
 * metres: returns {scale, units} with scale the sequence document's `scale` (docs/sequence.md)
 * that makes it metres. A person is 1 to 2.2 m tall, so: 0.3 to 3: metres (scale 1);
 * 15 to 45: CMU units (the CMU database's 1/0.45 inch, scale 0.056444: 25 units are 1.4 m
 * of joints, the head's top above); 45 to 80: inches (0.0254); 80 to 300: centimetres
 * (0.01); 800 to 3000: millimetres (0.001); anything else is left as it is.
 */
export function guessUnits(height) {
  const table = [
    [0.3, 3, 1, 'metres'],
    [15, 45, 0.056444, 'CMU units'],
    [45, 80, 0.0254, 'inches'],
    [80, 300, 0.01, 'centimetres'],
    [800, 3000, 0.001, 'millimetres'],
  ];
  for (const [lo, hi, scale, units] of table) if (height >= lo && height <= hi) return { scale, units };
  return { scale: 1, units: 'unknown units' };
}

/** The height of a figure at rest (see guessUnits). */
export function restHeight(figure) {
  const q = Float64Array.from(figure.q);
  figure.reset().fk();
  const p = figure.positions,
    lo = [Infinity, Infinity, Infinity],
    hi = [-Infinity, -Infinity, -Infinity];
  for (let j = 0; j < figure.jointCount; j++) {
    for (let k = 0; k < 3; k++) {
      lo[k] = Math.min(lo[k], p[3 * j + k]);
      hi[k] = Math.max(hi[k], p[3 * j + k]);
    }
  }
  figure.setQ(q).fk();
  const ext = hi.map((h, k) => h - lo[k]);
  return ext[1] >= 0.25 * Math.max(...ext) ? ext[1] : Math.max(...ext);
}

/**
 * Every length of a sequence document multiplied by r (its `scale` changed by r): the free
 * joints' positions and slides of the keys, the targets, origins and handle points of the
 * constraints and their target keys. figure: the wasm figure (joint types by name).
 */
export function rescaleDoc(doc, figure, r) {
  const types = new Map(figure.joints.map((j) => [j.name, j.type]));
  const mul = (v) => v.map((x) => x * r);
  for (const k of doc.keys) {
    for (const [name, v] of Object.entries(k.pose ?? {})) {
      if (types.get(name) === 'slide') k.pose[name] = v * r;
      else if (types.get(name) === 'free' && v.position) v.position = mul(v.position);
    }
  }
  for (const h of doc.handles ?? []) if (h.point) h.point = mul(h.point);
  const lengths = (c, type) => {
    if (type === 'pin' && c.target) c.target = mul(c.target);
    if ((type === 'plane' || type === 'line') && c.origin) c.origin = mul(c.origin);
    if (c.margin !== undefined) c.margin *= r;
    if (c.polygon) c.polygon = c.polygon.map(mul);
  };
  for (const c of doc.constraints ?? []) {
    lengths(c, c.type);
    for (const tk of c.target_keys ?? []) lengths(tk, c.type);
  }
  return doc;
}

/**
 * A figure document without masses (a BVH skeleton) given masses for its centre of mass, the
 * balance of a drag and its overlay: each joint's segment weighs 10 kg per metre of the bones
 * to its children, its centre half way along their mean. Only the page's figure gets them;
 * the file is not changed. A figure with any mass is returned as it is.
 */
export function estimateMasses(fd) {
  if (!fd?.joints?.length || fd.joints.some((j) => j.mass > 0)) return fd;
  const out = structuredClone(fd);
  const kids = out.joints.map(() => []);
  out.joints.forEach((j, i) => {
    if (j.parent >= 0) kids[j.parent].push(i);
  });
  out.joints.forEach((j, i) => {
    const offs = kids[i].map((c) => out.joints[c].offset ?? [0, 0, 0]);
    const len = offs.reduce((a, o) => a + Math.hypot(o[0], o[1], o[2]), 0);
    if (!(len > 0)) return;
    j.mass = 10 * len;
    j.com = [0, 1, 2].map((k) => (0.5 * offs.reduce((a, o) => a + o[k], 0)) / offs.length);
  });
  return out;
}
