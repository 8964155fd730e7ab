// Polygon objects on joints (Welman 6.1.1: `object "r_lleg.pol"`, rigid objects drawn as the
// display traversal meets their joints; Parent ch. 5: a node's data pointer and its
// transformation matrix). A joint's `object` in the figure document names a Wavefront OBJ
// file beside the figure file, its vertices in the joint's frame (src/io/objects.c reads them
// so for `marionette fk --objects` and the glTF output). The page reads each through the
// server's file API, which keeps every path inside the project (docs/editor-server.md), and
// the views draw it on its joint's frame at every pose.
import { beside } from './server.js';

/**
 * An OBJ text's vertex positions and triangles (faces fan-triangulated; texture
 * coordinates, normals, groups and materials ignored; negative indices from the end), as
 * src/io/obj.c reads it. Throws `LINE: what` on a malformed line.
 */
export function parseOBJ(text) {
  const pos = [],
    tris = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) return;
    const [tag, ...rest] = line.split(/\s+/);
    if (tag === 'v') {
      const v = rest.slice(0, 3).map(Number);
      if (v.length < 3 || !v.every(Number.isFinite)) throw new Error(`${i + 1}: v: expected three finite numbers`);
      pos.push(...v);
    } else if (tag === 'f') {
      const n = pos.length / 3;
      const idx = rest.map((c) => {
        const k = parseInt(c.split('/')[0], 10);
        const at = k < 0 ? n + k : k - 1;
        if (!Number.isInteger(k) || k === 0 || at < 0 || at >= n) throw new Error(`${i + 1}: f: vertex ${c} out of range`);
        return at;
      });
      if (idx.length < 3) throw new Error(`${i + 1}: f: a face has three corners or more`);
      for (let c = 1; c + 1 < idx.length; c++) tris.push(idx[0], idx[c], idx[c + 1]);
    }
  });
  return { positions: Float64Array.from(pos), triangles: Uint32Array.from(tris) };
}

/**
 * The objects of the page's figure: [{joint, path, positions, triangles}] for every joint
 * whose figure document names one, read beside its figure file (a document of several
 * figures: each figure's own). A file that is missing, outside the project or malformed is
 * left out, its problem in `problems`.
 */
export async function loadObjects(store) {
  const joints = store.figureDoc?.joints ?? [];
  const figureFile = (name) => {
    if (!store.multi) return store.doc.figure ?? '';
    const f = store.multi.figures.find((x) => name.startsWith(`${x.name}/`));
    return f?.file ?? '';
  };
  const out = [],
    problems = [];
  await Promise.all(
    joints.map(async (j, index) => {
      if (typeof j.object !== 'string' || !j.object) return;
      const file = figureFile(j.name);
      const path = file === 'stickman' ? j.object : beside(beside(store.sequencePath, file), j.object);
      try {
        const r = await store.server.file(path);
        if (!r.ok) throw new Error(r.body?.error ?? `HTTP ${r.status}`);
        out.push({ joint: index, path, ...parseOBJ(r.text) });
      } catch (e) {
        problems.push(`${j.name}: object ${path}: ${e.message}`);
      }
    }),
  );
  out.sort((a, b) => a.joint - b.joint);
  return { objects: out, problems };
}
