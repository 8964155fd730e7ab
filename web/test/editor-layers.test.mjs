// The editor's Layers menu end to end: the real `marionette editor` on a project whose
// sequence is the shipped layered example (docs/examples/layered_sequence.json), the page in
// Debian's Chromium (headless): the list of layers with their modes, weights at the current
// frame and masks, and the pose shown at a frame is the blend (the wave layer's elbow).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, makeScratch, startServer, launchBrowser, openEditor, removeScratch } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];

before(async () => {
  scratch = makeScratch('mn_editor_layers_');
  writeFileSync(join(scratch.project, 'sequence.json'), readFileSync(join(root, 'docs/examples/layered_sequence.json')));
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  page = await openEditor(context, server.url, errors);
});

after(async () => {
  try {
    if (context) await context.close();
  } finally {
    if (server) await server.stop('SIGKILL');
    removeScratch(scratch);
  }
});

const M = (fn, arg) => page.evaluate(fn, arg);
const rows = () => page.$$eval('#layers-menu .anim-layer', (els) => els.map((e) => e.textContent));

test('the Layers menu lists each layer with its mode, weight and mask', async () => {
  assert.equal((await M(() => window.marionette.state())).keys.length, 3);
  await M(() => window.marionette.setFrame(0));
  await page.click('#layers');
  await page.waitForSelector('#layers-menu:not([hidden]) .anim-layer');
  let r = await rows();
  assert.equal(r.length, 3);
  assert.match(r[0], /^wave additive, 7 keys/);
  assert.match(r[0], /weight 0\.00 at frame 0/);
  assert.match(r[0], /mask: right arm\.1, right arm\.2, right arm, right elbow, right hand\.1, right hand/);
  assert.match(r[1], /^look override, 2 keys/);
  assert.match(r[1], /weight 0\.50 at frame 0/);
  assert.match(r[1], /mask: head\.1, head\.2, head/);
  assert.match(r[2], /^bob additive, 5 keys/);
  assert.match(r[2], /weight 1\.00 at frame 0 \(always 1\)/);
  assert.match(r[2], /mask: pelvis$/);
  // the weight follows the frame (eased from 0 at frame 0 to 1 at frame 12)
  await M(() => window.marionette.setFrame(6));
  await page.waitForFunction(() => /weight 0\.50 at frame 6/.test(document.querySelector('#layers-menu .anim-layer')?.textContent ?? ''));
  await M(() => window.marionette.setFrame(30));
  await page.waitForFunction(() => /weight 1\.00 at frame 30/.test(document.querySelector('#layers-menu .anim-layer')?.textContent ?? ''));
  r = await rows();
  assert.match(r[0], /weight 1\.00 at frame 30/);
  // the pose shown is the blend: the wave bends the elbow to the layer's -1.2 (additive over
  // the rest angle the base keeps there)
  const pose = (await M(() => window.marionette.state())).pose;
  assert.ok(Math.abs(pose['right elbow'] + 1.2) < 1e-3, `right elbow ${pose['right elbow']}`);
  assert.deepEqual(
    errors.filter((e) => !/status of 404/.test(e)),
    [],
  );
});
