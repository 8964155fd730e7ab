// The module in a browser: Debian's Chromium, headless, driven by playwright-core, opens
// test/browser.html from a static server on 127.0.0.1. The page imports marionette.mjs as
// an ES module, fetches a figure document and the inputs, and runs forward kinematics, an
// LM solve, a constraint solve and a sequence sample; the results are compared here with
// the native build's (`marionette fk --json`, `solve --json`, `pose --json`, `anim bake`),
// to the tolerances of the Node tests. MN_SCREENSHOT=FILE keeps a copy of the page's
// screenshot for a look.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize, sep, extname } from 'node:path';
import { chromium } from 'playwright-core';
import { load } from '../marionette.mjs';
import { root, data, native, documentOf, rng, randomState, chainQ, setChainQ, pinsScene, bvhDistance } from './helpers.mjs';

const CHROMIUM = process.env.MN_CHROMIUM ?? '/usr/bin/chromium';
// headless, and nothing that reaches out to the network on its own
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

const web = join(root, 'web');
const panda = join(data, 'robots/franka_panda/panda.urdf');
const mn = await load(); // the module in Node, to make the inputs and replay native answers

// the constraint scene: pins, an orientation, a plane and a drag (helpers.mjs)
const scene = pinsScene;

// a sequence document of the stick figure: four keys, squad and Catmull-Rom in-betweens
const sequence = {
  figure: 'stickman',
  fps: 30,
  interpolation: { rotation: 'squad', translation: 'catmull-rom' },
  keys: [
    { frame: 0, pose: {} },
    {
      frame: 12,
      pose: {
        pelvis: { position: [0, -0.1, 0.02], rotation: [1, 0, 0, 0] },
        'torso.2': 0.2,
        'right leg.2': -0.5,
        'left leg.2': -0.5,
        'right knee': 0.8,
        'left knee': 0.8,
        'right elbow': -0.6,
      },
    },
    {
      frame: 20,
      pose: {
        pelvis: { position: [0.05, -0.2, 0.04], rotation: [0.995, 0, 0.0998, 0] },
        'torso.2': 0.35,
        'right knee': 1.4,
        'left knee': 1.4,
        'right elbow': -1.2,
        'right arm.1': -0.7,
      },
    },
    { frame: 30, pose: {} },
  ],
};
const frames = [0, 4, 9, 12, 16, 20, 25, 30];

let scratch, tmp, profile, tmpdirBefore, server, context, page, results, ik;
const pageErrors = [],
  requests = [];

function serve(req, res) {
  // GET only; /case/... from the test's folder, everything else from web/, nothing outside
  const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
  const [base, rel] = path.startsWith('/case/') ? [tmp, path.slice(6)] : [web, path.slice(1)];
  const file = normalize(join(base, rel));
  if (req.method !== 'GET' || !file.startsWith(base + sep) || !MIME[extname(file)]) {
    res.writeHead(req.method === 'GET' ? 404 : 405).end();
    return;
  }
  let body;
  try {
    body = readFileSync(file);
  } catch {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'Content-Type': MIME[extname(file)], 'Cache-Control': 'no-store' }).end(body);
}

before(async () => {
  // one private folder: the served inputs, Chromium's profile, and (through TMPDIR) the
  // temporary files of playwright and Chromium, all removed at the end
  scratch = mkdtempSync(join(tmpdir(), 'mn_web_browser_'));
  [tmp, profile] = [join(scratch, 'case'), join(scratch, 'profile')];
  for (const dir of [tmp, profile, join(scratch, 'tmp')]) mkdirSync(dir);
  tmpdirBefore = process.env.TMPDIR;
  process.env.TMPDIR = join(scratch, 'tmp');

  // the inputs: a Panda document written by `marionette convert`, a state within its
  // limits, and a reachable target (the hand of another such state)
  const doc = documentOf(panda, tmp);
  writeFileSync(join(tmp, 'panda.json'), doc);
  const fig = mn.figureFromDocument(doc);
  const rand = rng(29);
  const fkQ = Array.from(randomState(fig, rand));
  fig.setQ(randomState(fig, rand)).fk();
  const tip = fig.jointNames.indexOf('panda_link8');
  ik = { base: 'world', tip: 'panda_link8', target: Array.from(fig.positions.subarray(3 * tip, 3 * tip + 3)) };
  fig.dispose();
  writeFileSync(join(tmp, 'case.json'), JSON.stringify({ document: 'panda.json', fkQ, ik, scene, sequence, frames }));

  server = createServer(serve);
  await new Promise((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${server.address().port}/test/browser.html`;

  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 900, height: 520 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && pageErrors.push(`console: ${m.text()}`));
  page.on('response', (r) => r.status() >= 400 && pageErrors.push(`${r.url()}: ${r.status()}`));
  context.on('request', (r) => requests.push(r.url()));
  await page.goto(url);
  await page.waitForFunction(() => window.results?.sequence || window.failure, null, { timeout: 120000 });
  const failure = await page.evaluate(() => window.failure);
  assert.equal(failure, undefined, `the page failed: ${failure}`);
  results = await page.evaluate(() => window.results);
});

after(async () => {
  await context?.close();
  if (server) {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  }
  if (tmpdirBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpdirBefore;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function near(a, b, tol, label) {
  assert.equal(a.length, b.length, `${label}: length`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  assert.ok(worst <= tol, `${label}: largest difference ${worst}`);
}

function nativePositions(args) {
  return JSON.parse(native(args)).joints.flatMap((j) => j.position);
}

test('the page loaded the module with no error', async () => {
  assert.deepEqual(pageErrors, []);
  const origin = new URL(page.url()).origin;
  assert.ok(requests.length >= 4, requests.join(' '));
  for (const url of requests) assert.ok(url.startsWith(`${origin}/`) || url.startsWith('data:'), url);
  const r = await page.request.get(page.url().replace('test/browser.html', 'marionette.wasm'));
  assert.equal(r.headers()['content-type'], 'application/wasm');
});

test('fk in the browser agrees with the native build to 1e-12', () => {
  const ref = JSON.parse(native(['fk', panda, '--json']));
  assert.deepEqual(
    results.fk.names,
    ref.joints.map((j) => j.name),
  );
  near(
    results.fk.rest,
    ref.joints.flatMap((j) => j.position),
    1e-12,
    'rest',
  );
  const { fkQ } = JSON.parse(readFileSync(join(tmp, 'case.json'), 'utf8'));
  near(results.fk.state, nativePositions(['fk', panda, '--json', '--q', fkQ.join(',')]), 1e-12, 'state');
  assert.ok(
    results.fk.state.some((v, i) => Math.abs(v - results.fk.rest[i]) > 0.01),
    'the state moved the arm',
  );
});

test('an LM solve in the browser agrees with the native build', () => {
  const ref = JSON.parse(
    native(
      [
        'solve',
        panda,
        '--base',
        ik.base,
        '--tip',
        ik.tip,
        '--target',
        ik.target.join(','),
        '--method',
        'lm',
        '--timeout-ms',
        '0',
        '--json',
      ],
      { ok: [0, 1] },
    ),
  );
  assert.equal(results.ik.status, 'OK');
  assert.equal(results.ik.status, ref.status);
  assert.equal(results.ik.iterations, ref.iterations);
  assert.ok(results.ik.posErr <= 1e-5);
  const fig = mn.figureFromDocument(readFileSync(join(tmp, 'panda.json'), 'utf8'));
  try {
    fig.setQ(results.ik.q);
    near(chainQ(fig, ik.tip, ik.base), ref.q, 1e-9, 'chain q');
    setChainQ(fig, ik.tip, ik.base, ref.q);
    fig.fk();
    near(results.ik.positions, fig.positions, 1e-9, 'joint positions');
  } finally {
    fig.dispose();
  }
});

test('a constraint solve in the browser agrees with the native build', () => {
  const path = join(tmp, 'scene.json');
  writeFileSync(path, JSON.stringify(scene));
  const ref = JSON.parse(native(['pose', 'stickman', '--scene', path, '--json', '--solver', 'lagrange']));
  assert.equal(results.constrain.status, ref.status);
  assert.equal(results.constrain.iterations, ref.iters);
  near(results.constrain.q, ref.q, 1e-9, 'q');
  assert.ok(Math.abs(results.constrain.dragError - ref.max_drag_error) <= 1e-6 * Math.max(1, ref.max_drag_error));
});

test('sequence samples in the browser agree with marionette anim bake', () => {
  const path = join(tmp, 'seq.json'),
    bvh = join(tmp, 'seq.bvh');
  writeFileSync(path, JSON.stringify(sequence));
  native(['anim', 'bake', path, '--out', bvh, '--plain']);
  for (const f of frames) {
    // the BVH file holds 12 decimals of degrees and 14 digits of lengths
    const ref = JSON.parse(native(['fk', bvh, '--json', '--frame', String(f)]));
    const worst = bvhDistance({ jointNames: results.jointNames, positions: results.sequence[f] }, ref);
    assert.ok(worst <= 1e-9, `frame ${f}: largest difference ${worst}`);
  }
  assert.ok(
    results.sequence[12].some((v, i) => Math.abs(v - results.sequence[0][i]) > 0.01),
    'the keys move',
  );
});

test('bad arguments throw an Error naming the argument in the page, and the module goes on', () => {
  const expected = [
    /^problem\.tip: no joint named 'tail'/,
    /^q: expected 9 numbers/,
    /^problem\.target\[1\]: expected a finite number/,
    /^document: not valid JSON/,
    // the command line's reader, inside the module: "name: field: text"
    /^document: joints\[1\]\.axis: expected 3 finite numbers/,
  ];
  assert.equal(results.errors.length, expected.length);
  results.errors.forEach((e, i) => {
    assert.ok(e.thrown && e.isError, `case ${i}: ${JSON.stringify(e)}`);
    assert.match(e.message, expected[i]);
  });
  assert.ok(results.afterErrors, 'fk after the errors gives the positions of before');
});

test('the page draws the stick figure', async () => {
  // the canvas holds the bones (blue) and joints (red) of the posed figure
  const counts = await page.evaluate(() => {
    const c = document.getElementById('figure');
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let blue = 0,
      red = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 2] > 120 && px[i] < 80) blue++;
      if (px[i] > 150 && px[i + 1] < 90 && px[i + 2] < 90) red++;
    }
    return { blue, red };
  });
  assert.ok(counts.blue > 500 && counts.red > 200, JSON.stringify(counts));
  const shot = join(tmp, 'browser.png');
  await page.screenshot({ path: shot });
  const png = readFileSync(shot);
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  if (process.env.MN_SCREENSHOT) copyFileSync(shot, process.env.MN_SCREENSHOT);
  assert.equal(await page.textContent('#status'), 'done');
});

test('npm pack unpacked next to a page: the browser example of docs/web.md runs', async () => {
  const doc = readFileSync(join(root, 'docs', 'web.md'), 'utf8');
  const m = doc.match(/<!-- browser example -->\s*```html\n([\s\S]*?)```/);
  assert.ok(m, 'docs/web.md holds the browser example');
  assert.equal(m[1].trim().split('\n').length, 5, 'three lines in a script element');
  const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', scratch], { cwd: web, encoding: 'utf8' });
  execFileSync('tar', ['-xzf', join(scratch, out.trim().split('\n').pop()), '-C', tmp]);
  writeFileSync(join(tmp, 'package', 'example.html'), m[1]);
  const example = await context.newPage();
  try {
    const errors = [];
    example.on('pageerror', (e) => errors.push(e.message));
    await example.goto(page.url().replace('test/browser.html', 'case/package/example.html'));
    await example.waitForFunction(() => document.body?.textContent.length > 0 || null, null, { timeout: 60000 });
    assert.deepEqual(errors, []);
    assert.equal(await example.textContent('body'), 'pelvis 0 0.95 0');
  } finally {
    await example.close();
  }
});
