// The shipped 2D shape of the soft-body page: a gingerbread figure, the union of discs
// and capsules in the plane (a signed distance), triangulated on a lattice of equilateral
// triangles (kept where the triangle's centre is inside) whose outer vertices are moved onto
// the outline; point controllers at the head, the chest, the hands and the feet, weighted by
// a Gaussian of the distance to each (the four largest, normalised).

function capsule(p, a, b, r) {
  const ax = b[0] - a[0],
    ay = b[1] - a[1];
  const t = Math.max(0, Math.min(1, ((p[0] - a[0]) * ax + (p[1] - a[1]) * ay) / (ax * ax + ay * ay || 1)));
  return Math.hypot(p[0] - a[0] - t * ax, p[1] - a[1] - t * ay) - r;
}

// metres; the feet stand at y = 0.03
const PARTS = [
  [[0, 0.86], [0, 0.86], 0.15], // head
  [[0, 0.42], [0, 0.62], 0.2], // body
  [[-0.05, 0.6], [-0.38, 0.52], 0.075], // arms
  [[0.05, 0.6], [0.38, 0.52], 0.075],
  [[-0.09, 0.32], [-0.16, 0.1], 0.085], // legs
  [[0.09, 0.32], [0.16, 0.1], 0.085],
];

export function gingerbreadDistance(p) {
  let d = Infinity;
  for (const [a, b, r] of PARTS) d = Math.min(d, capsule(p, a, b, r));
  return d;
}

export const GINGERBREAD_CONTROLLERS = [
  { name: 'head', pivot: [0, 0.86, 0] },
  { name: 'chest', pivot: [0, 0.55, 0] },
  { name: 'hips', pivot: [0, 0.33, 0] },
  { name: 'left_hand', pivot: [-0.36, 0.52, 0] },
  { name: 'right_hand', pivot: [0.36, 0.52, 0] },
  { name: 'left_foot', pivot: [-0.15, 0.1, 0] },
  { name: 'right_foot', pivot: [0.15, 0.1, 0] },
];

/** { vertices (n x 2), triangles, outline (the boundary's vertex loops as edge pairs),
 * skin (a rig document, dim 2) } for a lattice spacing h (metres). */
export function gingerbread(h = 0.03) {
  const rows = [],
    dy = (h * Math.sqrt(3)) / 2,
    x0 = -0.55,
    y0 = -0.1;
  const nx = Math.ceil(1.1 / h) + 2,
    ny = Math.ceil(1.2 / dy) + 2;
  const pts = [];
  for (let r = 0; r < ny; r++) {
    const row = [];
    for (let c = 0; c < nx; c++) {
      row.push(pts.length);
      pts.push([x0 + c * h + (r % 2 ? h / 2 : 0), y0 + r * dy]);
    }
    rows.push(row);
  }
  const tris = [];
  const inside = (a, b, c) => gingerbreadDistance([(pts[a][0] + pts[b][0] + pts[c][0]) / 3, (pts[a][1] + pts[b][1] + pts[c][1]) / 3]) < 0;
  for (let r = 0; r + 1 < ny; r++) {
    for (let c = 0; c + 1 < nx; c++) {
      const a = rows[r][c],
        b = rows[r][c + 1],
        d = rows[r + 1][c],
        e = rows[r + 1][c + 1];
      const cand =
        r % 2
          ? [
              [a, e, d],
              [a, b, e],
            ]
          : [
              [a, b, d],
              [b, e, d],
            ];
      for (const t of cand) if (inside(...t)) tris.push(t);
    }
  }
  // keep the used vertices, renumbered
  const map = new Map(),
    vertices = [];
  for (const t of tris) {
    for (let k = 0; k < 3; k++) {
      if (!map.has(t[k])) {
        map.set(t[k], vertices.length / 2);
        vertices.push(...pts[t[k]]);
      }
      t[k] = map.get(t[k]);
    }
  }
  // boundary edges (in one triangle only); their vertices go onto the outline (a Newton
  // step along the distance's gradient, at most half a spacing)
  const count = new Map();
  for (const t of tris) {
    for (let k = 0; k < 3; k++) {
      const a = t[k],
        b = t[(k + 1) % 3],
        key = a < b ? `${a},${b}` : `${b},${a}`;
      count.set(key, (count.get(key) ?? 0) + 1);
    }
  }
  const outline = [],
    onEdge = new Set();
  for (const [key, c] of count) {
    if (c !== 1) continue;
    const [a, b] = key.split(',').map(Number);
    outline.push(a, b);
    onEdge.add(a);
    onEdge.add(b);
  }
  const e = 1e-5;
  for (const i of onEdge) {
    const p = [vertices[2 * i], vertices[2 * i + 1]],
      d = gingerbreadDistance(p);
    const gx = (gingerbreadDistance([p[0] + e, p[1]]) - gingerbreadDistance([p[0] - e, p[1]])) / (2 * e);
    const gy = (gingerbreadDistance([p[0], p[1] + e]) - gingerbreadDistance([p[0], p[1] - e])) / (2 * e);
    const g = Math.hypot(gx, gy) || 1,
      step = Math.max(-h / 2, Math.min(h / 2, d));
    vertices[2 * i] -= (step * gx) / g;
    vertices[2 * i + 1] -= (step * gy) / g;
  }
  const triangles = tris.flat();
  const n = vertices.length / 2,
    K = 4,
    sigma = 0.12,
    weightIndex = [],
    weight = [];
  for (let i = 0; i < n; i++) {
    const w = GINGERBREAD_CONTROLLERS.map((c, j) => [
      j,
      Math.exp(-(((vertices[2 * i] - c.pivot[0]) ** 2 + (vertices[2 * i + 1] - c.pivot[1]) ** 2) / (sigma * sigma))),
    ])
      .sort((a, b) => b[1] - a[1])
      .slice(0, K);
    const s = w.reduce((acc, [, v]) => acc + v, 0) || 1;
    for (const [j, v] of w) {
      weightIndex.push(j);
      weight.push(Math.max(v / s, 0));
    }
  }
  const skin = {
    dim: 2,
    vertices,
    influences: K,
    weightIndex,
    weight,
    controllers: GINGERBREAD_CONTROLLERS.map((c) => ({ ...c, kind: 'point' })),
  };
  return { vertices, triangles, outline, skin };
}
