// The settings: the IK method, the constraint solver and its iterations (editor.json), and a
// BVH figure's scale (docs/sequence.md `scale`: its lengths times this are metres).
import { IK_METHODS } from '../../../marionette.mjs';
import { posingSettings } from '../posing.js';
import { rescaleDoc, restHeight } from '../docmodel.js';
import { $, status } from './dom.js';

/** Wires the solver settings; updateDragBase: the toolbar's, shown with them. */
export function solverSettings(store, updateDragBase) {
  const ik = $('ik-method');
  for (const m of IK_METHODS) {
    const o = document.createElement('option');
    o.value = m;
    o.textContent = m.toUpperCase();
    ik.append(o);
  }
  const cs = $('csolver'),
    iters = $('iterations');
  function syncSettings() {
    const st = posingSettings(store.settings);
    ik.value = st.ikMethod;
    cs.value = st.csolver;
    iters.value = String(st.iterations);
    updateDragBase();
  }
  ik.addEventListener('change', () => store.setSettings({ ikMethod: ik.value }));
  cs.addEventListener('change', () => store.setSettings({ csolver: cs.value }));
  iters.addEventListener('change', () => {
    const n = Math.round(Number(iters.value));
    if (n >= 1) store.setSettings({ iterations: n });
  });
  store.on('settings', syncSettings);
  syncSettings();
}

/** Wires #figure-scale: a new scale rescales the document, saves it and loads the page again. */
export function figureScale(store) {
  const fig = store.figure;
  const scaleRow = $('figure-scale-row'),
    scaleIn = $('figure-scale');
  scaleRow.hidden = !/\.bvh$/i.test(store.doc.figure ?? '');
  scaleIn.value = String(store.doc.scale ?? 1);
  scaleIn.addEventListener('change', async () => {
    const v = Number(scaleIn.value),
      old = store.doc.scale ?? 1;
    if (!(v > 0) || !Number.isFinite(v) || v === old) {
      scaleIn.value = String(old);
      return;
    }
    // every length of the document follows (key positions, lock targets), then the page
    // loads again with the figure at its new size
    store.apply('figure scale', (doc) => {
      rescaleDoc(doc, fig, v / old);
      if (v === 1) delete doc.scale;
      else doc.scale = v;
    });
    if (store.settings.pose) rescaleDoc({ keys: [store.settings.pose] }, fig, v / old);
    store.setSettings({});
    const st = await store.save();
    if (st !== 'saved') {
      status(`Figure scale: not saved (${store.saveError || st})`);
      return;
    }
    sessionStorage.setItem('marionette.notice', `Figure scale ${v}: ${((restHeight(fig) * v) / old).toFixed(2)} m tall`);
    location.reload();
  });
}
