// The editor's saving and its screen under trouble (issue 22): playing a sequence writes
// nothing, a save that fails is tried again with a back-off and the indicator says so, and a
// lost WebGL context is drawn again when the browser restores it. The real `marionette
// editor` binary on a temporary project, the page in Debian's Chromium.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeScratch, startServer, launchBrowser, openEditor, removeScratch, waitSaved, dragJoint } from './editor-harness.mjs';

let scratch, server, context, page;
const errors = [];
// a fresh project has no files yet (404s), and the refused saves below are expected
const realErrors = () => errors.filter((e) => !/status of 404|Failed to load resource|net::ERR_FAILED/.test(e));

before(async () => {
  scratch = makeScratch();
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
  page = await openEditor(context, server.url, errors);
  await waitSaved(page);
});

after(async () => {
  try {
    if (context) await context.close();
  } finally {
    if (server) await server.stop('SIGKILL');
    removeScratch(scratch);
  }
});

const state = () => page.evaluate(() => window.marionette.state());

test('playing a sequence writes nothing; stopping remembers the frame once', async () => {
  // a second key at frame 20 (the hand moved there)
  await page.evaluate(() => window.marionette.setFrame(20));
  await dragJoint(page, 'right hand', 'front', 40, -60, 10);
  await page.keyboard.press('i');
  await page.evaluate(() => window.marionette.setFrame(0));
  await waitSaved(page);
  const puts = [];
  const onRequest = (r) => {
    if (r.method() === 'PUT') puts.push(new URL(r.url()).searchParams.get('path'));
  };
  page.on('request', onRequest);
  try {
    await page.evaluate(() => window.marionette.setLoop(true));
    await page.waitForTimeout(400);
    puts.length = 0; // the loop setting itself is a change
    await page.mouse.click(5, 5); // focus the page, away from any field
    await page.keyboard.press(' ');
    await page.waitForFunction(() => window.marionette.frame() > 3, null, { timeout: 10000 });
    await page.waitForTimeout(1500);
    assert.ok(await page.evaluate(() => window.marionette.playing()));
    assert.deepEqual(puts, [], 'nothing written while playing');
    assert.equal(await page.textContent('#save-status'), 'Saved');
    await page.keyboard.press(' ');
    await page.waitForTimeout(700);
    assert.ok(puts.length <= 1 && puts.every((p) => p === 'editor.json'), puts.join(', '));
    await waitSaved(page);
    const ed = JSON.parse(readFileSync(join(scratch.project, 'editor.json'), 'utf8'));
    assert.equal(ed.frame, (await state()).frame);
  } finally {
    page.off('request', onRequest);
    await page.evaluate(() => {
      window.marionette.pause();
      window.marionette.setLoop(false);
    });
  }
});

test('a save that fails is tried again with a back-off until the server takes it', async () => {
  await waitSaved(page);
  let refused = 0;
  const refuse = (route) => {
    if (route.request().method() !== 'PUT') return route.continue();
    refused++;
    return route.abort('failed');
  };
  await page.route('**/api/file*', refuse);
  try {
    await dragJoint(page, 'left hand', 'front', -40, -50, 10);
    await page.waitForFunction(() => window.marionette.state().saveStatus === 'error', null, { timeout: 10000 });
    assert.match(await page.textContent('#save-status'), /^Not saved · retry in \d+ s$/);
    // the first retry (1 s) fails too; the next waits longer
    await page.waitForFunction(() => window.marionette.store.retry.count >= 2, null, { timeout: 10000 });
    const waits = await page.evaluate(() => window.marionette.store.retry.at - Date.now());
    assert.ok(waits > 1000, `the second retry waits ${waits} ms`);
    assert.ok(refused >= 2);
  } finally {
    await page.unroute('**/api/file*', refuse);
  }
  // no new edit: the page saves by itself on its next try
  await waitSaved(page, 15000);
  const doc = JSON.parse(readFileSync(join(scratch.project, 'sequence.json'), 'utf8'));
  const s = await state();
  const saved =
    doc.keys.find((k) => k.frame === s.frame)?.pose ?? JSON.parse(readFileSync(join(scratch.project, 'editor.json'), 'utf8')).pose.pose;
  assert.deepEqual(saved, JSON.parse(JSON.stringify(s.pose)));
});

test('a lost WebGL context is shown, and the views are drawn again when it is restored', async () => {
  const at = await page.evaluate(() => window.marionette.screen('head', 'front'));
  const pixel = () =>
    page.evaluate(({ x, y }) => {
      const c = document.getElementById('view-canvas'),
        r = c.getBoundingClientRect();
      const g = document.createElement('canvas');
      g.width = 1;
      g.height = 1;
      const ctx = g.getContext('2d');
      ctx.drawImage(c, x - r.left, y - r.top, 1, 1, 0, 0, 1, 1);
      return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
    }, at);
  const before = await pixel();
  await page.evaluate(() => {
    window.__ext = window.marionette.viewport.renderer.getContext().getExtension('WEBGL_lose_context');
    window.__ext.loseContext();
  });
  await page.waitForFunction(() => window.marionette.viewport.contextLost);
  assert.ok(await page.evaluate(() => document.getElementById('view-overlay').classList.contains('context-lost')));
  await page.evaluate(() => window.__ext.restoreContext());
  await page.waitForFunction(() => !window.marionette.viewport.contextLost);
  await page.waitForTimeout(300);
  assert.ok(!(await page.evaluate(() => document.getElementById('view-overlay').classList.contains('context-lost'))));
  // the head's sphere is drawn where it was, and a drag still poses the figure
  assert.deepEqual(await pixel(), before);
  const a = (await state()).pose;
  await dragJoint(page, 'right hand', 'front', 30, -30, 8);
  assert.notDeepEqual((await state()).pose, a);
  assert.deepEqual(realErrors(), []);
});
