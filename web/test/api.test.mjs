// Bad arguments throw an Error naming the argument (and never break the module), and
// nothing leaks across a thousand create/dispose cycles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { load } from '../marionette.mjs';
import { tempDir, documentOf, data, join, root } from './helpers.mjs';

const mn = await load();
const { dir, cleanup } = tempDir();
const pandaDoc = documentOf(join(data, 'robots/franka_panda/panda.urdf'), dir);
const skinDoc = documentOf(join(data, 'skinned/RiggedSimple.glb'), dir);
cleanup();

test('bad arguments throw errors that name them', () => {
  const fig = mn.figureFromDocument(pandaDoc);
  try {
    const cases = [
      [() => fig.setQ([1, 2]), /^Error: q: expected 9 numbers/],
      [() => fig.setQ([0, 0, 0, 0, 0, 0, 0, 0, NaN]), /^Error: q\[8\]: expected a finite number/],
      [() => fig.solveIK({ tip: 'panda_link8' }), /problem.target/],
      [() => fig.solveIK({ tip: 'hand', target: [0, 0, 0] }), /problem.tip: no joint named 'hand'/],
      [() => fig.solveIK({ tip: 99, target: [0, 0, 0] }), /problem.tip: out of range/],
      [() => fig.solveIK({ tip: 'panda_link8', target: [0, 0, Infinity] }), /problem.target\[2\]/],
      [() => fig.solveIK({ tip: 'panda_link8', target: [0, 0, 0] }, { method: 'newton' }), /options.method/],
      [() => fig.solveIK({ tip: 'panda_link8', target: [0, 0, 0] }, { tolPos: -1 }), /tol/],
      [() => fig.solveIK({ tip: 'panda_link8', target: [0, 0, 0], targetRotation: [0, 0, 0, 0] }), /target_rot|targetRotation|quaternion/],
      [() => fig.solveIK({ base: 'panda_link8', tip: 'panda_link1', target: [0, 0, 0] }), /tip|base/],
      [() => fig.setFrame(0), /frame: this figure has no motion/],
      // the module's reader is the command line's: "name: field: text", line when it has one
      [() => mn.figureFromDocument('{'), /^Error: document: not valid JSON/],
      [() => mn.figureFromDocument({ format: 'x' }), /^Error: document: format: expected "marionette-figure"/],
      [() => mn.figureFromDocument(pandaDoc.replace('"type":"hinge"', '"type":"spring"')), /^Error: document: joints\[1\]\.type: /],
      [
        () => mn.figureFromDocument(pandaDoc.replace('"offset":[0,0,0.333]', '"offset":[0,0]'), 'panda.json'),
        /^Error: panda.json: joints\[1\]\.offset: /,
      ],
      [
        () => mn.figureFromDocument(pandaDoc.replace('"name":"panda_link1"', '"name":"panda_link0"')),
        /^Error: document: joints\[1\].*panda_link0/,
      ],
      [() => mn.figureFromSkeleton('this is not a skeleton'), /^Error: .+/],
      [() => mn.figureFromBVH('HIERARCHY\nROOT x {'), /^Error: .+/],
      [() => mn.figureFromBVH('x', { scale: 0 }), /options.scale/],
      [() => mn.createConstraintSystem([]), /figures: expected 1..8/],
      [() => mn.createConstraintSystem([{}]), /figures\[0\]: not a figure/],
      [() => mn.createRig({ dim: 4 }), /skin.dim/],
      [() => mn.createRig({ ...JSON.parse(skinDoc).skin, influences: 9 }), /skin.influences/],
      [() => mn.createRig({ ...JSON.parse(skinDoc).skin, weight: [1] }), /skin.weight/],
    ];
    for (const [fn, re] of cases) assert.throws(fn, re);
    // the module still works after every refusal, and the state was not touched
    assert.deepEqual(Array.from(fig.q), Array.from(fig.restQ));
    const r = fig.solveIK({ tip: 'panda_link8', target: [0.4, 0.2, 0.5] }, { timeoutMs: 0 });
    assert.ok(r.ok);
    fig.q[3] = NaN;
    assert.throws(() => fig.fk(), /^Error: q: /);
    assert.throws(() => fig.solveIK({ tip: 'panda_link8', target: [0.4, 0.2, 0.5] }), /seed|q/);
  } finally {
    fig.dispose();
  }
  assert.throws(() => fig.q, /figure: this figure was disposed/);
  fig.dispose(); // twice is harmless
});

test('a view kept past dispose() throws on use, and never reaches the next figure', () => {
  const a = mn.stickman();
  const q = a.q,
    pos = a.positions,
    frames = a.frames;
  a.q[2] = 0.25;
  assert.equal(q[2], 0.25);
  assert.ok(q instanceof Float64Array && q.length === a.nq);
  assert.deepEqual(Array.from(q.subarray(0, 3)), Array.from(a.q).slice(0, 3));
  a.dispose();
  // the next figure gets the memory a had: nothing may reach it through a's views
  const b = mn.stickman();
  const before = Array.from(b.q);
  for (const v of [q, pos, frames]) {
    assert.throws(() => {
      v[0] = 123;
    }, /figure: this figure was disposed/);
    assert.throws(() => v[0], /figure: this figure was disposed/);
    assert.throws(() => v.set([1, 2, 3]), /figure: this figure was disposed/);
    assert.throws(() => Float64Array.from(v), /figure: this figure was disposed/);
  }
  assert.deepEqual(Array.from(b.q), before);
  b.dispose();
});

const tinyBVH = `HIERARCHY
ROOT hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT knee
  {
    OFFSET 0 -1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 1 0 0 0 0 10 0 0
0 1 0 5 0 0 20 0 0
`;

test('a thousand create/dispose cycles leak nothing', () => {
  const skin = JSON.parse(skinDoc).skin;
  const cycle = () => {
    const b = mn.figureFromBVH(tinyBVH);
    b.setFrame(1);
    const seq = mn.createSequence(b, { rotation: 'squad' });
    seq.addMotion(b.motion.frames);
    const knee = seq.addHandle({ joint: 'knee' });
    seq.addConstraint({ type: 'pin', handle: knee, lock: true, start: 0, end: 1 });
    seq.sample(0.5);
    seq.solveFrame(0.5);
    // edits, clips and records (an undone cut, a paste, a refused undo, one left to dispose)
    const { clip, edit } = seq.cut(0, 1);
    seq.undo(edit);
    const paste = seq.paste(clip, 5);
    try {
      seq.undo(edit);
    } catch {
      // refused, as it should be: its error path is what leaks or not
    }
    seq.undo(paste);
    paste.dispose();
    clip.dispose();
    seq.stretch(0, 2, 2);
    const c = seq.addConstraint({ type: 'pin', handle: knee, start: 0, end: 1 });
    seq.setTargetKey(c, { frame: 0, target: [0, 0, 0] });
    seq.solveFrame(0.5);
    seq.dispose();
    b.dispose();
    try {
      mn.figureFromBVH(tinyBVH.replace('Frames: 2', 'Frames: x'));
    } catch {
      // refused, as it should be: its error path is what leaks or not
    }
    try {
      mn.figureFromDocument(pandaDoc.replace('"type":"hinge"', '"type":"spring"'));
    } catch {
      // refused, as it should be: its error path is what leaks or not
    }
    const fig = mn.figureFromDocument(pandaDoc);
    fig.solveIK({ tip: 'panda_link8', target: [0.4, 0.2, 0.5] }, { timeoutMs: 0 });
    const st = mn.stickman();
    const sys = mn.createConstraintSystem([st, fig]);
    const h = sys.addHandle({ joint: 'right hand' });
    sys.addConstraint({ type: 'pin', handle: h, target: [0, 1, 0] });
    sys.solve({ maxIters: 3 });
    try {
      fig.solveIK({ tip: 'nowhere', target: [0, 0, 0] });
    } catch {
      // refused, as it should be: its error path is what leaks or not
    }
    const rig = mn.createRig(skin);
    const fitter = rig.createFitter();
    fitter.fit(rig.restPose(), rig.deform(rig.restPose()));
    fitter.dispose();
    rig.dispose();
    sys.dispose();
    st.dispose();
    fig.dispose();
  };
  cycle(); // first use may grow the memory
  const live = mn.allocations().live,
    bytes = mn.memoryBytes(),
    total = mn.allocations().total;
  for (let i = 0; i < 1000; i++) cycle();
  assert.equal(mn.allocations().live, live, 'live heap blocks');
  assert.ok(mn.allocations().total > total + 1000, 'the counter counts');
  assert.equal(mn.memoryBytes(), bytes, 'the module memory did not grow');
});

test('solves allocate nothing', () => {
  const fig = mn.figureFromDocument(pandaDoc);
  try {
    const before = mn.allocations().total;
    for (let i = 0; i < 20; i++) {
      fig.reset();
      fig.solveIK({ tip: 'panda_link8', target: [0.3 + 0.01 * i, 0.2, 0.5] }, { method: i % 2 ? 'ccd' : 'lm', timeoutMs: 0 });
    }
    assert.equal(mn.allocations().total, before);
  } finally {
    fig.dispose();
  }
});

test('npm pack installs into an empty folder and the example of docs/web.md runs', () => {
  const doc = readFileSync(join(root, 'docs', 'web.md'), 'utf8');
  const m = doc.match(/<!-- example -->\s*```js\n([\s\S]*?)```/);
  assert.ok(m, 'docs/web.md holds the example');
  assert.equal(m[1].trim().split('\n').length, 3, 'three lines');
  const { dir, cleanup } = tempDir();
  try {
    const web = join(root, 'web');
    const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: web, encoding: 'utf8' });
    const tarball = join(dir, out.trim().split('\n').pop());
    const app = join(dir, 'app');
    execFileSync('mkdir', ['-p', app]);
    execFileSync('npm', ['init', '-y'], { cwd: app, stdio: 'ignore' });
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app, stdio: 'ignore' });
    execFileSync('cp', [join(root, 'docs', 'examples', 'web-hello.mjs'), join(app, 'example.mjs')]);
    const printed = execFileSync('node', ['example.mjs'], { cwd: app, encoding: 'utf8' });
    assert.equal(readFileSync(join(app, 'example.mjs'), 'utf8').trim(), m[1].trim());
    assert.match(printed, /^pelvis 0 0\.95 0\n/);
  } finally {
    cleanup();
  }
});

test('views follow the module memory when it grows', () => {
  const fig = mn.stickman();
  const rigs = [];
  try {
    const before = fig.positions,
      bytes = mn.memoryBytes();
    // rigs of many vertices until the memory has grown
    for (let k = 0; mn.memoryBytes() === bytes && k < 64; k++) {
      const n = 20000,
        verts = new Float64Array(3 * n).map((_, i) => i % 7);
      rigs.push(
        mn.createRig({
          dim: 3,
          vertices: verts,
          influences: 1,
          weightIndex: new Int32Array(n),
          weight: new Float64Array(n).fill(1),
          controllers: [{ name: 'c', pivot: [0, 0, 0] }],
        }),
      );
    }
    assert.ok(mn.memoryBytes() > bytes, 'the memory grew');
    // a view taken before still reads the figure (it follows the memory, never detached)
    assert.equal(before.length, 3 * fig.jointCount);
    assert.equal(before[1], 0.95);
    const now = fig.positions;
    assert.equal(now.length, 3 * fig.jointCount);
    assert.equal(now[1], 0.95);
    fig.q[0] = 0.25;
    fig.fk();
    assert.equal(fig.positions[0], 0.25);
  } finally {
    for (const r of rigs) r.dispose();
    fig.dispose();
  }
});

test('load() fetches the module over HTTP, as in a browser', async (t) => {
  const { createServer } = await import('node:http');
  const wasm = readFileSync(join(root, 'web', 'marionette.wasm'));
  const server = createServer((req, res) => {
    if (req.url === '/marionette.wasm') {
      res.writeHead(200, { 'content-type': 'application/wasm' });
      res.end(wasm);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}`;
  const other = await load({ wasm: new URL(`${base}/marionette.wasm`) });
  const fig = other.stickman();
  assert.equal(fig.positions[1], 0.95);
  fig.dispose();
  await assert.rejects(load({ wasm: new URL(`${base}/missing.wasm`) }), /wasm: cannot fetch .*404/);
});
