// The editor page: loads the module, opens the project through the server, builds the
// views and panels, and exposes window.marionette (docs/editor.md).
import { load } from '../../marionette.mjs';
import { Store } from './store.js';
import { Viewport } from './viewport.js';
import { Poser, quatOfFrame } from './posing.js';
import { installPanels, status } from './panels.js';
import { installKeyboard } from './keyboard.js';
import { qToPose } from './docmodel.js';
import { installAnimation } from './anim/index.js';
import { makeRoot, restoreHistory } from './reroot.js';
import { loadObjects } from './objects.js';

// The server gave the token of the printed URL as a cookie (docs/editor-server.md): take it
// out of the address bar, its history and what a screenshot or a shared link would show.
if (new URLSearchParams(location.search).has('token')) history.replaceState(null, '', location.pathname);

// the selection box (Ctrl+drag on empty space), in page pixels: draw(box) shows it, null hides
function selectBox() {
  const boxEl = document.createElement('div');
  boxEl.id = 'select-box';
  boxEl.hidden = true;
  document.body.append(boxEl);
  return (box) => {
    boxEl.hidden = !box;
    if (!box) return;
    Object.assign(boxEl.style, {
      left: `${Math.min(box.x0, box.x1)}px`,
      top: `${Math.min(box.y0, box.y1)}px`,
      width: `${Math.abs(box.x1 - box.x0)}px`,
      height: `${Math.abs(box.y1 - box.y0)}px`,
    });
  };
}

// the picker: the joints at one place (a CMU skeleton's Hips, LHipJoint, RHipJoint and
// LowerBack), parent first; choosing one selects it
function jointPicker(store) {
  const picker = document.createElement('div');
  picker.id = 'pick-menu';
  picker.className = 'menu';
  picker.hidden = true;
  document.body.append(picker);
  function hide() {
    picker.hidden = true;
  }
  function show(x, y, joints) {
    picker.replaceChildren(
      ...joints.map((j) => {
        const b = document.createElement('button');
        b.textContent = store.figure.jointNames[j];
        b.dataset.joint = store.figure.jointNames[j];
        b.classList.toggle('selected', j === store.ui.selection.joint);
        b.addEventListener('click', (e) => {
          e.stopPropagation();
          store.select(j);
          hide();
        });
        return b;
      }),
    );
    picker.style.left = `${x + 8}px`;
    picker.style.top = `${y + 8}px`;
    picker.hidden = false;
  }
  return { show, hide };
}

// the wheel: zooms the view under the mouse; during a drag in perspective it pushes and pulls
// the goal along the view ray (Welman 6.2)
function installWheel(viewport, poser) {
  viewport.container.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const s = poser.session;
      if (poser.lockEdit?.view) return;
      if (s) {
        if (s.view === 'perspective') poser.move(null, (e.deltaY > 0 ? 1 : -1) * viewport.size * 0.03);
        return;
      }
      const v = viewport.viewAt(e.clientX, e.clientY);
      if (v) viewport.zoom(v.view, e.deltaY > 0 ? 1.1 : 1 / 1.1);
    },
    { passive: false },
  );
}

// every joint (site) whose sphere is inside the box, in the view it was drawn in: the
// arguments of store.selectJoints (the joints, the first of them the one selected)
function jointsInBox(viewport, box) {
  const x0 = Math.min(box.x0, box.x1),
    x1 = Math.max(box.x0, box.x1),
    y0 = Math.min(box.y0, box.y1),
    y1 = Math.max(box.y0, box.y1);
  const inside = viewport.sites
    .map((site) => site.joint)
    .filter((j) => {
      const p = viewport.screen(j, box.view);
      return p && p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1;
    });
  return [inside, inside[0] ?? null];
}

function installMouse(store, viewport, poser, panels) {
  const el = viewport.container;
  let nav = null,
    press = null,
    box = null,
    turn = null;
  const draw = selectBox();
  const drawBox = () => draw(box);
  const { show: showPicker, hide: hidePicker } = jointPicker(store);
  const dragging = () => poser.session || poser.lockEdit?.view;
  // Escape (keyboard.js) and a right-click during a drag cancel it: the pose as it was
  store.actions.cancelDrag = () => poser.cancel();
  el.addEventListener('contextmenu', (e) => e.preventDefault());
  // a second button pressed while the first is held comes as a pointermove (Pointer Events
  // 3, chorded buttons) and as a mousedown
  el.addEventListener('mousedown', (e) => {
    if (e.button === 2 && dragging()) poser.cancel();
  });
  el.addEventListener('pointerdown', (e) => {
    if (e.target.closest('.view-bar')) return;
    hidePicker();
    if (e.button === 2 && dragging()) {
      poser.cancel();
      return;
    }
    const hit = viewport.pick(e.clientX, e.clientY);
    if (!hit) return;
    // the selected joint's rotate ring: a turn about the view's axis
    // (a joint's own sphere under the mouse wins: it is dragged)
    const ringAt =
      e.button === 0 && !e.altKey && !e.shiftKey && !(hit.joint !== null && hit.sphere)
        ? viewport.onRing(e.clientX, e.clientY, hit.view)
        : null;
    if (ringAt && poser.beginRotate(store.ui.selection.joint, hit.view)) {
      el.setPointerCapture(e.pointerId);
      turn = { cx: ringAt.x, cy: ringAt.y, a0: Math.atan2(e.clientY - ringAt.y, e.clientX - ringAt.x) };
      return;
    }
    press = { x: e.clientX, y: e.clientY, hit };
    el.setPointerCapture(e.pointerId);
    // a lock's marker (Welman 6.3): the selected lock's first, else one not on a joint
    if (e.button === 0 && !e.altKey && !e.shiftKey) {
      const markers = viewport.pickLocks(e.clientX, e.clientY),
        sel = store.ui.selection.lock;
      const name = markers.some((m) => m.name === sel) ? sel : hit.joint === null ? markers[0]?.name : null;
      if (name && poser.beginLockDrag(name, hit.view)) {
        if (sel !== name) panels.selectLock(name);
        return;
      }
    }
    // Shift+click: a joint joins (or leaves) the selection; a press on a selected joint
    // drags every selected joint together; Ctrl+drag on empty space selects by a box
    const multi = store.ui.selection.joints;
    if (e.button === 0 && hit.joint !== null && e.shiftKey && !e.altKey) {
      const base = multi.length ? multi : store.ui.selection.joint !== null ? [store.ui.selection.joint] : [];
      const next = base.includes(hit.joint) ? base.filter((j) => j !== hit.joint) : [...base, hit.joint];
      store.selectJoints(next, next.includes(hit.joint) ? hit.joint : (next.at(-1) ?? null));
      press = null;
      return;
    }
    if (e.button === 0 && hit.joint !== null && !e.altKey) {
      const together = multi.length > 1 && multi.includes(hit.joint) ? multi.filter((j) => j !== hit.joint) : [];
      if (together.length) store.selectJoints(multi, hit.joint);
      else store.select(hit.joint);
      poser.begin(hit.joint, hit.view, hit.ndc, together);
      return;
    }
    if (e.button === 0 && hit.joint === null && (e.ctrlKey || e.metaKey) && !e.altKey) {
      box = { view: hit.view, x0: e.clientX, y0: e.clientY, x1: e.clientX, y1: e.clientY };
      drawBox();
      return;
    }
    if (e.button === 0 && hit.joint === null && !e.altKey && hit.view !== 'perspective') {
      store.select(null);
    }
    // navigation: the perspective view orbits (left drag on empty space, middle, right or
    // Alt+drag), Shift+drag pans it; an orthographic view pans
    const panning = e.shiftKey || hit.view !== 'perspective';
    nav = { view: hit.view, x: e.clientX, y: e.clientY, pan: panning };
  });
  // page point -> normalised device coordinates of a view (even outside it)
  const ndcIn = (view, e) => {
    const r = viewport.rects()[view],
      box = el.getBoundingClientRect();
    return { x: ((e.clientX - box.left - r.x) / r.w) * 2 - 1, y: -((e.clientY - box.top - r.y) / r.h) * 2 + 1 };
  };
  el.addEventListener('pointermove', (e) => {
    if (e.button === 2 && e.buttons & 2 && dragging()) {
      poser.cancel();
      return;
    }
    if (press && Math.hypot(e.clientX - press.x, e.clientY - press.y) > 3) press = null;
    if (box) {
      box.x1 = e.clientX;
      box.y1 = e.clientY;
      drawBox();
      return;
    }
    if (turn && poser.session?.rotate) {
      // the angle swept about the ring's centre: with the page's y running down it grows
      // for a sweep that looks clockwise, a positive turn about the axis the view looks along
      let a = Math.atan2(e.clientY - turn.cy, e.clientX - turn.cx) - turn.a0;
      a = Math.atan2(Math.sin(a), Math.cos(a));
      poser.rotate(a);
      return;
    }
    if (poser.lockEdit?.view) {
      poser.moveLockDrag(ndcIn(poser.lockEdit.view, e));
      return;
    }
    if (poser.session) {
      // the ray of the view the drag started in, even when the mouse leaves it
      poser.move(ndcIn(poser.session.view, e));
      return;
    }
    if (nav) {
      const dx = e.clientX - nav.x,
        dy = e.clientY - nav.y;
      nav.x = e.clientX;
      nav.y = e.clientY;
      if (nav.pan) viewport.pan(nav.view, dx, dy);
      else viewport.orbitBy(dx, dy);
    }
  });
  const up = () => {
    if (box) {
      store.selectJoints(...jointsInBox(viewport, box));
      box = null;
      drawBox();
    }
    if (poser.lockEdit?.view) poser.endLockEdit('move lock');
    if (poser.session) poser.end();
    turn = null;
    nav = null;
    // a click (no drag) on a place several joints share: the picker lists them by name
    if (press?.hit.others?.length > 1) showPicker(press.x, press.y, press.hit.others);
    press = null;
  };
  el.addEventListener('pointerup', up);
  el.addEventListener('pointercancel', up);
  installWheel(viewport, poser);
}

async function boot() {
  const m = await load({ wasm: new URL('marionette.wasm', document.baseURI) });
  const store = new Store(m);
  await store.open();
  restoreHistory(store); // the undo history kept across a Make root (reroot.js)
  const viewport = new Viewport(document.getElementById('views'), store);
  const poser = new Poser(store, viewport);
  poser.warm(); // the solver up to speed before the first drag
  store.on('selection', (sel) => viewport.setHighlight({ selected: sel.joint, multi: new Set(sel.joints) }));
  store.on('frame', () => viewport.updateLocks());
  // the polygon objects the figure names (objects.js), drawn once read
  const objectsRead = loadObjects(store).then(({ objects, problems }) => {
    viewport.setObjects(objects);
    if (problems.length) status(`Objects not drawn: ${problems.join('; ')}`, 10000);
    return { drawn: objects.map((o) => ({ joint: store.figure.jointNames[o.joint], path: o.path })), problems };
  });
  const panels = installPanels(store, viewport, poser);
  installKeyboard(store, viewport);
  installMouse(store, viewport, poser, panels);
  installAnimation(store, viewport);
  store.on('doc', () => viewport.updateLocks());
  window.addEventListener('beforeunload', (e) => {
    if (store.saveStatus !== 'saved') e.preventDefault();
  });
  // Make root (button, R): the selected joint becomes the figure's root, every joint kept
  store.actions.makeRoot = () => {
    const j = store.ui.selection.joint;
    if (j === null) return status('Select a joint to make it the root');
    makeRoot(store, store.figure.jointNames[j]).then(
      (ok) => ok || status(`Make root: ${store.rerootError}`, 6000),
      (e) => status(`Make root: ${e.message}`, 8000),
    );
  };
  const makeRootButton = document.getElementById('make-root');
  makeRootButton.addEventListener('click', () => store.actions.makeRoot());
  const syncMakeRoot = () => {
    const j = store.ui.selection.joint;
    makeRootButton.disabled = j === null || store.figure.joints[j].parent < 0;
  };
  store.on('selection', syncMakeRoot);
  syncMakeRoot();
  const fig = store.figure;
  const api = window.marionette;
  Object.assign(api, {
    store,
    viewport,
    poser,
    panels,
    posing: { quatOfFrame },
    state() {
      return {
        figure: fig.name,
        frame: store.ui.frame,
        pose: qToPose(fig, fig.q),
        keys: store.doc.keys.map((k) => ({ frame: k.frame, pose: k.pose, ...(k.tcb ? { tcb: k.tcb } : {}) })),
        handles: structuredClone(store.doc.handles ?? []),
        constraints: structuredClone(store.doc.constraints ?? []),
        selection: store.ui.selection.joint === null ? null : fig.jointNames[store.ui.selection.joint],
        selected: store.ui.selection.joints.map((j) => fig.jointNames[j]),
        saveStatus: store.saveStatus,
        settings: structuredClone(store.settings),
      };
    },
    /** Page pixels of a lock's marker (a pin's target, a plane's origin) in a view. */
    lockScreen(name, view = 'front') {
      viewport.render();
      return viewport.lockScreen(name, view);
    },
    selectLock(name) {
      panels.selectLock(name);
    },
    /** Every view fits the figure (the F key). */
    fitViews() {
      viewport.frameAll();
      viewport.render();
    },
    screen(joint, view = 'front') {
      const j = typeof joint === 'number' ? joint : fig.jointNames.indexOf(joint);
      if (j < 0) throw new Error(`screen: no joint named "${joint}"`);
      viewport.render();
      return viewport.screen(j, view);
    },
    /** World position of a joint. */
    position(joint) {
      const j = typeof joint === 'number' ? joint : fig.jointNames.indexOf(joint);
      return Array.from(fig.positions.subarray(3 * j, 3 * j + 3));
    },
    stats() {
      return { dragMs: poser.stats.dragMs.slice(-300), moveMs: poser.stats.moveMs.slice(-300), maxViolation: poser.stats.maxViolation };
    },
    views() {
      return { layout: viewport.layout, rects: viewport.rects() };
    },
    select(joint) {
      store.select(joint === null ? null : fig.jointNames.indexOf(joint));
    },
    addLock(kind, joint) {
      return poser.addLock(kind, joint);
    },
    /** The polygon objects once read: { drawn: [{ joint, path }], problems }. */
    objects() {
      return objectsRead;
    },
    /** World positions of the drawn vertices of a joint's object (null: none). */
    objectVertices(joint) {
      viewport.render();
      return viewport.objectVertices(fig.jointNames.indexOf(joint));
    },
    /** Make root on a joint (the page then loads again); resolves false when refused. */
    makeRoot(joint) {
      return makeRoot(store, joint);
    },
    solve() {
      return poser.solveLocks(200);
    },
    save() {
      return store.save();
    },
    undo() {
      return store.undo();
    },
    redo() {
      return store.redo();
    },
    setSettings(patch) {
      store.setSettings(patch);
    },
  });
  // a message left by the page before it loaded again (a dropped figure's units, a new scale)
  const notice = sessionStorage.getItem('marionette.notice');
  sessionStorage.removeItem('marionette.notice');
  status(notice || `Opened ${store.sequencePath}`, notice ? 12000 : 4000);
  return api;
}

let resolveReady, rejectReady;
const ready = new Promise((res, rej) => {
  resolveReady = res;
  rejectReady = rej;
});
window.marionette = { ready };
boot().then(resolveReady, (e) => {
  console.error(e);
  const el = document.getElementById('status-line');
  el.textContent = `Could not open the project: ${e.message}`;
  el.classList.add('show', 'error');
  rejectReady(e);
});
