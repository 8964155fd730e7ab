// The guard of the documents (docs/architecture.md, the doc layer): the WebAssembly module
// reads every shipped document with the readers of the command line and writes it back to
// the bytes `marionette` writes for it. tests/integration/test_doc_guard.c is the native
// side (every document read and written back by the library).
//
// - every figure: `marionette convert FIGURE fig.json`, then `marionette convert fig.json
//   back.json` (read and written back natively); the module reads fig.json and writes
//   back.json's bytes (the skin, the document's last member, is left to the page);
// - every sequence document of docs/examples: `marionette anim info SEQ --out back.json`;
//   the module reads SEQ with its figure and writes back.json's bytes, and reads those again
//   to the same bytes. A document of several figures is refused by both (not written back
//   yet);
// - every scene document of docs/examples: the module reads what the document says (its
//   frames, iterations and figures).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { load } from '../marionette.mjs';
import { native, tempDir, figures, root, join, cli } from './helpers.mjs';

const mn = await load();
const examples = join(root, 'docs', 'examples');
const docs = readdirSync(examples)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => ({ name: f, path: join(examples, f), text: readFileSync(join(examples, f), 'utf8') }));

// the figure document as written natively, and that document read and written back natively
function nativeDocuments(figure, dir, tag) {
  const fig = join(dir, `${tag}.json`),
    back = join(dir, `${tag}.back.json`);
  native(['convert', figure, fig]);
  native(['convert', fig, back]);
  return { doc: readFileSync(fig, 'utf8'), back: readFileSync(back, 'utf8') };
}

// the text without its skin member (the document's last one)
function withoutSkin(text) {
  const at = text.indexOf(',\n  "skin":');
  return at < 0 ? text : text.slice(0, at) + '}\n';
}

test('every shipped figure: the module writes back the bytes marionette writes back', () => {
  const { dir, cleanup } = tempDir();
  try {
    figures.forEach((figure, i) => {
      const { doc, back } = nativeDocuments(figure, dir, `f${i}`);
      const fig = mn.figureFromDocument(doc, figure);
      try {
        assert.equal(fig.toDocument(), withoutSkin(back), `${figure}: the module's document differs`);
        assert.equal(fig.skin != null, doc.includes('"skin":'), `${figure}: the skin is the page's`);
      } finally {
        fig.dispose();
      }
    });
  } finally {
    cleanup();
  }
});

test('every sequence document of docs/examples: the module writes back the bytes of anim info --out', () => {
  const { dir, cleanup } = tempDir();
  let checked = 0,
    several = 0;
  try {
    for (const d of docs) {
      const doc = JSON.parse(d.text);
      if (!doc.keys && !(doc.figures && doc.fps)) continue; // a scene document
      const out = join(dir, d.name);
      if (doc.figures) {
        // several figures: refused by both, with the same reason
        assert.throws(() => native(['anim', 'info', d.path, '--out', out]), /several figures is not written back yet/);
        assert.throws(() => mn.sequenceFromDocument(mn.stickman(), d.text, d.name), /several figures/);
        several++;
        continue;
      }
      native(['anim', 'info', d.path, '--out', out]);
      const back = readFileSync(out, 'utf8');
      // the module reads no file: it is given the figure the document names
      const figure =
        doc.figure === 'stickman'
          ? mn.stickman()
          : mn.figureFromDocument(nativeDocuments(join(examples, doc.figure), dir, `seqfig${checked}`).doc);
      try {
        const seq = mn.sequenceFromDocument(figure, d.text, d.name);
        assert.equal(seq.document.figure, doc.figure);
        const mine = seq.toDocument();
        assert.equal(mine, back, `${d.name}: the module's document differs from anim info --out`);
        const again = mn.sequenceFromDocument(figure, mine, d.name);
        assert.equal(again.toDocument(), back, `${d.name}: read again, written again`);
        again.dispose();
        seq.dispose();
      } finally {
        figure.dispose();
      }
      checked++;
    }
  } finally {
    cleanup();
  }
  assert.ok(checked >= 5 && several >= 1, `${checked} sequence documents, ${several} of several figures`);
});

test('a malformed document: the module says what marionette says, file, line and field', () => {
  const { dir, cleanup } = tempDir();
  try {
    const d = docs.find((x) => x.name === 'crouch_keys.json');
    const cases = [
      ['seq.json', d.text.replace('"fps": 30', '"fps": "thirty"'), 'fps'],
      ['seq2.json', d.text.replace('"rotation": "squad"', '"rotation": "spline"'), 'interpolation.rotation'],
    ];
    for (const [name, bad, field] of cases) {
      assert.notEqual(bad, d.text);
      const path = join(dir, name);
      writeFileSync(path, bad);
      const r = spawnSync(cli, ['anim', 'info', path], { encoding: 'utf8' });
      assert.notEqual(r.status, 0);
      const fig = mn.stickman();
      try {
        assert.throws(
          () => mn.sequenceFromDocument(fig, bad, path),
          (e) => {
            assert.match(e.message, new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: ${field.replace('.', '\\.')}: `));
            assert.ok(r.stderr.includes(e.message), `marionette said ${r.stderr}, the module ${e.message}`);
            assert.equal(e.field, field);
            return true;
          },
        );
      } finally {
        fig.dispose();
      }
    }
  } finally {
    cleanup();
  }
});

test('every scene document of docs/examples: the module reads what it says', () => {
  let checked = 0;
  for (const d of docs) {
    const doc = JSON.parse(d.text);
    if (doc.keys || (doc.figures && doc.fps)) continue;
    const sc = mn.sceneFromDocument(d.text, d.name);
    assert.equal(sc.iterations, doc.iterations ?? sc.iterations, d.name);
    if (doc.frames !== undefined) assert.equal(sc.frames, doc.frames, d.name);
    assert.deepEqual(
      sc.figures.map((f) => [f.name, f.file]),
      (doc.figures ?? []).map((f) => [f.name, f.file ?? '']),
      d.name,
    );
    if (doc.solver) assert.equal(sc.solver, doc.solver, d.name);
    checked++;
  }
  assert.ok(checked >= 6, `${checked} scene documents`);
});
