// A document of several figures whose figures have their own layers, time warp or contact
// tracks (docs/examples/holding_hands_layered.json) is not edited by the page yet: the page
// says so, naming the file and the member, and the document on disk is left as it was.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeScratch, startServer, launchBrowser, removeScratch, root } from './editor-harness.mjs';

let scratch, server, context;
const text = readFileSync(join(root, 'docs/examples/holding_hands_layered.json'), 'utf8');

before(async () => {
  scratch = makeScratch('mn_editor_figmembers_');
  writeFileSync(join(scratch.project, 'layered.json'), text);
  writeFileSync(join(scratch.project, 'editor.json'), JSON.stringify({ sequence: 'layered.json' }));
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
});

after(async () => {
  if (context) await context.close();
  if (server) await server.stop('SIGKILL');
  removeScratch(scratch);
});

test("a figure's own layers: the page refuses the document, naming the file and the member, and writes nothing", async () => {
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => /Could not open the project/.test(document.getElementById('status-line')?.textContent ?? ''), null, {
    timeout: 30000,
  });
  const line = await page.evaluate(() => document.getElementById('status-line').textContent);
  assert.match(line, /layered\.json: figures\[0\]\.layers: the editor does not edit/);
  // nothing is written, whatever the page does next
  await page.waitForTimeout(1500);
  assert.equal(readFileSync(join(scratch.project, 'layered.json'), 'utf8'), text);
  await page.close();
});
