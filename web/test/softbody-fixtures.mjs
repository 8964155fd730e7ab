// The soft-body problems shared by the module's test and its benchmark, as
// tests/skin/test_coupling.c builds them: a closed box surface, and a bar's chain of bones
// over a lattice body's nodes (weights: the two nearest bone centres, blended linearly);
// and the soft-body page's address, for its browser test, benchmark and screenshots.

/** A closed box [lo, hi]: 8 corners and 12 outward triangles. */
export function boxSurface(lo, hi) {
  const vertices = [];
  for (let i = 0; i < 8; i++) vertices.push(i & 1 ? hi[0] : lo[0], i & 2 ? hi[1] : lo[1], i & 4 ? hi[2] : lo[2]);
  const triangles = [0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4, 2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5];
  return { vertices, triangles };
}

/** The skin of nb bones along x from x0 to x0 + len over nodes (n x 3), a chain (each bone
 * attached to the one before). */
export function barSkin(nodes, x0, len, nb) {
  const n = nodes.length / 3,
    bl = len / nb,
    controllers = [];
  for (let j = 0; j < nb; j++) {
    controllers.push({
      name: `b${j}`,
      kind: 'bone',
      pivot: [x0 + j * bl, 0, 0],
      tail: [x0 + (j + 1) * bl, 0, 0],
      parent: j - 1,
      attached: j > 0,
    });
  }
  const weightIndex = new Array(2 * n),
    weight = new Array(2 * n);
  for (let i = 0; i < n; i++) {
    const u = (nodes[3 * i] - x0) / bl - 0.5;
    const j0 = Math.min(Math.max(Math.floor(u), 0), nb - 2);
    const s = Math.min(1, Math.max(0, u - j0));
    weightIndex[2 * i] = j0;
    weightIndex[2 * i + 1] = j0 + 1;
    weight[2 * i] = 1 - s;
    weight[2 * i + 1] = s;
  }
  return { dim: 3, vertices: Array.from(nodes), controllers, influences: 2, weightIndex, weight };
}

/** A rotation of a radians about z, row-major. */
export function rotZ(a) {
  const c = Math.cos(a),
    s = Math.sin(a);
  return [c, -s, 0, s, c, 0, 0, 0, 1];
}

/** A box lattice body (sx x sy x sz m, centred on y and z, from x = 0) coupled to nb bones
 * along x, the root driven. */
export function makeBar(mn, size, resolution, nb, body = {}) {
  const sb = mn.createSoftBody({
    ...boxSurface([0, -size[1] / 2, -size[2] / 2], [size[0], size[1] / 2, size[2] / 2]),
    resolution,
    density: 100,
    edgeCompliance: 1e-6,
    substeps: 5,
    ...body,
  });
  const rig = mn.createRig(barSkin(sb.restPositions(), 0, size[0], nb));
  sb.couple(rig, { over: 'nodes', driven: ['b0'] });
  rig.dispose();
  return sb;
}

/** The soft-body page's address on the server whose first line was url: the same origin
 * and query (a token the server may require stays), the page's own parameters added. */
export function softbodyURL(url, params) {
  const u = new URL('softbody.html', url);
  u.search = new URL(url).search;
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, String(v));
  return u.href;
}
