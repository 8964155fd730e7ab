// The soft-body benchmark in WebAssembly (make bench-web-softbody): the problem of
// `marionette bench sim` (docs/softbody.md) in the module, one core. A box lattice body of
// density 100, edge compliance 1e-6, 5 substeps, dt 1/60, with 8 bones along x (weights:
// the two nearest bone centres, blended linearly, as tests/skin/test_coupling.c's bar), the
// root bone driven swinging about z by 0.3 sin(0.1 t) rad at frame t, the others free and
// fitted every substep. Two sizes: 1.2 x 1.1 x 1.1 m at resolution 12 (1,872 nodes, 8,712
// tetrahedra) and 2.8 x 1.6 x 1.3 m at resolution 28 (6,902 nodes, 34,944 tetrahedra: the
// size of Wu & Umetani's reference run). Prints key=value lines: per frame, the median over
// frames 21..120 of the whole step (wall clock around the call, and the process's CPU time
// over it: on a busy machine the wall clock counts the time other processes ran) and of its
// parts (the body's constraints, the fit, the coupling, the embedded surface: the module's
// clock, wall), in microseconds, and the worst residual of the complementary constraint.
import { performance } from 'node:perf_hooks';
import { load } from '../marionette.mjs';
import { makeBar, rotZ } from '../test/softbody-fixtures.mjs';

const FRAMES = 120,
  FIRST = 21;
const mn = await load();

function median(a) {
  const s = [...a].sort((x, y) => x - y),
    n = s.length;
  return n % 2 ? s[n >> 1] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

const cases = [
  { name: 'box12', size: [1.2, 1.1, 1.1], resolution: 12 },
  { name: 'box28', size: [2.8, 1.6, 1.3], resolution: 28 },
];
for (const c of cases) {
  const sb = makeBar(mn, c.size, c.resolution, 8);
  const rows = { wall: [], cpu: [], total: [], sim: [], fit: [], couple: [], surface: [] };
  let worst = 0,
    failed = 0,
    fitIters = 0;
  const P0 = sb.posesCopy();
  for (let t = 1; t <= FRAMES; t++) {
    sb.drive(0, [...rotZ(0.3 * Math.sin(0.1 * t)), P0[9], P0[10], P0[11]]);
    const c0 = process.cpuUsage(),
      t0 = performance.now();
    const r = sb.step(1 / 60);
    const wall = (performance.now() - t0) * 1e3,
      cu = process.cpuUsage(c0);
    if (!r.ok) failed++;
    worst = Math.max(worst, r.residual);
    if (t >= FIRST) {
      rows.wall.push(wall);
      rows.cpu.push(cu.user + cu.system);
      for (const k of ['total', 'sim', 'fit', 'couple', 'surface']) rows[k].push(r.us[k]);
      fitIters += r.fitIterations;
    }
  }
  const m = (k) => median(rows[k]).toFixed(1);
  console.log(
    `bench=softbody_wasm case=${c.name} nodes=${sb.vertexCount} tets=${sb.elementCount} bones=8 substeps=5 ` +
      `frames=${FRAMES} us_frame=${m('wall')} us_frame_cpu=${m('cpu')} us_step=${m('total')} us_sim=${m('sim')} us_fit=${m('fit')} ` +
      `us_couple=${m('couple')} us_surface=${m('surface')} fit_iters=${(fitIters / rows.wall.length).toFixed(1)} ` +
      `residual_max=${worst.toExponential(2)} failed_steps=${failed}`,
  );
  sb.dispose();
}
