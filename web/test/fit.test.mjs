// The skinning fit in the module against the native build (`marionette fit --json`): the
// glTF rig carried by the figure document, a target mesh deformed by a known pose.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../marionette.mjs';
import { native, tempDir, documentOf, data, writeFileSync, join } from './helpers.mjs';

const mn = await load();

function rotZ(a) {
  const c = Math.cos(a),
    s = Math.sin(a);
  return [c, -s, 0, s, c, 0, 0, 0, 1];
}

for (const name of ['RiggedSimple.glb', 'RiggedFigure.glb']) {
  test(`skinning fit on ${name} agrees with the native build`, () => {
    const { dir, cleanup } = tempDir();
    const file = join(data, 'skinned', name);
    const fig = mn.figureFromDocument(documentOf(file, dir));
    const rig = mn.createRig(fig.skin);
    const fitter = rig.createFitter();
    try {
      assert.equal(rig.vertexCount, fig.skin.vertices.length / 3);
      const nc = rig.controllerCount;
      // targets: the rig deformed by turning the last controller about z and moving it
      const pose = rig.restPose();
      pose.set(rotZ(0.4), 12 * (nc - 1));
      pose[12 * (nc - 1) + 9] += 0.05;
      const targets = rig.deform(pose);
      let obj = '';
      for (let i = 0; i < rig.vertexCount; i++) obj += `v ${targets[3 * i]} ${targets[3 * i + 1]} ${targets[3 * i + 2]}\n`;
      const t = fig.skin.triangles;
      for (let i = 0; i < t.length; i += 3) obj += `f ${t[i] + 1} ${t[i + 1] + 1} ${t[i + 2] + 1}\n`;
      writeFileSync(join(dir, 'frame.obj'), obj);
      const ref = JSON.parse(native(['fit', '--rig', file, '--frames', join(dir, 'frame.obj'), '--json']));
      const fit = rig.restPose();
      const r = fitter.fit(fit, targets, { coldStart: true });
      const rf = ref.frames[0];
      assert.equal(r.iterations, rf.iterations);
      assert.ok(Math.abs(r.rms - rf.rms) <= 1e-8 * rf.rms + 1e-15, `rms ${r.rms} vs ${rf.rms}`); // printed with 9 digits
      assert.ok(r.rms < 1e-6, `the fit reproduces the targets (rms ${r.rms})`);
      // skinning matrices x -> R x + (d - R pivot), as the native tool prints them
      rf.transforms.forEach((c, j) => {
        const R = fit.subarray(12 * j, 12 * j + 9),
          d = fit.subarray(12 * j + 9, 12 * j + 12);
        const p = fig.skin.controllers[j].pivot;
        for (let k = 0; k < 9; k++) assert.ok(Math.abs(R[k] - c.R[k]) <= 1e-9, `R[${k}] of ${c.name}`);
        for (let k = 0; k < 3; k++) {
          const tk = d[k] - (R[3 * k] * p[0] + R[3 * k + 1] * p[1] + R[3 * k + 2] * p[2]);
          assert.ok(Math.abs(tk - c.t[k]) <= 1e-9, `t[${k}] of ${c.name}`);
        }
      });
      // forgotten what the fit before taught it, the fitter repeats that fit bit for bit
      fitter.reset();
      const again = rig.restPose();
      const r2 = fitter.fit(again, targets, { coldStart: true });
      assert.equal(r2.iterations, r.iterations);
      assert.deepEqual(Array.from(again), Array.from(fit));
      assert.throws(() => fitter.fit(fit, targets.subarray(1)), /targets: expected/);
      assert.throws(() => rig.dispose(), /rig: still used by a fitter/);
    } finally {
      fitter.dispose();
      rig.dispose();
      fig.dispose();
      cleanup();
    }
  });
}
