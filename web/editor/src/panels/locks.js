// The locks panel: the sequence's locks (Welman 6.3) as a list, and an editor of the selected
// one: its weight, the joints holding it, its point, direction or orientation as sliders that
// move the figure live.
import * as THREE from 'three';
import { posingSettings, quatOfFrame } from '../posing.js';
import { $, fmt } from './dom.js';

/** Wires #lock-list and #lock-editor; returns { renderLocks, renderLockEditor, selectLock }. */
export function lockPanel(store, vp, poser) {
  const fig = store.figure;
  let selectedLock = null;
  const lockList = $('lock-list'),
    editor = $('lock-editor');
  const setSelectedLock = (name) => {
    selectedLock = name;
    store.selectLock(name);
  };
  function renderLocks() {
    lockList.textContent = '';
    const doc = store.doc;
    const handles = new Map((doc.handles ?? []).map((h) => [h.name, h]));
    if (selectedLock && !(doc.constraints ?? []).some((c) => c.name === selectedLock)) setSelectedLock(null);
    for (const c of doc.constraints ?? []) {
      const li = document.createElement('li');
      li.className = `lock lock-${c.type}`;
      li.dataset.lock = c.name;
      if (c.name === selectedLock) li.classList.add('selected');
      const h = handles.get(c.handle);
      const kind = c.type === 'orient' ? (c.axis ? `orient ${c.axis}` : 'orient') : c.type;
      li.innerHTML = '<span class="swatch"></span><span class="lname"></span><span class="lkind"></span>';
      li.querySelector('.lname').textContent = c.name ?? c.handle;
      const h2 = c.type === 'equal' ? handles.get(c.handle2) : null;
      li.querySelector('.lkind').textContent = `${kind} \u00b7 ${h?.joint ?? ''}${h2 ? ` \u00b7 ${h2.joint ?? ''}` : ''}`;
      const del = document.createElement('button');
      del.className = 'del';
      del.title = 'Delete this lock';
      del.textContent = '\u2715';
      del.addEventListener('click', (e) => {
        e.stopPropagation();
        poser.deleteLock(c.name);
      });
      li.append(del);
      li.addEventListener('click', () => {
        setSelectedLock(c.name);
        renderLocks();
      });
      lockList.append(li);
    }
    if (!(doc.constraints ?? []).length) lockList.innerHTML = '<li class="empty">No locks. Select a part, then Lock \u25be.</li>';
    renderLockEditor();
  }

  function renderLockEditor() {
    if (poser.lockEdit) return; // not while its sliders are being moved
    editor.textContent = '';
    const c = (store.doc.constraints ?? []).find((x) => x.name === selectedLock);
    if (!c) return;
    const ctx = { store, fig, poser, editor, c };
    lockWeightAndJoints(ctx);
    lockPointSliders(ctx, Math.max(0.5, vp.size * 0.5));
    if (c.type === 'plane' || (c.type === 'orient' && c.axis)) lockDirectionSliders(ctx);
    else if (c.type === 'orient') lockOrientSliders(ctx);
  }
  store.on('doc', () => {
    renderLocks();
  });
  store.on('settings', () => renderLockEditor());
  renderLocks();
  return {
    renderLocks,
    renderLockEditor,
    selectLock: (n) => {
      setSelectedLock(n);
      renderLocks();
    },
  };
}

// a slider that edits the selected lock live (the figure following, Welman 6.3) and
// makes one undo step when let go
function lockSlider({ poser, editor, c }, { min, max, value, data, label, unit = '', digits = 3 }, set) {
  const s = document.createElement('input');
  s.type = 'range';
  s.min = String(min);
  s.max = String(max);
  s.step = 'any';
  s.value = String(value);
  s.dataset.lockField = data;
  const out = document.createElement('output');
  const show = () => {
    out.textContent = `${fmt(Number(s.value), digits)}${unit}`;
  };
  show();
  s.addEventListener('input', () => {
    poser.beginLockEdit(c.name);
    poser.editLock((cc) => set(cc, Number(s.value)));
    show();
  });
  s.addEventListener('change', () => poser.endLockEdit(`${label} of`));
  const l = document.createElement('label');
  l.className = 'row lock-slider';
  const span = document.createElement('span');
  span.textContent = label;
  l.append(span, s, out);
  editor.append(l);
  return s;
}

// the lock's weight, and the joints holding it: the chain from the part up to a joint
function lockWeightAndJoints({ store, fig, editor, c }) {
  const h = (store.doc.handles ?? []).find((x) => x.name === c.handle);
  const row = (label, el) => {
    const l = document.createElement('label');
    l.className = 'row';
    l.append(label, el);
    editor.append(l);
  };
  // weight
  const w = document.createElement('input');
  w.type = 'number';
  w.min = '0.01';
  w.step = '0.1';
  w.value = String(c.weight ?? 1);
  w.id = 'lock-weight';
  w.addEventListener('change', () => {
    const v = Number(w.value);
    if (v > 0)
      store.apply(`lock weight ${c.name}`, (doc) => {
        doc.constraints.find((x) => x.name === c.name).weight = v;
      });
  });
  row('Weight', w);
  // contributing joints: the chain from the part up to a joint
  if (h?.joint) {
    const sel = document.createElement('select');
    sel.id = 'lock-from';
    const anc = [];
    for (let a = fig.joints[fig.jointNames.indexOf(h.joint)].parent; a >= 0; a = fig.joints[a].parent) anc.push(fig.jointNames[a]);
    for (const n of anc) {
      const o = document.createElement('option');
      o.value = n;
      o.textContent = `from ${n}`;
      sel.append(o);
    }
    const locks = posingSettings(store.settings).locks;
    sel.value = locks[c.name]?.from ?? anc[anc.length - 1];
    sel.addEventListener('change', () => {
      store.applySettings(`joints of ${c.name}`, { locks: { ...posingSettings(store.settings).locks, [c.name]: { from: sel.value } } });
    });
    row('Joints holding it', sel);
  }
}

// a pin's target, a plane's origin: three sliders within reach metres (or drag the marker in
// a view)
function lockPointSliders(ctx, reach) {
  const { poser, c } = ctx;
  const vec = c.type === 'pin' ? 'target' : c.type === 'plane' ? 'origin' : null;
  if (vec) {
    const p0 = c[vec] ?? poser.lockPoint(c).toArray();
    ['x', 'y', 'z'].forEach((axis, i) => {
      lockSlider(
        ctx,
        { min: p0[i] - reach, max: p0[i] + reach, value: p0[i], data: `${vec}-${axis}`, label: `${vec} ${axis}`, unit: ' m' },
        (cc, v) => {
          cc[vec] = (cc[vec] ?? poser.lockPoint(cc).toArray()).slice();
          cc[vec][i] = v;
        },
      );
    });
  }
}

// a direction: a plane's normal, the held axis of a one-axis orientation lock, as azimuth and
// elevation
function lockDirectionSliders(ctx) {
  const { store, fig, c } = ctx;
  const dirOf = (cc) =>
    (cc.type === 'plane'
      ? new THREE.Vector3(...(cc.normal ?? [0, 1, 0]))
      : axisVector(cc.axis).applyQuaternion(targetQuat(cc, fig, store.doc))
    ).normalize();
  const d = dirOf(c);
  // azimuth about the vertical from +z toward +x, elevation above the horizontal
  const az = (Math.atan2(d.x, d.z) * 180) / Math.PI,
    el = (Math.asin(Math.max(-1, Math.min(1, d.y))) * 180) / Math.PI;
  const setDir = (cc, azDeg, elDeg) => {
    const a = (azDeg * Math.PI) / 180,
      e = (elDeg * Math.PI) / 180;
    const nd = new THREE.Vector3(Math.cos(e) * Math.sin(a), Math.sin(e), Math.cos(e) * Math.cos(a));
    if (cc.type === 'plane') cc.normal = nd.toArray();
    else {
      // the smallest turn of the target taking its held axis onto the new direction
      const t = targetQuat(cc, fig, store.doc),
        r = new THREE.Quaternion().setFromUnitVectors(dirOf(cc), nd);
      const n = r.multiply(t).normalize();
      cc.target = [n.w, n.x, n.y, n.z];
    }
  };
  const label = c.type === 'plane' ? 'normal' : `${c.axis} axis`;
  const sa = lockSlider(
    ctx,
    { min: -180, max: 180, value: az, data: 'dir-azimuth', label: `${label} azimuth`, unit: '\u00b0', digits: 1 },
    (cc, v) => setDir(cc, v, Number(se.value)),
  );
  const se = lockSlider(
    ctx,
    { min: -90, max: 90, value: el, data: 'dir-elevation', label: `${label} elevation`, unit: '\u00b0', digits: 1 },
    (cc, v) => setDir(cc, Number(sa.value), v),
  );
}

// the whole orientation: three angles (x, y, z Euler angles of the target, degrees)
function lockOrientSliders(ctx) {
  const { store, fig, c } = ctx;
  const e = new THREE.Euler().setFromQuaternion(targetQuat(c, fig, store.doc), 'XYZ');
  const sliders = [];
  const setRot = (cc) => {
    const [x, y, z] = sliders.map((s) => (Number(s.value) * Math.PI) / 180);
    const n = new THREE.Quaternion().setFromEuler(new THREE.Euler(x, y, z, 'XYZ'));
    cc.target = [n.w, n.x, n.y, n.z];
  };
  ['x', 'y', 'z'].forEach((axis) => {
    sliders.push(
      lockSlider(
        ctx,
        { min: -180, max: 180, value: (e[axis] * 180) / Math.PI, data: `rot-${axis}`, label: `turn ${axis}`, unit: '\u00b0', digits: 1 },
        setRot,
      ),
    );
  });
}

const axisVector = (a) => new THREE.Vector3(a === 'x' ? 1 : 0, a === 'y' ? 1 : 0, a === 'z' ? 1 : 0);
// an orient lock's target rotation (the part's frame now when it has none)
function targetQuat(c, fig, doc) {
  let t = c.target;
  if (!t) {
    const h = (doc?.handles ?? []).find((x) => x.name === c.handle);
    t = h ? quatOfFrame(fig, fig.jointNames.indexOf(h.joint)) : [1, 0, 0, 0];
  }
  return new THREE.Quaternion(t[1], t[2], t[3], t[0]).normalize();
}
