// The timeline (#timeline): keys laid out by time, the playhead, the frames where each lock
// holds and its target keys, a row per foot with its contact track (the heel's frames above,
// the toe's below; click the upper or lower half of a row to turn the heel's or the toe's
// contact at that frame on or off); click or drag to scrub, click keys to select them (Shift or
// Ctrl adds), Shift-drag to select a range of frames, drag selected keys to slide them. The
// bar above it holds the range edits of Welman 6.1.2 (copy, cut, paste, insert, delete,
// stretch, shrink, slide) and the pose tools (copy and paste a pose, mirror, onion skin).
import { h } from './dom.js';

const RULER = 18,
  ROW = 9,
  KEY = 6,
  CROW = 12,
  HEIGHT = 74;

/** Turns frame f on or off in a list of [first, last] intervals (sorted, disjoint): a new
 * list, neighbours merged, an interval split where f is taken out. */
export function toggleFrame(list, f) {
  const inside = list.findIndex(([a, b]) => f >= a && f <= b);
  const out = [];
  if (inside >= 0) {
    for (const [i, [a, b]] of list.entries()) {
      if (i !== inside) out.push([a, b]);
      else {
        if (a <= f - 1) out.push([a, f - 1]);
        if (f + 1 <= b) out.push([f + 1, b]);
      }
    }
    return out;
  }
  for (const iv of [...list.map(([a, b]) => [a, b]), [f, f]].sort((p, q) => p[0] - q[0])) {
    const last = out[out.length - 1];
    if (last && iv[0] <= last[1] + 1) last[1] = Math.max(last[1], iv[1]);
    else out.push(iv);
  }
  return out;
}

export class Timeline {
  constructor(anim, root) {
    this.anim = anim;
    this.store = anim.store;
    this.root = root;
    this.view = null; // [first, last] frame shown; null: fit the keys
    this._drag = null;
    this.build();
    const redraw = () => this.draw();
    for (const e of ['doc', 'frame', 'selection', 'settings', 'playing']) this.store.on(e, redraw);
    new ResizeObserver(redraw).observe(this.canvas);
    this.draw();
  }

  build() {
    // a clicked button gives the focus back, so Space and Delete reach the editor's keys
    const a = this.anim,
      act = (name) => (e) => {
        e.currentTarget.blur();
        a.run(name);
      };
    const btn = (label, title, name, id) => h('button', { title, onclick: act(name), id }, label);
    this.factor = h('input', {
      id: 'tl-factor',
      type: 'number',
      value: '2',
      step: '0.1',
      min: '0.05',
      title: 'Stretch factor (below 1 shrinks)',
    });
    this.delta = h('input', { id: 'tl-delta', type: 'number', value: '5', step: '1', title: 'Slide by frames (negative: earlier)' });
    this.rangeLabel = h('span', { class: 'tl-range', id: 'tl-range' });
    // a stretch or slide puts keys on whole frames unless this keeps the fractions
    this.fractions = h('input', {
      type: 'checkbox',
      id: 'tl-fractions',
      checked: !!this.store.settings.keepFractions,
      onchange: (e) => {
        this.store.setSettings({ keepFractions: e.target.checked });
        e.target.blur();
      },
    });
    this.fractionsLabel = h(
      'label',
      { class: 'tl-check', title: 'Stretch and slide keep keys at fractional frames (else each goes to the nearest whole frame)' },
      this.fractions,
      'Fractions',
    );
    this.onion = h('input', {
      type: 'checkbox',
      id: 'tl-onion',
      onchange: (e) => {
        a.onion.on = e.target.checked;
        e.target.blur();
      },
    });
    this.bar = h(
      'div',
      { class: 'tl-bar' },
      h(
        'div',
        { class: 'tl-group' },
        btn('\u25C6 Key', 'Insert a key at the current frame from the current pose (I)', 'insertKey', 'tl-key'),
        btn('Delete keys', 'Delete the selected keys (Delete)', 'deleteSelectedKeys', 'tl-delete-keys'),
      ),
      h(
        'div',
        { class: 'tl-group' },
        this.rangeLabel,
        btn('Copy', 'Copy the keys of the range', 'copyRange', 'tl-copy'),
        btn('Cut', 'Cut the keys of the range (later keys stay put)', 'cutRange', 'tl-cut'),
        btn('Paste', 'Paste at the current frame, over the keys there', 'pasteRange', 'tl-paste'),
        btn('Insert', 'Insert at the current frame (later keys move on)', 'insertRange', 'tl-insert'),
        btn('Delete', 'Delete the range and close the gap', 'deleteRange', 'tl-delete-range'),
      ),
      h(
        'div',
        { class: 'tl-group' },
        btn('Stretch', 'Stretch (factor above 1) or shrink (below 1) the range about its start', 'stretchRange', 'tl-stretch'),
        h('span', { class: 'tl-x' }, '\u00D7'),
        this.factor,
        this.fractionsLabel,
        btn('Slide', 'Move the keys of the range by this many frames', 'slideRange', 'tl-slide'),
        this.delta,
      ),
      h(
        'div',
        { class: 'tl-group' },
        h('span', { class: 'tl-label' }, 'Pose'),
        btn('Copy', 'Copy the current pose', 'copyPose', 'tl-copy-pose'),
        btn('Paste', 'Paste the copied pose at the current frame', 'pastePose', 'tl-paste-pose'),
        btn('Mirror', 'Mirror the pose left to right', 'mirrorPose', 'tl-mirror'),
        h('label', { class: 'tl-check', title: 'Show the neighbouring keys as ghosts' }, this.onion, 'Onion skin'),
      ),
    );
    this.canvas = h('canvas', { class: 'tl-canvas', id: 'tl-canvas' });
    this.root.append(this.bar, this.canvas);
    this.canvas.addEventListener('pointerdown', (e) => this.down(e));
    this.canvas.addEventListener('pointermove', (e) => this.move(e));
    this.canvas.addEventListener('pointerup', (e) => this.up(e));
    this.canvas.addEventListener('wheel', (e) => this.wheel(e), { passive: false });
    this.canvas.addEventListener('dblclick', () => {
      this.view = null;
      this.draw();
    });
  }

  // ---- frames and pixels ----
  span() {
    if (this.view) return this.view;
    // from the sequence's first frame (its first key) to a little past its last
    const [lo, hi] = this.anim.player.range();
    const a = Math.floor(lo),
      b = Math.max(hi + Math.max(5, 0.15 * (hi - a)), a + 30);
    return [a, Math.ceil(b)];
  }
  xOf(f) {
    const [a, b] = this.span(),
      w = this.canvas.clientWidth;
    return 8 + ((f - a) / (b - a)) * (w - 16);
  }
  frameAt(x) {
    const [a, b] = this.span(),
      w = this.canvas.clientWidth;
    return a + ((x - 8) / (w - 16)) * (b - a);
  }
  /** The y (CSS pixels) of the middle of foot track i's row. */
  contactRowY(i) {
    const cons = this.store.doc?.constraints?.length ?? 0;
    return RULER + 16 + 14 + cons * ROW + 4 + i * CROW;
  }
  /** The contact row and part under (x, y): { track, part: 'heel' | 'toe', frame } or null. */
  contactAt(x, y) {
    const tracks = this.store.doc?.contacts ?? [];
    for (let i = 0; i < tracks.length; i++) {
      const dy = y - this.contactRowY(i);
      if (Math.abs(dy) <= CROW / 2) return { track: i, part: dy < 0 ? 'heel' : 'toe', frame: Math.floor(this.frameAt(x)) }; // as drawn: [f, f + 1)
    }
    return null;
  }
  /** Turns the heel's or toe's contact of track i at frame on or off (one undo step). */
  toggleContact(i, part, frame) {
    const t = this.store.doc?.contacts?.[i];
    if (!t || (part !== 'heel' && part !== 'toe')) return false;
    this.store.apply(`Contact: ${t.joint} ${part}`, (doc) => {
      const track = doc.contacts[i];
      track[part] = toggleFrame(track[part] ?? [], frame);
    });
    return true;
  }
  keyAt(x, y) {
    if (y < RULER) return null;
    let best = null,
      d = KEY + 2;
    for (const k of this.store.doc.keys) {
      const dx = Math.abs(this.xOf(k.frame) - x);
      if (dx <= d) {
        d = dx;
        best = k;
      }
    }
    return best;
  }

  // ---- pointer ----
  down(e) {
    this.canvas.setPointerCapture(e.pointerId);
    const r = this.canvas.getBoundingClientRect(),
      x = e.clientX - r.left,
      y = e.clientY - r.top;
    const sel = this.store.ui.selection,
      key = this.keyAt(x, y),
      contact = key ? null : this.contactAt(x, y);
    if (contact) {
      this.toggleContact(contact.track, contact.part, contact.frame);
      return;
    }
    if (key) {
      const has = sel.keys.includes(key.frame);
      if (e.shiftKey || e.ctrlKey || e.metaKey)
        this.anim.selectKeys(has ? sel.keys.filter((f) => f !== key.frame) : [...sel.keys, key.frame]);
      else if (!has) this.anim.selectKeys([key.frame]);
      this._drag = { kind: 'keys', x0: x, frame0: key.frame, moved: false, delta: 0 };
    } else if (e.shiftKey && y >= RULER) {
      const f = Math.round(this.frameAt(x));
      this._drag = { kind: 'range', f0: f };
      this.anim.selectRange(f, f);
    } else {
      this._drag = { kind: 'scrub' };
      if (y >= RULER) this.anim.selectKeys([]);
      this.anim.player.pause();
      this.anim.player.show(Math.round(this.frameAt(x)));
    }
  }
  move(e) {
    const d = this._drag;
    if (!d) return;
    const r = this.canvas.getBoundingClientRect(),
      x = e.clientX - r.left;
    if (d.kind === 'scrub') {
      const f = Math.round(this.frameAt(x));
      if (f !== this.store.ui.frame) this.anim.player.show(f);
    } else if (d.kind === 'range') {
      this.anim.selectRange(d.f0, Math.round(this.frameAt(x)));
    } else if (d.kind === 'keys') {
      if (Math.abs(x - d.x0) > 3) d.moved = true;
      d.delta = d.moved ? Math.round(this.frameAt(x) - this.frameAt(d.x0)) : 0;
      this.draw();
    }
  }
  up(e) {
    const d = this._drag;
    this._drag = null;
    if (!d) return;
    if (d.kind === 'keys') {
      if (d.moved && d.delta) this.anim.slideKeys(d.delta);
      else if (!d.moved && !(e.shiftKey || e.ctrlKey || e.metaKey)) this.anim.player.show(d.frame0);
    }
    this.draw();
  }
  wheel(e) {
    e.preventDefault();
    const r = this.canvas.getBoundingClientRect(),
      f = this.frameAt(e.clientX - r.left);
    const [a, b] = this.span(),
      s = Math.exp(Math.sign(e.deltaY) * 0.15);
    const na = f - (f - a) * s,
      nb = f + (b - f) * s;
    if (nb - na >= 5 && nb - na <= 100000) this.view = [na, nb];
    this.draw();
  }

  // ---- drawing ----
  draw() {
    const c = this.canvas,
      dpr = window.devicePixelRatio || 1;
    // taller when the contact rows need it
    const tracks = this.store.doc?.contacts ?? [];
    const want = tracks.length ? Math.max(HEIGHT, Math.ceil(this.contactRowY(tracks.length - 1) + CROW / 2 + 6)) : HEIGHT;
    if (c.style.height !== `${want}px`) c.style.height = `${want}px`;
    const w = c.clientWidth,
      hgt = c.clientHeight;
    if (!w || !hgt) return;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(hgt * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(hgt * dpr);
    }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const css = getComputedStyle(this.root);
    const col = (name, fallback) => css.getPropertyValue(name).trim() || fallback;
    const fg = col('--tl-fg', '#c8ccd4'),
      dim = col('--tl-dim', '#6b7280'),
      accent = col('--tl-accent', '#f59e0b');
    g.clearRect(0, 0, w, hgt);
    g.fillStyle = col('--tl-ruler', '#1f2430');
    g.fillRect(0, 0, w, RULER);
    const [a, b] = this.span(),
      ppf = (w - 16) / (b - a);
    const [lo, hi] = this.anim.player.range();
    // the sequence's extent
    g.fillStyle = col('--tl-extent', 'rgba(255,255,255,0.04)');
    g.fillRect(this.xOf(lo), RULER, Math.max(1, this.xOf(hi) - this.xOf(lo)), hgt - RULER);
    // ruler ticks and labels
    const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
    const tick = steps.find((s) => s * ppf >= 6) ?? 10000,
      label = steps.find((s) => s * ppf >= 40) ?? 10000;
    g.font = '10px system-ui, sans-serif';
    g.textBaseline = 'middle';
    for (let f = Math.ceil(a / tick) * tick; f <= b; f += tick) {
      const x = Math.round(this.xOf(f)) + 0.5,
        major = f % label === 0;
      g.strokeStyle = major ? dim : col('--tl-grid', '#2b3140');
      g.beginPath();
      g.moveTo(x, major ? 4 : 11);
      g.lineTo(x, major ? hgt : RULER);
      g.stroke();
      if (major) {
        g.fillStyle = fg;
        g.fillText(String(f), x + 3, 8);
      }
    }
    // the selected range
    const range = this.store.ui.selection.range;
    if (range) {
      const [r0, r1] = [Math.min(...range), Math.max(...range) + 1];
      g.fillStyle = col('--tl-range', 'rgba(59,130,246,0.22)');
      g.fillRect(this.xOf(r0), RULER, this.xOf(r1) - this.xOf(r0), hgt - RULER);
    }
    // constraints: the frames where each holds, its target keys
    const cons = this.store.doc.constraints ?? [];
    const keyY = RULER + 16;
    cons.forEach((con, i) => {
      const y = keyY + 14 + i * ROW;
      if (y > hgt - 3) return;
      const [s0, s1] = con.frames ?? [Math.min(a, lo), Math.max(b, hi)];
      g.fillStyle = con.enabled === false ? col('--tl-con-off', '#374151') : col('--tl-con', '#10b981');
      g.globalAlpha = 0.55;
      g.fillRect(this.xOf(Math.max(s0, a)), y - 2, Math.max(2, this.xOf(Math.min(s1, b)) - this.xOf(Math.max(s0, a))), 4);
      g.globalAlpha = 1;
      for (const tk of con.target_keys ?? []) {
        const x = this.xOf(tk.frame);
        g.beginPath();
        g.arc(x, y, 3, 0, 2 * Math.PI);
        g.fill();
      }
    });
    // contacts: a row per foot, the heel's frames in the upper half, the toe's in the lower
    tracks.forEach((t, i) => {
      const y = this.contactRowY(i);
      g.fillStyle = col('--tl-contact-row', 'rgba(255,255,255,0.05)');
      g.fillRect(0, y - CROW / 2 + 1, w, CROW - 2);
      for (const [part, color, y0] of [
        ['heel', col('--tl-heel', '#38bdf8'), y - 4],
        ['toe', col('--tl-toe', '#a78bfa'), y + 1],
      ]) {
        g.fillStyle = color;
        for (const [f0, f1] of t[part] ?? []) {
          if (f1 + 1 < a || f0 > b) continue;
          const x0 = this.xOf(Math.max(f0, a)),
            x1 = this.xOf(Math.min(f1 + 1, b));
          g.fillRect(x0, y0, Math.max(2, x1 - x0), 3);
        }
      }
      // the foot's name on a plate at the left, over the bars
      const tw = g.measureText(t.joint).width + 6;
      g.fillStyle = col('--tl-ruler', '#1f2430');
      g.globalAlpha = 0.85;
      g.fillRect(0, y - CROW / 2 + 1, tw, CROW - 2);
      g.globalAlpha = 1;
      g.fillStyle = fg;
      g.fillText(t.joint, 3, y);
    });
    // keys (dragged keys drawn where they would land)
    const sel = new Set(this.store.ui.selection.keys),
      drag = this._drag?.kind === 'keys' ? this._drag.delta : 0;
    for (const k of this.store.doc.keys) {
      const on = sel.has(k.frame),
        x = this.xOf(k.frame + (on ? drag : 0));
      g.beginPath();
      g.moveTo(x, keyY - KEY);
      g.lineTo(x + KEY, keyY);
      g.lineTo(x, keyY + KEY);
      g.lineTo(x - KEY, keyY);
      g.closePath();
      g.fillStyle = on ? accent : col('--tl-key', '#e5e7eb');
      g.fill();
      g.strokeStyle = '#111827';
      g.stroke();
    }
    // the playhead
    const x = Math.round(this.xOf(this.store.ui.frame)) + 0.5;
    g.strokeStyle = col('--tl-playhead', '#ef4444');
    g.lineWidth = 2;
    g.beginPath();
    g.moveTo(x, 0);
    g.lineTo(x, hgt);
    g.stroke();
    g.lineWidth = 1;
    const text = String(Math.round(this.store.ui.frame * 100) / 100),
      tw = g.measureText(text).width + 8;
    g.fillStyle = col('--tl-playhead', '#ef4444');
    g.fillRect(x - tw / 2, 0, tw, 14);
    g.fillStyle = '#fff';
    g.fillText(text, x - tw / 2 + 4, 7);
    // the bar: the range the edits act on
    const [r0, r1] = this.anim.editRange();
    this.rangeLabel.textContent = r0 === r1 ? `frame ${r0}` : `frames ${r0}\u2013${r1}`;
    this.rangeLabel.title =
      'The frames the range edits act on: the selected range (Shift-drag), else the selected keys, else the current frame';
    this.onion.checked = this.anim.onion.on;
  }
}
