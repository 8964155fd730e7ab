// The sliders of the selected site's joints: forward kinematics by hand (Welman 6.1.3), a
// hinge's angle or a slide's offset against its limits, a ball's rotation as three Euler angles
// within its swing cone and twist range. Each drag is one undo step when let go.
import { $, fmt } from './dom.js';

/** Wires #sliders; returns { buildSliders (for the selection), syncSliders (to the pose) }. */
export function sliderPanel(store, vp, poser, list, syncWeight) {
  const fig = store.figure;
  const sliders = $('sliders');
  // the pose before a slider moved (the undo step of the drag)
  const ctx = { store, fig, poser, sliders, before: null };
  function buildSliders() {
    sliders.textContent = '';
    const j = store.ui.selection.joint;
    $('joint-name').textContent = j === null ? '\u2013' : fig.jointNames[j];
    for (const li of list.children) li.classList.toggle('selected', j !== null && li.dataset.joint === fig.jointNames[j]);
    if (j === null) return;
    const site = vp.sites[vp.siteOf[j]];
    for (const jj of site.joints) {
      const info = fig.joints[jj];
      const vars = info.type === 'hinge' || info.type === 'slide' ? [0] : info.type === 'free' ? [0, 1, 2] : [];
      for (const k of vars) sliders.append(linearSlider(ctx, info, k));
    }
    for (const jj of site.joints) {
      const info = fig.joints[jj];
      if (info.type === 'ball') rotationSliders(ctx, info, info.qadr);
      else if (info.type === 'free') rotationSliders(ctx, info, info.qadr + 3);
    }
    if (!sliders.children.length) sliders.textContent = 'This joint has no slider variables (a fixed joint).';
    syncWeight();
  }
  function syncSliders() {
    for (const r of sliders.children) r._sync?.();
  }
  return { buildSliders, syncSliders };
}

/** A hinge's angle (degrees) or one coordinate of a slide or free joint's position (metres). */
function linearSlider(ctx, info, k) {
  const { store, fig, poser } = ctx;
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
    if (!ctx.before) ctx.before = Float64Array.from(fig.q);
    const q = Float64Array.from(fig.q);
    q[info.qadr + k] = fromUi(Number(input.value));
    store.setPose(q);
    if (poser.activeLocks().length) poser.solveLocks(1);
  });
  input.addEventListener('change', () => {
    if (ctx.before) store.commitPose(`set ${info.name}`, ctx.before);
    ctx.before = null;
  });
  row._sync = sync;
  const track = document.createElement('div');
  track.className = 'track';
  track.append(input, lim);
  row.append(label, track, out);
  return row;
}

// A ball joint's rotation (a free joint's too): three angle sliders, -180..180 degrees, in
// the joint's own Euler order (its BVH channel order), R = R1(e0) R2(e1) R3(e2). The angles
// shown are read from the quaternion nearest the previous ones (both Tait-Bryan branches,
// whole turns), so a slider moving the middle angle past 90 degrees keeps going instead of
// the other two jumping by 180. A limited ball is clamped to its swing cone and twist
// range as it moves (mn_ball_clamp); each track is shaded where, the other two angles kept,
// the pose would leave them, and a readout gives swing and twist against their limits.
function rotationSliders(ctx, info, at) {
  const { store, fig, poser, sliders } = ctx;
  const m = store.m,
    order = info.rotOrder,
    ball = info.type === 'ball';
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
    const qj = quatAt(),
      qe = m.eulerToQuat(order, eul);
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
      const n = 60,
        stops = [];
      for (let i = 0; i <= n; i++) {
        const e = eul.slice();
        e[k] = -Math.PI + (2 * Math.PI * i) / n;
        const c = within(m.eulerToQuat(order, e)).ok ? 'var(--reach-in, #3d7a4a)' : 'var(--reach-out, #8a3030)';
        stops.push(`${c} ${((100 * (i - 0.5)) / n).toFixed(2)}%`, `${c} ${((100 * (i + 0.5)) / n).toFixed(2)}%`);
      }
      reach.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
    };
    input.addEventListener('input', () => {
      if (!ctx.before) ctx.before = Float64Array.from(fig.q);
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
      if (ctx.before) store.commitPose(`set ${info.name}`, ctx.before);
      ctx.before = null;
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
