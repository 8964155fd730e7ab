// The selected joint's weight (stiff rod .. loose links, Welman 6.2), a log-scale slider kept
// in editor.json `weights`.
import { posingSettings } from '../posing.js';
import { $, fmt } from './dom.js';

/** Wires #joint-weight; returns syncWeight (shows the selected joint's weight). */
export function weightSlider(store, vp) {
  const fig = store.figure;
  const weight = $('joint-weight'),
    weightOut = $('joint-weight-value');
  function syncWeight() {
    const j = store.ui.selection.joint;
    weight.disabled = j === null;
    const w = j === null ? 1 : (posingSettings(store.settings).weights[fig.jointNames[vp.sites[vp.siteOf[j]].joints[0]]] ?? 1);
    weight.value = String(Math.log10(w));
    weightOut.textContent = fmt(w, 2);
  }
  weight.addEventListener('input', () => {
    const j = store.ui.selection.joint;
    if (j === null) return;
    const w = 10 ** Number(weight.value);
    const weights = { ...posingSettings(store.settings).weights };
    for (const jj of vp.sites[vp.siteOf[j]].joints) weights[fig.jointNames[jj]] = w;
    weightOut.textContent = fmt(w, 2);
    store.setSettings({ weights });
  });
  return syncWeight;
}
