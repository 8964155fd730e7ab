// The panels around the views: the joint list, the forward-kinematic sliders with their
// limits and the joint's weight (Welman 6.1.3, 6.2), the locks (6.3), the settings, the
// toolbar (undo, redo, drag mode, lock menu, solve) and the save indicator.
import { IK_METHODS } from '../../marionette.mjs';
import * as THREE from 'three';
import { posingSettings, quatOfFrame, comfortOn } from './posing.js';
import { rescaleDoc, restHeight } from './docmodel.js';

const $ = (id) => document.getElementById(id);
const fmt = (x, d = 3) => (Math.abs(x) < 1e-12 ? 0 : x).toFixed(d);

export function installPanels(store, viewport, poser) {
  const fig = store.figure;
  const vp = viewport;

  // ---- the joint list: sites (compound joints as one entry), indented by depth ----
  const list = $('joint-list');
  const depth = (s) => { let d = 0; for (let p = vp.sites[s].parent; p >= 0; p = vp.sites[p].parent) d++; return d; };
  const order = [];
  const visit = (s) => { order.push(s); for (const c of vp.sites[s].children) visit(c); };
  vp.sites.forEach((s, i) => { if (s.parent < 0) visit(i); });
  for (const s of order) {
    const site = vp.sites[s];
    const li = document.createElement('li');
    li.textContent = fig.jointNames[site.joint].replace(/\.\d+$/, '');
    li.style.paddingLeft = `${6 + 10 * depth(s)}px`;
    li.dataset.joint = fig.jointNames[site.joint];
    li.addEventListener('click', () => store.select(site.joint));
    list.append(li);
  }

  // ---- sliders of the selected site's joints ----
  const sliders = $('sliders');
  let fkBefore = null;
  function buildSliders() {
    sliders.textContent = '';
    const j = store.ui.selection.joint;
    $('joint-name').textContent = j === null ? '\u2013' : fig.jointNames[j];
    for (const li of list.children) li.classList.toggle('selected', j !== null && li.dataset.joint === fig.jointNames[j]);
    if (j === null) return;
    const site = vp.sites[vp.siteOf[j]];
    for (const jj of site.joints) {
      const info = fig.joints[jj];
      const vars = info.type === 'hinge' || info.type === 'slide' ? [0]
        : info.type === 'free' ? [0, 1, 2] : [];
      for (const k of vars) {
        const row = document.createElement('div');
        row.className = 'slider-row';
        const unit = info.type === 'hinge' ? '\u00b0' : ' m';
        const toUi = (x) => (info.type === 'hinge' ? (x * 180) / Math.PI : x);
        const fromUi = (x) => (info.type === 'hinge' ? (x * Math.PI) / 180 : x);
        const lo = info.limited ? info.range[0] : info.type === 'hinge' ? -Math.PI : -2;
        const hi = info.limited ? info.range[1] : info.type === 'hinge' ? Math.PI : 2;
        const label = document.createElement('label');
        label.textContent = info.type === 'free' ? `${info.name} ${'xyz'[k]}` : info.name;
        const input = document.createElement('input');
        input.type = 'range';
        input.min = String(toUi(lo));
        input.max = String(toUi(hi));
        input.step = 'any';
        input.dataset.joint = info.name;
        input.dataset.index = String(k);
        const out = document.createElement('output');
        const lim = document.createElement('div');
        lim.className = 'limits';
        lim.textContent = info.limited ? `${fmt(toUi(lo), 0)}${unit} \u2026 ${fmt(toUi(hi), 0)}${unit}` : 'no limits';
        const sync = () => {
          const v = fig.q[info.qadr + k];
          input.value = String(toUi(v));
          out.textContent = `${fmt(toUi(v), info.type === 'hinge' ? 1 : 3)}${unit}`;
        };
        sync();
        input.addEventListener('input', () => {
          if (!fkBefore) fkBefore = Float64Array.from(fig.q);
          const q = Float64Array.from(fig.q);
          q[info.qadr + k] = fromUi(Number(input.value));
          store.setPose(q);
          if (poser.activeLocks().length) poser.solveLocks(1);
        });
        input.addEventListener('change', () => {
          if (fkBefore) store.commitPose(`set ${info.name}`, fkBefore);
          fkBefore = null;
        });
        row._sync = sync;
        const track = document.createElement('div');
        track.className = 'track';
        track.append(input, lim);
        row.append(label, track, out);
        sliders.append(row);
      }
    }
    for (const jj of site.joints) {
      const info = fig.joints[jj];
      if (info.type === 'ball') rotationSliders(info, info.qadr);
      else if (info.type === 'free') rotationSliders(info, info.qadr + 3);
    }
    if (!sliders.children.length) sliders.textContent = 'This joint has no slider variables (a fixed joint).';
    syncWeight();
  }
  function syncSliders() { for (const r of sliders.children) r._sync?.(); }

  // A ball joint's rotation (a free joint's too): three angle sliders, -180..180 degrees, in
  // the joint's own Euler order (its BVH channel order), R = R1(e0) R2(e1) R3(e2). The angles
  // shown are read from the quaternion nearest the previous ones (both Tait-Bryan branches,
  // whole turns), so a slider moving the middle angle past 90 degrees keeps going instead of
  // the other two jumping by 180. A limited ball is clamped to its swing cone and twist
  // range as it moves (mn_ball_clamp); each track is shaded where, the other two angles kept,
  // the pose would leave them, and a readout gives swing and twist against their limits.
  function rotationSliders(info, at) {
    const m = store.m, order = info.rotOrder, ball = info.type === 'ball';
    const limited = ball && info.limited;
    const quatAt = () => Array.from(fig.q.subarray(at, at + 4));
    let eul = m.eulerFromQuat(order, quatAt());
    const wrap = (a) => (a > Math.PI + 1e-9 ? a - 2 * Math.PI : a < -Math.PI - 1e-9 ? a + 2 * Math.PI : a);
    const within = (qq) => {
      const st = m.swingTwist(qq, info.axis);
      return { st, ok: st.swingAngle <= info.swing + 1e-9 && st.twist >= info.twist[0] - 1e-9 && st.twist <= info.twist[1] + 1e-9 };
    };
    const deg = (r) => (r * 180) / Math.PI;
    const rows = [];
    const readout = document.createElement('div');
    readout.className = 'ball-limits';
    readout.dataset.joint = info.name;
    const syncAll = () => {
      const qj = quatAt(), qe = m.eulerToQuat(order, eul);
      const dot = Math.abs(qj[0] * qe[0] + qj[1] * qe[1] + qj[2] * qe[2] + qj[3] * qe[3]);
      if (dot < 1 - 1e-15) eul = m.eulerFromQuat(order, qj, eul).map(wrap);
      for (const r of rows) r.show();
      const { st, ok } = within(qj);
      readout.textContent = limited
        ? `swing ${fmt(deg(st.swingAngle), 1)}\u00b0 of ${fmt(deg(info.swing), 0)}\u00b0 \u00b7 twist ${fmt(deg(st.twist), 1)}\u00b0 in ${fmt(deg(info.twist[0]), 0)}\u00b0 \u2026 ${fmt(deg(info.twist[1]), 0)}\u00b0`
        : `swing ${fmt(deg(st.swingAngle), 1)}\u00b0 \u00b7 twist ${fmt(deg(st.twist), 1)}\u00b0 \u00b7 no limits`;
      readout.classList.toggle('outside', limited && !ok);
    };
    for (let k = 0; k < 3; k++) {
      const row = document.createElement('div');
      row.className = 'slider-row';
      const label = document.createElement('label');
      label.textContent = `${ball ? info.name : `${info.name} turn`} ${order[k].toLowerCase()}`;
      label.title = `${order} Euler angle ${k + 1} (the joint's rotation order)`;
      const input = document.createElement('input');
      input.type = 'range';
      input.min = '-180';
      input.max = '180';
      input.step = 'any';
      input.dataset.joint = info.name;
      input.dataset.euler = String(k);
      const out = document.createElement('output');
      const reach = document.createElement('div');
      reach.className = 'reach';
      const lim = document.createElement('div');
      lim.className = 'limits';
      lim.textContent = '-180\u00b0 \u2026 180\u00b0';
      row.show = () => {
        input.value = String(deg(eul[k]));
        out.textContent = `${fmt(deg(eul[k]), 1)}\u00b0`;
        if (!limited) return;
        // where along this slider (the other two angles kept) the pose leaves the limits
        const n = 60, stops = [];
        for (let i = 0; i <= n; i++) {
          const e = eul.slice();
          e[k] = -Math.PI + (2 * Math.PI * i) / n;
          const c = within(m.eulerToQuat(order, e)).ok ? 'var(--reach-in, #3d7a4a)' : 'var(--reach-out, #8a3030)';
          stops.push(`${c} ${((100 * (i - 0.5)) / n).toFixed(2)}%`, `${c} ${((100 * (i + 0.5)) / n).toFixed(2)}%`);
        }
        reach.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
      };
      input.addEventListener('input', () => {
        if (!fkBefore) fkBefore = Float64Array.from(fig.q);
        eul[k] = (Number(input.value) * Math.PI) / 180;
        let r = m.eulerToQuat(order, eul);
        if (limited) r = m.ballClamp(r, info.axis, info.swing, info.twist[0], info.twist[1]);
        const q = Float64Array.from(fig.q);
        // the same hemisphere as before: the key's quaternion moves continuously
        const s = q[at] * r[0] + q[at + 1] * r[1] + q[at + 2] * r[2] + q[at + 3] * r[3] < 0 ? -1 : 1;
        for (let i = 0; i < 4; i++) q[at + i] = s * r[i];
        store.setPose(q);
        if (poser.activeLocks().length) poser.solveLocks(1);
      });
      input.addEventListener('change', () => {
        if (fkBefore) store.commitPose(`set ${info.name}`, fkBefore);
        fkBefore = null;
      });
      const track = document.createElement('div');
      track.className = 'track';
      track.append(input, reach, lim);
      row.append(label, track, out);
      rows.push(row);
      sliders.append(row);
    }
    readout._sync = syncAll;
    sliders.append(readout);
    syncAll();
  }

  // ---- per-joint weight (stiff rod .. loose links), log scale ----
  const weight = $('joint-weight'), weightOut = $('joint-weight-value');
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

  store.on('selection', () => { buildSliders(); updateDragBase(); });
  store.on('pose', syncSliders);
  buildSliders();

  // ---- toolbar ----
  const undo = $('undo'), redo = $('redo');
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

  const mode = $('drag-mode'), base = $('drag-base');
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
  const menu = $('lock-menu'), menuButton = $('lock-menu-button');
  menuButton.addEventListener('click', (e) => {
    e.stopPropagation();
    const r = menuButton.getBoundingClientRect();
    menu.style.left = `${r.left}px`;
    menu.style.top = `${r.bottom + 2}px`;
    menu.hidden = !menu.hidden;
    for (const b of menu.querySelectorAll('button')) b.disabled = store.ui.selection.joint === null;
  });
  document.addEventListener('click', () => { menu.hidden = true; });
  menu.addEventListener('click', (e) => {
    const kind = e.target.dataset?.lock;
    const j = store.ui.selection.joint;
    if (!kind || j === null) return;
    const names = poser.addLock(kind, fig.jointNames[j]);
    setSelectedLock(names[0]);
    renderLocks();
    menu.hidden = true;
  });
  // the balance overlay (viewport.updateBalance): on unless editor.json says false
  const overlay = $('balance-overlay');
  overlay.checked = store.settings.balanceOverlay !== false;
  overlay.addEventListener('change', () => { store.setSettings({ balanceOverlay: overlay.checked }); overlay.blur(); });
  // comfort and balance during drags (posing.js applyComfort): each on by default for a
  // figure with feet; editor.json `comfort` and `balance` once changed
  for (const key of ['comfort', 'balance']) {
    const box = $(key);
    box.checked = comfortOn(store.settings, fig, key);
    box.addEventListener('change', () => { store.setSettings({ [key]: box.checked }); box.blur(); });
  }
  // the views turned to the figure's forward axis (viewport.frameAll)
  const align = $('align-views');
  align.checked = !!store.settings.alignViews;
  align.addEventListener('change', () => { store.setSettings({ alignViews: align.checked }); align.blur(); });
  // auto-key: a toggle kept in editor.json
  const autoKey = $('auto-key');
  const syncAutoKey = () => autoKey.classList.toggle('on', !!store.settings.autoKey);
  autoKey.addEventListener('click', () => { store.setSettings({ autoKey: !store.settings.autoKey }); autoKey.blur(); });
  store.on('settings', syncAutoKey);
  syncAutoKey();
  $('solve').addEventListener('click', () => {
    const before = Float64Array.from(fig.q);
    const r = poser.solveLocks(200);
    status(r.ok ? `Locks satisfied (worst ${r.maxViolation.toExponential(1)})` : `Locks not all met: ${r.status}, worst ${r.maxViolation.toExponential(2)}`);
    store.commitPose('solve', before);
  });

  // ---- the locks panel ----
  let selectedLock = null;
  const lockList = $('lock-list'), editor = $('lock-editor');
  const setSelectedLock = (name) => { selectedLock = name; store.selectLock(name); };
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
      li.querySelector('.lkind').textContent = `${kind} \u00b7 ${h?.joint ?? ''}`;
      const del = document.createElement('button');
      del.className = 'del';
      del.title = 'Delete this lock';
      del.textContent = '\u2715';
      del.addEventListener('click', (e) => { e.stopPropagation(); poser.deleteLock(c.name); });
      li.append(del);
      li.addEventListener('click', () => { setSelectedLock(c.name); renderLocks(); });
      lockList.append(li);
    }
    if (!(doc.constraints ?? []).length) lockList.innerHTML = '<li class="empty">No locks. Select a part, then Lock \u25be.</li>';
    renderLockEditor();
  }

  // a slider that edits the selected lock live (the figure following, Welman 6.3) and
  // makes one undo step when let go
  function lockSlider(c, { min, max, value, data, label, unit = '', digits = 3 }, set) {
    const s = document.createElement('input');
    s.type = 'range';
    s.min = String(min); s.max = String(max); s.step = 'any'; s.value = String(value);
    s.dataset.lockField = data;
    const out = document.createElement('output');
    const show = () => { out.textContent = `${fmt(Number(s.value), digits)}${unit}`; };
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

  function renderLockEditor() {
    if (poser.lockEdit) return; // not while its sliders are being moved
    editor.textContent = '';
    const c = (store.doc.constraints ?? []).find((x) => x.name === selectedLock);
    if (!c) return;
    const h = (store.doc.handles ?? []).find((x) => x.name === c.handle);
    const row = (label, el) => {
      const l = document.createElement('label');
      l.className = 'row';
      l.append(label, el);
      editor.append(l);
    };
    // weight
    const w = document.createElement('input');
    w.type = 'number'; w.min = '0.01'; w.step = '0.1'; w.value = String(c.weight ?? 1);
    w.id = 'lock-weight';
    w.addEventListener('change', () => {
      const v = Number(w.value);
      if (v > 0) store.apply(`lock weight ${c.name}`, (doc) => { doc.constraints.find((x) => x.name === c.name).weight = v; });
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
        o.value = n; o.textContent = `from ${n}`;
        sel.append(o);
      }
      const locks = posingSettings(store.settings).locks;
      sel.value = locks[c.name]?.from ?? anc[anc.length - 1];
      sel.addEventListener('change', () => {
        store.applySettings(`joints of ${c.name}`, { locks: { ...posingSettings(store.settings).locks, [c.name]: { from: sel.value } } });
      });
      row('Joints holding it', sel);
    }
    const reach = Math.max(0.5, vp.size * 0.5);
    // a pin's target, a plane's origin: three sliders (or drag the marker in a view)
    const vec = c.type === 'pin' ? 'target' : c.type === 'plane' ? 'origin' : null;
    if (vec) {
      const p0 = c[vec] ?? poser.lockPoint(c).toArray();
      ['x', 'y', 'z'].forEach((axis, i) => {
        lockSlider(c, { min: p0[i] - reach, max: p0[i] + reach, value: p0[i], data: `${vec}-${axis}`, label: `${vec} ${axis}`, unit: ' m' },
          (cc, v) => { cc[vec] = (cc[vec] ?? poser.lockPoint(cc).toArray()).slice(); cc[vec][i] = v; });
      });
    }
    // a direction: a plane's normal, the held axis of a one-axis orientation lock
    const dirOf = (cc) => (cc.type === 'plane' ? new THREE.Vector3(...(cc.normal ?? [0, 1, 0]))
      : axisVector(cc.axis).applyQuaternion(targetQuat(cc, fig, store.doc))).normalize();
    if (c.type === 'plane' || (c.type === 'orient' && c.axis)) {
      const d = dirOf(c);
      // azimuth about the vertical from +z toward +x, elevation above the horizontal
      const az = (Math.atan2(d.x, d.z) * 180) / Math.PI, el = (Math.asin(Math.max(-1, Math.min(1, d.y))) * 180) / Math.PI;
      const setDir = (cc, azDeg, elDeg) => {
        const a = (azDeg * Math.PI) / 180, e = (elDeg * Math.PI) / 180;
        const nd = new THREE.Vector3(Math.cos(e) * Math.sin(a), Math.sin(e), Math.cos(e) * Math.cos(a));
        if (cc.type === 'plane') cc.normal = nd.toArray();
        else {
          // the smallest turn of the target taking its held axis onto the new direction
          const t = targetQuat(cc, fig, store.doc), r = new THREE.Quaternion().setFromUnitVectors(dirOf(cc), nd);
          const n = r.multiply(t).normalize();
          cc.target = [n.w, n.x, n.y, n.z];
        }
      };
      const label = c.type === 'plane' ? 'normal' : `${c.axis} axis`;
      const sa = lockSlider(c, { min: -180, max: 180, value: az, data: 'dir-azimuth', label: `${label} azimuth`, unit: '\u00b0', digits: 1 },
        (cc, v) => setDir(cc, v, Number(se.value)));
      const se = lockSlider(c, { min: -90, max: 90, value: el, data: 'dir-elevation', label: `${label} elevation`, unit: '\u00b0', digits: 1 },
        (cc, v) => setDir(cc, Number(sa.value), v));
    } else if (c.type === 'orient') {
      // the whole orientation: three angles (x, y, z Euler angles of the target, degrees)
      const e = new THREE.Euler().setFromQuaternion(targetQuat(c, fig, store.doc), 'XYZ');
      const sliders = [];
      const setRot = (cc) => {
        const [x, y, z] = sliders.map((s) => (Number(s.value) * Math.PI) / 180);
        const n = new THREE.Quaternion().setFromEuler(new THREE.Euler(x, y, z, 'XYZ'));
        cc.target = [n.w, n.x, n.y, n.z];
      };
      ['x', 'y', 'z'].forEach((axis) => {
        sliders.push(lockSlider(c, { min: -180, max: 180, value: (e[axis] * 180) / Math.PI, data: `rot-${axis}`,
          label: `turn ${axis}`, unit: '\u00b0', digits: 1 }, setRot));
      });
    }
  }
  store.on('doc', () => { renderLocks(); });
  store.on('settings', () => renderLockEditor());
  renderLocks();

  // ---- settings ----
  const ik = $('ik-method');
  for (const m of IK_METHODS) {
    const o = document.createElement('option');
    o.value = m; o.textContent = m.toUpperCase();
    ik.append(o);
  }
  const cs = $('csolver'), iters = $('iterations');
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

  // ---- a BVH figure's scale (docs/sequence.md `scale`): its lengths times this are metres ----
  const scaleRow = $('figure-scale-row'), scaleIn = $('figure-scale');
  scaleRow.hidden = !/\.bvh$/i.test(store.doc.figure ?? '');
  scaleIn.value = String(store.doc.scale ?? 1);
  scaleIn.addEventListener('change', async () => {
    const v = Number(scaleIn.value), old = store.doc.scale ?? 1;
    if (!(v > 0) || !Number.isFinite(v) || v === old) { scaleIn.value = String(old); return; }
    // every length of the document follows (key positions, lock targets), then the page
    // loads again with the figure at its new size
    store.apply('figure scale', (doc) => {
      rescaleDoc(doc, fig, v / old);
      if (v === 1) delete doc.scale; else doc.scale = v;
    });
    if (store.settings.pose) rescaleDoc({ keys: [store.settings.pose] }, fig, v / old);
    store.setSettings({});
    const st = await store.save();
    if (st !== 'saved') { status(`Figure scale: not saved (${store.saveError || st})`); return; }
    sessionStorage.setItem('marionette.notice', `Figure scale ${v}: ${(restHeight(fig) * v / old).toFixed(2)} m tall`);
    location.reload();
  });

  // ---- save indicator and conflicts ----
  const save = $('save-status');
  const text = { saved: 'Saved', saving: 'Saving\u2026', unsaved: 'Unsaved changes', conflict: 'Conflict', error: 'Not saved' };
  // after a failed save the indicator counts down to the next try (store._failed)
  let retryTicker = 0;
  const showRetry = () => {
    const left = Math.max(0, Math.ceil((store.retry.at - Date.now()) / 1000));
    save.textContent = store.retry.at ? `Not saved \u00b7 retry in ${left} s` : 'Not saved \u00b7 retrying';
  };
  store.on('save', ({ status: s, error }) => {
    save.textContent = text[s] ?? s;
    save.className = `save ${s}`;
    save.title = error ? `${error} (Ctrl+S tries now)` : 'Ctrl+S saves now';
    clearInterval(retryTicker);
    if (s === 'error') {
      showRetry();
      retryTicker = setInterval(showRetry, 500);
    }
    const banner = $('conflict');
    banner.hidden = s !== 'conflict';
    if (s === 'conflict') $('conflict-text').textContent = `${error}. Your last change is not saved.`;
    if (s === 'error') status(error);
  });
  $('conflict-reload').addEventListener('click', () => store.reload().then(() => location.reload()));
  $('conflict-overwrite').addEventListener('click', () => store.overwrite());

  const name = $('project-name');
  name.textContent = `${store.project?.name ?? ''} \u00b7 ${store.sequencePath} \u00b7 ${fig.name}`;
  return { renderLocks, buildSliders, selectLock: (n) => { setSelectedLock(n); renderLocks(); } };
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

let statusTimer = 0;
export function status(msg, ms = 4000) {
  const el = document.getElementById('status-line');
  el.textContent = msg;
  el.classList.add('show');
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => el.classList.remove('show'), ms);
}
