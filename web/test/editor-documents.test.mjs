// Every shipped sequence document (docs/examples) in the editor: the page opens it through the
// module's C reader, plays it (every frame from the first key to the last sampled, every joint
// finite), and saves an edit of it, which the server accepts only when its own reader reads
// it; the command line then reads the saved file with the same keys. The documents stand in
// a folder of the project (docs/examples), their figure files beside them: the Fox's
// document names its figure "Fox.glb" there (in the tree it reaches data/skinned through
// "..", which the server refuses: it reads only what is inside a document's folder).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { makeScratch, startServer, launchBrowser, openEditor, waitSaved, removeScratch, root, BINARY } from './editor-harness.mjs';
import { data } from './helpers.mjs';

// the documents the page edits (holding_hands_layered.json, a figure's own layers, is refused:
// editor-figures-members.test.mjs)
const DOCS = [
  'crouch_keys.json',
  'crouch_sequence.json',
  'layered_sequence.json',
  'walk_stance.json',
  'fox_sequence.json',
  'holding_hands_sequence.json',
];

let scratch, server, context;

before(async () => {
  scratch = makeScratch('mn_editor_documents_');
  mkdirSync(join(scratch.project, 'docs/examples'), { recursive: true });
  for (const d of DOCS) copyFileSync(join(root, 'docs/examples', d), join(scratch.project, 'docs/examples', d));
  copyFileSync(join(data, 'skinned/Fox.glb'), join(scratch.project, 'docs/examples/Fox.glb'));
  const fox = join(scratch.project, 'docs/examples/fox_sequence.json');
  const text = readFileSync(fox, 'utf8');
  assert.match(text, /"figure": "\.\.\/\.\.\/data\/skinned\/Fox\.glb"/);
  writeFileSync(fox, text.replace('../../data/skinned/Fox.glb', 'Fox.glb'));
  server = await startServer(scratch.project, scratch);
  context = await launchBrowser(scratch);
});

after(async () => {
  if (context) await context.close();
  if (server) await server.stop('SIGKILL');
  removeScratch(scratch);
});

const keyFrames = (doc) => [...new Set((doc.figures ?? [doc]).flatMap((f) => f.keys.map((k) => k.frame)))].sort((a, b) => a - b);

for (const name of DOCS) {
  test(`${name}: opened, played and saved through the C readers; the command line reads what was saved`, async () => {
    const rel = `docs/examples/${name}`,
      file = join(scratch.project, rel);
    const original = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(join(scratch.project, 'editor.json'), JSON.stringify({ sequence: rel }));
    const errors = [];
    const page = await openEditor(context, server.url, errors);
    try {
      const frames = keyFrames(original);
      // the page's keys are the document's (a document of several figures: every frame any figure has a key at)
      assert.deepEqual(await page.evaluate(() => window.marionette.state().keys.map((k) => k.frame)), frames);
      // played: every frame from the first key to the last, every joint where a finite state puts it
      const played = await page.evaluate(
        ([f0, f1]) => {
          const s = window.marionette.store;
          let finite = true,
            n = 0;
          for (let f = f0; f <= f1; f++, n++) {
            s.setFrame(f);
            finite &&= Array.from(s.figure.positions).every(Number.isFinite);
          }
          s.setFrame(f0);
          return { finite, n };
        },
        [frames[0], frames[frames.length - 1]],
      );
      assert.ok(played.finite, 'a frame put a joint at a non-finite place');
      assert.equal(played.n, frames[frames.length - 1] - frames[0] + 1);
      // an edit saved: the server reads the document before it writes it (a 422 would leave it unsaved)
      await page.evaluate(() => window.marionette.store.apply('comment', (d) => void (d.comment = `${d.comment ?? ''} (edited)`)));
      await waitSaved(page, 20000);
      const saved = JSON.parse(readFileSync(file, 'utf8'));
      assert.match(saved.comment, /\(edited\)$/);
      assert.deepEqual(keyFrames(saved), frames);
      const info = execFileSync(BINARY, ['anim', 'info', file], { encoding: 'utf8' });
      assert.match(info, /keys|figures/);
      assert.deepEqual(
        errors.filter((e) => !/status of 404/.test(e)),
        [],
      );
    } finally {
      await page.close();
    }
  });
}
