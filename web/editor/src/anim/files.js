// Files in and out: the sequence exported as BVH or glTF (the server bakes the stored document
// as `marionette anim bake` does, locks kept, then the page downloads the file), and a figure
// file dropped on the page (.bvh, .skel, .urdf, .gltf, .glb) uploaded into the project and
// opened as a new sequence document of that figure.
import { h } from './dom.js';
import { newSequenceDoc, guessUnits, restHeight, qToPose } from '../docmodel.js';
import { expect, downloadUrl } from '../server.js';

/** Saves, exports the sequence (format 'bvh' or 'glb'), downloads it; resolves to its path. */
export async function exportSequence(anim, format) {
  const s = anim.store;
  anim.status(`Exporting ${format === 'bvh' ? 'BVH' : 'glTF'}\u2026`);
  const saved = await s.save();
  if (saved !== 'saved') throw new Error(`export: the sequence is not saved (${s.saveError || saved})`);
  const { path } = expect(await s.server.exportSequence(s.sequencePath, format), 'export');
  const a = document.createElement('a');
  a.href = downloadUrl(path);
  a.download = path.split('/').pop();
  document.body.append(a);
  a.click();
  a.remove();
  anim.status(`Exported ${path}`);
  anim.lastExport = path;
  return path;
}

const FIGURE = /\.(bvh|skel|urdf|gltf|glb)$/i;

/**
 * A BVH take's motion as sequence keys, as `marionette anim import --tol` makes them: the
 * take read at `scale` (so its lengths are metres), every frame given to the module's
 * Sequence.addMotion, which keeps the fewest keys whose in-betweens stay within tol metres of
 * every joint (tol 0: every frame a key), and the heel and toe contacts of its feet
 * (Figure.footContacts: [] when no rig table knows its legs). Returns { keys, fps, frames,
 * maxError, contacts }.
 */
export function motionKeys(m, text, scale, tol) {
  const fig = m.figureFromBVH(text, { scale });
  try {
    if (!fig.motion || fig.motion.nframes < 1) throw new Error('the take has no motion');
    return reduceMotion(m, fig, fig.motion.frames, fig.motion.frameTime, tol);
  } finally {
    fig.dispose();
  }
}

/** The keys of a motion (frames: nq numbers each, frameTime seconds) of a figure, reduced by
 * Sequence.addMotion within tol metres as above. */
function reduceMotion(m, fig, frames, frameTime, tol) {
  const fps = Math.max(1, Math.round(1 / frameTime));
  const seq = m.createSequence(fig, { fps });
  try {
    const r = seq.addMotion(frames, { tol });
    const keys = [];
    for (let k = 0; k < seq.keyCount; k++) keys.push({ frame: seq.keyFrame(k), pose: qToPose(fig, seq.keyQ(k)) });
    const nframes = frames.length / fig.nq;
    const contacts = fig.footContacts({ frames, nframes, frameTime });
    return { keys, fps, frames: nframes, maxError: r.maxError, contacts };
  } finally {
    seq.dispose();
  }
}

/** A glTF file's first animation as sequence keys: the figure document the server made of it
 * (its `motion`: the animation at its own key times when evenly spaced, else 30 per second),
 * reduced as a BVH take's; glTF lengths are metres. Null when it has no animation. */
export function gltfMotionKeys(m, figureDoc, tol) {
  const mo = figureDoc?.motion;
  if (!mo?.frames?.length || mo.frames.length < 2) return null;
  const fig = m.figureFromDocument(figureDoc);
  try {
    return reduceMotion(m, fig, mo.frames.flat(), mo.frame_time, tol);
  } finally {
    fig.dispose();
  }
}

/**
 * Uploads a figure file and opens a new sequence of it; resolves to the sequence's path.
 * options.motion: { tol } opens a BVH take's motion, or a glTF file's first animation, as keys
 * (motionKeys, gltfMotionKeys), else its skeleton at rest (one key). options.ask: a glTF file
 * with an animation asks first (the dialog of a dropped BVH take; Cancel opens nothing, the
 * file staying in the project).
 */
export async function openFigureFile(anim, file, options = {}) {
  const s = anim.store;
  if (!FIGURE.test(file.name)) throw new Error(`${file.name}: not a figure file (.bvh, .skel, .urdf, .gltf, .glb)`);
  anim.status(`Opening ${file.name}\u2026`);
  const up = expect(await s.server.upload(file.name, await file.arrayBuffer()), file.name);
  const stem = up.path.replace(/\.[^./]+$/, '');
  let path = `${stem}.sequence.json`;
  const doc = newSequenceDoc(up.path);
  // a BVH file's lengths are in whatever units it was captured in: opened at its own size,
  // made metres by the sequence's `scale` when its height says which units they are
  // (docs/editor.md "Opening a figure file"), so that locks' tolerances in metres hold
  let notice = `Opened ${up.path}`;
  if (/\.bvh$/i.test(up.path)) {
    const fig = s.m.figureFromDocument(up.figure);
    try {
      const h = restHeight(fig),
        { scale, units } = guessUnits(h);
      if (scale !== 1) doc.scale = scale;
      notice =
        scale !== 1
          ? `${up.path}: ${h.toFixed(1)} units tall, read as ${units}: scale ${scale} (${(h * scale).toFixed(2)} m). Settings \u2192 Figure scale changes it.`
          : `${up.path}: ${h.toFixed(2)} units tall, read as ${units} (scale 1). Settings \u2192 Figure scale changes it.`;
    } finally {
      fig.dispose();
    }
    if (options.motion) {
      anim.status(`Reading the motion of ${file.name}\u2026`);
      const tol = Number(options.motion.tol) || 0;
      const mk = motionKeys(s.m, await file.text(), doc.scale ?? 1, tol);
      doc.keys = mk.keys;
      doc.fps = mk.fps;
      if (mk.contacts.length) doc.contacts = mk.contacts;
      notice +=
        ` Its motion: ${mk.frames} frames at ${mk.fps} fps as ${mk.keys.length} keys` +
        (tol > 0 ? ` within ${tol} m (largest error ${mk.maxError.toExponential(1)} m).` : ' (every frame a key).');
    }
  }
  if (/\.(gltf|glb)$/i.test(up.path) && up.figure?.motion?.frames?.length > 1) {
    let motion = options.motion;
    if (options.ask) {
      const answer = await motionDialog(file.name, `${up.figure.motion.frames.length} frames of its first animation`);
      if (!answer) {
        anim.status(`Stored ${up.path}; nothing opened`);
        return null;
      }
      motion = answer.motion;
    }
    if (motion) {
      const tol = Number(motion.tol) || 0;
      const mk = gltfMotionKeys(s.m, up.figure, tol);
      doc.keys = mk.keys;
      doc.fps = mk.fps;
      if (mk.contacts.length) doc.contacts = mk.contacts;
      notice +=
        `. Its animation: ${mk.frames} frames at ${mk.fps} fps as ${mk.keys.length} keys` +
        (tol > 0 ? ` within ${tol} m (largest error ${mk.maxError.toExponential(1)} m).` : ' (every frame a key).');
    }
  }
  for (let n = 2; ; n++) {
    const r = await s.server.putFile(path, JSON.stringify(doc, null, 1) + '\n', '');
    if (r.ok) break;
    if ((r.status !== 409 && r.status !== 412) || n > 50) expect(r, path);
    path = `${stem}-${n}.sequence.json`;
  }
  anim.scaleNotice = notice;
  await switchSequence(anim, path, notice);
  return path;
}

/** Makes `path` the project's open sequence (editor.json) and loads the page again: the
 * views, panels and figure are built afresh for its figure. */
export async function switchSequence(anim, path, notice = '') {
  const s = anim.store;
  anim.player.pause();
  await s.save();
  s.setSettings({ sequence: path });
  const st = await s.save();
  if (st !== 'saved') throw new Error(`cannot open ${path}: the settings are not saved (${s.saveError || st})`);
  // shown by the page once loaded again (main.js)
  if (notice) sessionStorage.setItem('marionette.notice', notice);
  setTimeout(() => location.reload(), 0);
}

export function installDrop(anim) {
  const over = (e) => {
    if (![...(e.dataTransfer?.types ?? [])].includes('Files')) return;
    e.preventDefault();
    document.body.classList.add('anim-drop');
  };
  window.addEventListener('dragover', over);
  window.addEventListener('dragenter', over);
  window.addEventListener('dragleave', (e) => {
    if (!e.relatedTarget) document.body.classList.remove('anim-drop');
  });
  window.addEventListener('drop', async (e) => {
    document.body.classList.remove('anim-drop');
    const file = e.dataTransfer?.files?.[0];
    if (!file) return;
    e.preventDefault();
    // a BVH take: its motion (keys reduced within a tolerance) or its skeleton at rest; a glTF
    // file asks the same once it is known to have an animation
    const options = /\.bvh$/i.test(file.name) ? await motionDialog(file.name) : { ask: /\.(gltf|glb)$/i.test(file.name) };
    if (!options) return;
    openFigureFile(anim, file, options).catch((err) => anim.status(err.message));
  });
}

/** The dialog a dropped BVH take (or glTF file with an animation) opens: resolves to
 * { motion: { tol } }, { motion: null } (the skeleton at rest) or null (cancelled: Escape,
 * Cancel). */
function motionDialog(name, what = '') {
  return new Promise((resolve) => {
    const tol = h('input', {
      id: 'motion-tol',
      type: 'number',
      min: '0',
      step: '0.001',
      value: '0.01',
      title: 'The largest distance (metres) any joint of an in-between may be from the take',
    });
    const done = (v) => {
      box.remove();
      window.removeEventListener('keydown', key, true);
      resolve(v);
    };
    const key = (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        done(null);
      }
    };
    const box = h(
      'div',
      { id: 'motion-dialog', class: 'anim-dialog' },
      h('div', { class: 'anim-title' }, `Open ${name}` + (what ? ` (${what})` : '')),
      h('label', { class: 'anim-row' }, 'Keys within ', tol, ' m of the take (0: every frame a key)'),
      h(
        'div',
        { class: 'anim-row' },
        h(
          'button',
          { id: 'motion-open', onclick: () => done({ motion: { tol: Math.max(0, Number(tol.value) || 0) } }) },
          'Open its motion',
        ),
        h('button', { id: 'motion-rest', onclick: () => done({ motion: null }) }, 'Its skeleton at rest'),
        h('button', { id: 'motion-cancel', onclick: () => done(null) }, 'Cancel'),
      ),
    );
    window.addEventListener('keydown', key, true);
    document.body.append(box);
    tol.focus();
  });
}
