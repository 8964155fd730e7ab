// The toolbar: undo, redo, the drag mode and its base joint, the lock menu, the balance
// overlay, comfort and balance during drags, aligned views, auto-key and Solve.
import { posingSettings, comfortOn } from '../posing.js';
import { $, status } from './dom.js';

/**
 * Wires the toolbar. lockAdded(name): shows the lock the menu added (the locks panel).
 * Returns updateDragBase (shows the drag mode and base of the settings).
 */
export function toolbar(store, poser, lockAdded) {
  const fig = store.figure;
  const undo = $('undo'),
    redo = $('redo');
  const syncUndo = () => {
    undo.disabled = !store.canUndo();
    redo.disabled = !store.canRedo();
    undo.title = `Undo ${store.undoLabel()} (Ctrl+Z)`;
    redo.title = `Redo ${store.redoLabel()} (Ctrl+Shift+Z)`;
  };
  undo.addEventListener('click', () => store.undo());
  redo.addEventListener('click', () => store.redo());
  for (const ev of ['doc', 'pose', 'save']) store.on(ev, syncUndo);
  syncUndo();

  const mode = $('drag-mode'),
    base = $('drag-base');
  for (const name of fig.jointNames) {
    const o = document.createElement('option');
    o.value = name;
    o.textContent = name;
    base.append(o);
  }
  function updateDragBase() {
    const st = posingSettings(store.settings);
    mode.value = st.dragMode;
    base.hidden = st.dragMode !== 'named';
    base.value = st.dragBase ?? fig.jointNames[0];
  }
  mode.addEventListener('change', () => {
    const patch = { dragMode: mode.value };
    if (mode.value === 'named' && !store.settings.dragBase) patch.dragBase = fig.jointNames[0];
    store.setSettings(patch);
    updateDragBase();
  });
  base.addEventListener('change', () => store.setSettings({ dragBase: base.value }));
  updateDragBase();

  // lock menu
  const menu = $('lock-menu'),
    menuButton = $('lock-menu-button');
  menuButton.addEventListener('click', (e) => {
    e.stopPropagation();
    const r = menuButton.getBoundingClientRect();
    menu.style.left = `${r.left}px`;
    menu.style.top = `${r.bottom + 2}px`;
    menu.hidden = !menu.hidden;
    for (const b of menu.querySelectorAll('button'))
      b.disabled = b.dataset.lock === 'equal' ? store.ui.selection.joints.length !== 2 : store.ui.selection.joint === null;
  });
  document.addEventListener('click', () => {
    menu.hidden = true;
  });
  menu.addEventListener('click', (e) => {
    const kind = e.target.dataset?.lock;
    const j = store.ui.selection.joint;
    if (kind === 'equal' && store.ui.selection.joints.length === 2) {
      // two parts joined (Shift+click the second): a hand-to-hand lock between two figures
      const [a, b] = store.ui.selection.joints.map((x) => fig.jointNames[x]);
      lockAdded(poser.addJoin(a, b));
      menu.hidden = true;
      return;
    }
    if (!kind || j === null) return;
    const names = poser.addLock(kind, fig.jointNames[j]);
    lockAdded(names[0]);
    menu.hidden = true;
  });
  // the balance overlay (viewport.updateBalance): on unless editor.json says false
  const overlay = $('balance-overlay');
  overlay.checked = store.settings.balanceOverlay !== false;
  overlay.addEventListener('change', () => {
    store.setSettings({ balanceOverlay: overlay.checked });
    overlay.blur();
  });
  // comfort and balance during drags (posing.js applyComfort): each on by default for a
  // figure with feet; editor.json `comfort` and `balance` once changed
  for (const key of ['comfort', 'balance']) {
    const box = $(key);
    box.checked = comfortOn(store.settings, fig, key);
    box.addEventListener('change', () => {
      store.setSettings({ [key]: box.checked });
      box.blur();
    });
  }
  // the views turned to the figure's forward axis (viewport.frameAll)
  const align = $('align-views');
  align.checked = !!store.settings.alignViews;
  align.addEventListener('change', () => {
    store.setSettings({ alignViews: align.checked });
    align.blur();
  });
  // auto-key: a toggle kept in editor.json
  const autoKey = $('auto-key');
  const syncAutoKey = () => autoKey.classList.toggle('on', !!store.settings.autoKey);
  autoKey.addEventListener('click', () => {
    store.setSettings({ autoKey: !store.settings.autoKey });
    autoKey.blur();
  });
  store.on('settings', syncAutoKey);
  syncAutoKey();
  $('solve').addEventListener('click', () => {
    const before = Float64Array.from(fig.q);
    const r = poser.solveLocks(200);
    status(
      r.ok
        ? `Locks satisfied (worst ${r.maxViolation.toExponential(1)})`
        : `Locks not all met: ${r.status}, worst ${r.maxViolation.toExponential(2)}`,
    );
    store.commitPose('solve', before);
  });
  return updateDragBase;
}
