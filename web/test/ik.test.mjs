// Chain IK in the module against the native build (`marionette solve --json`) on the same
// inputs: every method, position and orientation goals, a URDF arm and the stick figure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load, IK_METHODS } from '../marionette.mjs';
import { native, tempDir, documentOf, rng, data, join, chainQ, setChainQ } from './helpers.mjs';

const mn = await load();

const cases = [
  { file: join(data, 'robots/franka_panda/panda.urdf'), base: 'world', tip: 'panda_link8' },
  { file: 'stickman', base: 'torso', tip: 'right hand' },
];

for (const c of cases) {
  test(`ik on ${c.file.split('/').pop()} agrees with the native build, every method`, () => {
    const { dir, cleanup } = tempDir();
    const fig = c.file === 'stickman' ? mn.stickman() : mn.figureFromDocument(documentOf(c.file, dir));
    try {
      const rand = rng(11);
      const base = c.base === 'world' ? -1 : c.base;
      // reachable targets: the tip's position (and orientation) in the base frame at random chain states
      const goals = [];
      for (let k = 0; k < 3; k++) {
        fig.reset();
        for (const j of fig.joints) if (j.type === 'hinge' && j.limited) fig.q[j.qadr] = j.range[0] + (j.range[1] - j.range[0]) * rand();
        fig.fk();
        const t = fig.jointNames.indexOf(c.tip),
          b = base === -1 ? -1 : fig.jointNames.indexOf(base);
        const F = fig.frames,
          p = [F[12 * t + 9], F[12 * t + 10], F[12 * t + 11]];
        if (b >= 0) {
          const o = [F[12 * b + 9], F[12 * b + 10], F[12 * b + 11]],
            d = [0, 1, 2].map((i) => p[i] - o[i]);
          for (let i = 0; i < 3; i++) p[i] = F[12 * b + i] * d[0] + F[12 * b + 3 + i] * d[1] + F[12 * b + 6 + i] * d[2];
        }
        goals.push(p);
      }
      let solved = 0;
      for (const method of IK_METHODS) {
        for (const target of goals) {
          fig.reset();
          fig.fk();
          let r;
          try {
            r = fig.solveIK({ base, tip: c.tip, target }, { method, timeoutMs: 0 });
          } catch {
            // a method that refuses the chain refuses it natively too
            assert.throws(() =>
              native([
                'solve',
                c.file,
                '--base',
                c.base,
                '--tip',
                c.tip,
                '--target',
                target.join(','),
                '--method',
                method,
                '--timeout-ms',
                '0',
                '--json',
              ]),
            );
            continue;
          }
          const ref = JSON.parse(
            native(
              [
                'solve',
                c.file,
                '--base',
                c.base,
                '--tip',
                c.tip,
                '--target',
                target.join(','),
                '--method',
                method,
                '--timeout-ms',
                '0',
                '--json',
              ],
              { ok: [0, 1] },
            ),
          );
          assert.equal(r.status, ref.status, `${method}: status`);
          assert.equal(r.iterations, ref.iterations, `${method}: iterations`);
          const q = chainQ(fig, c.tip, c.base);
          assert.equal(q.length, ref.q.length);
          // the same pose: every joint where the native answer puts it (a DOF that cannot move
          // the goal, such as a wrist turning about the axis through the tip, is free to differ
          // by rounding, so the comparison is of the joints' positions)
          const solvedPos = new Float64Array(fig.positions);
          setChainQ(fig, c.tip, c.base, ref.q);
          fig.fk();
          for (let i = 0; i < solvedPos.length; i++)
            assert.ok(Math.abs(solvedPos[i] - fig.positions[i]) <= 1e-9, `${method}: position ${i}`);
          if (method !== 'ccd' && method !== 'fabrik')
            // the geometric methods turn that free DOF by atan2 of a near-zero vector
            for (let i = 0; i < q.length; i++) assert.ok(Math.abs(q[i] - ref.q[i]) <= 1e-9, `${method}: q[${i}] ${q[i]} vs ${ref.q[i]}`);
          if (r.ok) solved++;
        }
      }
      assert.ok(solved >= goals.length, 'at least LM meets every reachable target');
    } finally {
      fig.dispose();
      cleanup();
    }
  });
}

test('ik with an orientation goal agrees with the native build', () => {
  const { dir, cleanup } = tempDir();
  const file = join(data, 'robots/franka_panda/panda.urdf');
  const fig = mn.figureFromDocument(documentOf(file, dir));
  try {
    const target = [0.4, 0.1, 0.5],
      rot = [0, 1, 0, 0];
    const r = fig.solveIK({ tip: 'panda_link8', target, targetRotation: rot }, { timeoutMs: 0 });
    const ref = JSON.parse(
      native(
        [
          'solve',
          file,
          '--base',
          'world',
          '--tip',
          'panda_link8',
          '--target',
          [...target, ...rot].join(','),
          '--timeout-ms',
          '0',
          '--json',
        ],
        { ok: [0, 1] },
      ),
    );
    assert.equal(r.status, ref.status);
    assert.ok(r.ok && r.rotErr <= 1e-5 && r.posErr <= 1e-5);
    const q = chainQ(fig, 'panda_link8', 'panda_link0');
    for (let i = 0; i < q.length; i++) assert.ok(Math.abs(q[i] - ref.q[i]) <= 1e-9);
  } finally {
    fig.dispose();
    cleanup();
  }
});

test('a batch of solves gives the answers of single solves', () => {
  const { dir, cleanup } = tempDir();
  const fig = mn.figureFromDocument(documentOf(join(data, 'robots/franka_panda/panda.urdf'), dir));
  try {
    const targets = [0.4, 0.2, 0.5, 0.3, -0.3, 0.6, 5, 5, 5, 0.5, 0.0, 0.3];
    const problem = { tip: 'panda_link8', target: [0, 0, 0] },
      options = { timeoutMs: 0, maxRestarts: 3 };
    const seed = fig.restQ;
    const batch = fig.solveIKBatch(problem, options, seed, targets);
    assert.equal(batch.solved.length, 4);
    assert.equal(batch.q.length, 4 * fig.nq);
    let count = 0;
    for (let k = 0; k < 4; k++) {
      fig.setQ(seed);
      const r = fig.solveIK({ ...problem, target: targets.slice(3 * k, 3 * k + 3) }, options);
      assert.equal(batch.solved[k], r.ok ? 1 : 0);
      count += r.ok;
      for (let i = 0; i < fig.nq; i++) assert.equal(batch.q[k * fig.nq + i], fig.q[i]);
    }
    assert.equal(batch.count, count);
    assert.equal(batch.solved[2], 0, 'the target 8.7 m away is out of reach');
    assert.throws(() => fig.solveIKBatch(problem, options, seed, [1, 2]), /targets: expected n x 3/);
    assert.throws(() => fig.solveIKBatch(problem, options, [1], targets), /seedQ: expected 9 numbers/);
  } finally {
    fig.dispose();
    cleanup();
  }
});
