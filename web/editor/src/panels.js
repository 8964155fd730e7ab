// The panels around the views, one module each (panels/): the joint list, the forward-kinematic
// sliders with their limits and the joint's weight (Welman 6.1.3, 6.2), the toolbar (undo,
// redo, drag mode, lock menu, solve), the locks (6.3), the settings and the save indicator.
import { $, status } from './panels/dom.js';
import { jointList } from './panels/joints.js';
import { sliderPanel } from './panels/sliders.js';
import { weightSlider } from './panels/weight.js';
import { toolbar } from './panels/toolbar.js';
import { lockPanel } from './panels/locks.js';
import { solverSettings, figureScale } from './panels/settings.js';
import { saveIndicator } from './panels/save.js';

export { status };

/** Builds every panel of the page; returns { renderLocks, buildSliders, selectLock }. */
export function installPanels(store, viewport, poser) {
  const list = jointList(store, viewport);
  const syncWeight = weightSlider(store, viewport);
  const { buildSliders, syncSliders } = sliderPanel(store, viewport, poser, list, syncWeight);
  store.on('selection', () => {
    buildSliders();
    updateDragBase();
  });
  store.on('pose', syncSliders);
  buildSliders();
  const updateDragBase = toolbar(store, poser, (name) => locks.selectLock(name));
  const locks = lockPanel(store, viewport, poser);
  solverSettings(store, updateDragBase);
  figureScale(store);
  saveIndicator(store);
  $('project-name').textContent = `${store.project?.name ?? ''} \u00b7 ${store.sequencePath} \u00b7 ${store.figure.name}`;
  return { renderLocks: locks.renderLocks, buildSliders, selectLock: locks.selectLock };
}
