// The graph (#graph): one joint variable over time, sampled from the sequence (its plain
// in-betweens; with the locks kept at in-betweens, the constrained curve too, dashed), the keys
// marked, the current frame a vertical line. Click or drag on it to scrub. The variable follows
// the selected joint, or is picked in the list (hinges and slides: their value; balls and
// free joints: the rotation vector's components, and a free joint's position).
// Editing (issue 22): a key dragged moves in time (whole frames unless Fractions, between its
// neighbours) and, for a hinge, a slide or a free joint's position, in value; the key pressed
// last shows its two tangent handles (Kochanek-Bartels, Welman 6.1.2's spline keys): a handle
// dragged out or in changes the key's tension, up or down its bias, and the joint's
// interpolation becomes `kb` (Catmull-Rom is kb with tension, continuity and bias 0). Each
// drag is one undo step, saved with the document.
import { h } from './dom.js';
import { keysSequence, fullSequence, hasConstraints } from './sequence.js';
import { editValue, withTCB, HANDLE_PX } from './graph-edit.js';

/** The variables of a figure's joints: [{ label, joint, get(q) }]. */
export function variables(figure) {
  const out = [];
  for (const j of figure.joints) {
    const a = j.qadr;
    if (j.type === 'hinge' || j.type === 'slide') {
      out.push({ label: j.name, joint: j.name, get: (q) => q[a], type: j.type, mode: j.type === 'hinge' ? 'rotation' : 'translation' });
    } else if (j.type === 'ball' || j.type === 'free') {
      const r = j.type === 'free' ? a + 3 : a;
      if (j.type === 'free') {
        ['x', 'y', 'z'].forEach((c, i) =>
          out.push({
            label: `${j.name} position ${c}`,
            joint: j.name,
            get: (q) => q[a + i],
            type: 'free',
            component: i,
            mode: 'translation',
          }),
        );
      }
      ['x', 'y', 'z'].forEach((c, i) => out.push({ label: `${j.name} rotation ${c}`, joint: j.name, get: (q) => rotvec(q, r)[i] }));
    }
  }
  return out;
}
function rotvec(q, a) {
  let [w, x, y, z] = [q[a], q[a + 1], q[a + 2], q[a + 3]];
  if (w < 0) [w, x, y, z] = [-w, -x, -y, -z];
  const s = Math.hypot(x, y, z);
  if (s < 1e-12) return [2 * x, 2 * y, 2 * z];
  const k = (2 * Math.atan2(s, w)) / s;
  return [k * x, k * y, k * z];
}

export class Graph {
  constructor(anim, root) {
    this.anim = anim;
    this.store = anim.store;
    this.root = root;
    this.picked = null; // a variable label chosen in the list (else the selected joint's first)
    this._seq = null;
    this._fig = null;
    this.select = h('select', {
      id: 'graph-var',
      onchange: (e) => {
        this.picked = e.target.value;
        this.pickedWith = this.selectedJoint();
        this.draw();
      },
    });
    this.info = h('span', { class: 'graph-info', id: 'graph-info' });
    this.canvas = h('canvas', { class: 'graph-canvas', id: 'graph-canvas' });
    root.append(h('div', { class: 'graph-bar' }, h('label', {}, 'Variable ', this.select), this.info), this.canvas);
    this._version = 0; // counts document changes: the curves are sampled once per change
    this.store.on('doc', (d) => {
      this._version++;
      this._seq?.dispose();
      this._seq = null;
      if (d?.label === 'open') {
        this._fig?.dispose();
        this._fig = null;
        this._vars = null;
      }
      this.draw();
    });
    for (const e of ['frame', 'selection', 'settings']) this.store.on(e, () => this.draw());
    this.canvas.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      this.canvas.setPointerCapture(e.pointerId);
      if (this.beginEdit(e)) return;
      this._scrub = true;
      this.scrub(e);
    });
    this.canvas.addEventListener('pointermove', (e) => {
      if (this._edit) this.moveEdit(e);
      else if (this._scrub) this.scrub(e);
    });
    this.canvas.addEventListener('pointerup', () => {
      this._scrub = false;
      this.endEdit();
    });
    this.canvas.addEventListener('lostpointercapture', () => {
      this._scrub = false;
      this.endEdit();
    });
    this.keyIndex = -1; // the key whose tangent handles show (the last pressed)
    new ResizeObserver(() => this.draw()).observe(this.canvas);
    this.root.closest('details')?.addEventListener('toggle', () => this.draw());
    this.last = null;
  }
  vars() {
    if (!this._vars) {
      this._vars = variables(this.store.figure);
      this.select.replaceChildren(...this._vars.map((v) => h('option', { value: v.label }, v.label)));
    }
    return this._vars;
  }
  /** The selected joint's name (the selection holds an index or a name), or null. */
  selectedJoint() {
    const j = this.store.ui.selection.joint;
    if (j === null || j === undefined) return null;
    return typeof j === 'number' ? (this.store.figure.jointNames[j] ?? null) : j;
  }
  /** The variable drawn: the one picked in the list, until another joint is selected; then
   * the selected joint's first. */
  current() {
    const vars = this.vars(),
      joint = this.selectedJoint();
    const picked = this.picked && vars.find((x) => x.label === this.picked);
    if (picked && this.pickedWith === joint) return picked;
    return (
      (joint && vars.find((x) => x.joint === joint)) || picked || vars.find((x) => x.joint === this.store.figure.jointNames[1]) || vars[0]
    );
  }
  scrub(e) {
    if (!this.last) return;
    const r = this.canvas.getBoundingClientRect(),
      { a, b, x0, w } = this.last;
    const f = Math.round(a + ((e.clientX - r.left - x0) / w) * (b - a));
    this.anim.player.pause();
    this.anim.player.show(f);
  }
  /** The curve of variable v over frames a..b: plain in-betweens (several per frame), the
   * constrained ones (each frame, played in order from the start as the export bakes them, on
   * a sequence of the graph's own so playback's warm start is left alone), the keys. */
  sample(v, a, b, keep) {
    const doc = this.store.doc,
      m = this.store.m;
    if (!this._fig) this._fig = this.anim.newFigure();
    if (!this._seq) this._seq = keysSequence(m, this._fig, doc);
    const n = Math.min(1200, Math.max(60, Math.round((b - a) * 4)));
    const plain = [],
      q = new Float64Array(this._fig.nq);
    for (let i = 0; i <= n; i++) {
      const f = a + ((b - a) * i) / n;
      plain.push([f, v.get(this._seq.sampleQ(f, q))]);
    }
    let solved = null;
    if (keep) {
      solved = [];
      const fig = this.anim.newFigure();
      try {
        const seq = fullSequence(m, fig, doc);
        try {
          for (let f = Math.ceil(a); f <= b; f++) {
            seq.solveFrame(f, { tol: 1e-5, tolRot: 1e-5 });
            solved.push([f, v.get(fig.q)]);
          }
        } finally {
          seq.dispose();
        }
      } catch (e) {
        this.anim.status(`Graph: ${e.message}`);
        solved = null;
      } finally {
        fig.dispose();
      }
    }
    const keys = doc.keys.map((k) => [k.frame, v.get(this._seq.sampleQ(k.frame, q))]);
    return { plain, solved, keys, n };
  }

  draw() {
    const c = this.canvas,
      details = this.root.closest('details');
    if (details && !details.open) return;
    const dpr = window.devicePixelRatio || 1,
      W = c.clientWidth,
      H = c.clientHeight;
    if (!W || !H) return;
    c.width = Math.round(W * dpr);
    c.height = Math.round(H * dpr);
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    const doc = this.store.doc,
      v = this.current();
    if (!v || !doc.keys.length) return;
    this.select.value = v.label;
    const [lo, hi] = this.anim.player.range(),
      a = lo,
      b = Math.max(hi, lo + 1);
    const keep = this.anim.player.keepConstraints && hasConstraints(doc);
    const id = `${this._version}|${v.label}|${keep}`;
    if (this._data?.id !== id) this._data = { id, ...this.sample(v, a, b, keep) };
    const { plain, solved, keys, n } = this._data;
    let ymin = Infinity,
      ymax = -Infinity;
    for (const [, y] of [...plain, ...(solved ?? [])]) {
      ymin = Math.min(ymin, y);
      ymax = Math.max(ymax, y);
    }
    if (ymax - ymin < 1e-6) {
      ymin -= 0.5;
      ymax += 0.5;
    }
    const pad = 0.08 * (ymax - ymin);
    ymin -= pad;
    ymax += pad;
    // during an edit the value axis stays as it was when the drag began
    if (this._edit?.yRange) [ymin, ymax] = this._edit.yRange;
    const x0 = 44,
      w = W - x0 - 10,
      top = 8,
      hh = H - top - 18;
    const X = (f) => x0 + ((f - a) / (b - a)) * w,
      Y = (y) => top + (1 - (y - ymin) / (ymax - ymin)) * hh;
    this.last = { a, b, x0, w, top, hh, ymin, ymax, X, Y };
    // axes
    g.strokeStyle = '#2b3140';
    g.fillStyle = '#9ca3af';
    g.font = '10px system-ui, sans-serif';
    g.textBaseline = 'middle';
    for (let i = 0; i <= 4; i++) {
      const y = ymin + ((ymax - ymin) * i) / 4,
        py = Math.round(Y(y)) + 0.5;
      g.beginPath();
      g.moveTo(x0, py);
      g.lineTo(x0 + w, py);
      g.stroke();
      g.fillText(y.toFixed(Math.abs(ymax - ymin) < 0.1 ? 3 : 2), 4, py);
    }
    g.textBaseline = 'top';
    for (const [f] of keys) g.fillText(String(f), X(f) - 4, top + hh + 4);
    // the curves
    const line = (pts, color, dash) => {
      g.strokeStyle = color;
      g.setLineDash(dash);
      g.lineWidth = 2;
      g.beginPath();
      pts.forEach(([f, y], i) => (i ? g.lineTo(X(f), Y(y)) : g.moveTo(X(f), Y(y))));
      g.stroke();
      g.setLineDash([]);
      g.lineWidth = 1;
    };
    line(plain, '#60a5fa', []);
    if (solved && solved.length) line(solved, '#34d399', [5, 4]);
    // keys and the current frame
    for (const [f, y] of keys) {
      g.fillStyle = '#f59e0b';
      g.beginPath();
      g.arc(X(f), Y(y), 4, 0, 2 * Math.PI);
      g.fill();
    }
    this.last.keys = keys.map(([f, y]) => ({ x: X(f), y: Y(y) }));
    this.drawHandles(g, plain, keys, v);
    const px = Math.round(X(Math.min(Math.max(this.store.ui.frame, a), b))) + 0.5;
    g.strokeStyle = '#ef4444';
    g.beginPath();
    g.moveTo(px, top);
    g.lineTo(px, top + hh);
    g.stroke();
    this.info.textContent = `${v.label}: ${keys.length} keys, ${n + 1} samples` + (solved ? ', dashed: with the locks kept' : '');
    this.drawn = { variable: v.label, samples: plain.length, keys: keys.length, constrained: solved ? solved.length : 0 };
  }

  // ---- editing keys and tangents (graph-edit.js) ----

  /** The tangent handles of the key pressed last: for variables a spline can carry (a hinge's
   * angle, a slide's length, a free joint's position), at the key along the curve's slope on
   * each side, as long as the tension leaves them (HANDLE_PX at tension 0). */
  drawHandles(g, plain, keys, v) {
    this.last.handles = null;
    const k = this.keyIndex;
    if (!v.mode || k < 0 || k >= keys.length) return;
    const { X, Y } = this.last,
      [f, y] = keys[k];
    const tcb = this.store.doc.keys[k]?.tcb ?? [0, 0, 0];
    const len = HANDLE_PX * (1 - tcb[0]) + 6;
    // the curve's slope in pixels just before and after the key
    const at = (ff) => {
      let best = plain[0];
      for (const p of plain) if (Math.abs(p[0] - ff) < Math.abs(best[0] - ff)) best = p;
      return best;
    };
    const d = Math.max(0.25, (plain[1]?.[0] ?? f + 1) - (plain[0]?.[0] ?? f));
    const side = (sgn) => {
      const p = at(f + sgn * d);
      let dx = X(p[0]) - X(f),
        dy = Y(p[1]) - Y(y);
      if (Math.abs(dx) < 1e-9) {
        dx = sgn;
        dy = 0;
      }
      const n = Math.hypot(dx, dy);
      return { x: X(f) + (len * dx) / n, y: Y(y) + (len * dy) / n };
    };
    const hs = { left: side(-1), right: side(1) };
    g.strokeStyle = '#fbbf24';
    g.fillStyle = '#fbbf24';
    g.lineWidth = 1.5;
    g.beginPath();
    g.moveTo(hs.left.x, hs.left.y);
    g.lineTo(hs.right.x, hs.right.y);
    g.stroke();
    g.lineWidth = 1;
    for (const p of [hs.left, hs.right]) g.fillRect(p.x - 4, p.y - 4, 8, 8);
    this.last.handles = hs;
  }

  /** A press on a tangent handle or a key starts an edit; returns whether it did. */
  beginEdit(e) {
    if (!this.last?.keys) return false;
    const r = this.canvas.getBoundingClientRect(),
      x = e.clientX - r.left,
      y = e.clientY - r.top;
    const near = (p) => Math.hypot(p.x - x, p.y - y) <= 7;
    const v = this.current(),
      doc = this.store.doc;
    const start = {
      x,
      y,
      docBefore: JSON.stringify(doc),
      qBefore: Float64Array.from(this.store.figure.q),
      yRange: [this.last.ymin, this.last.ymax],
      v,
      moved: false,
    };
    const hs = this.last.handles;
    if (hs && this.keyIndex >= 0) {
      for (const side of ['left', 'right']) {
        if (!near(hs[side])) continue;
        this._edit = { ...start, kind: 'tangent', side, key: this.keyIndex, tcb0: doc.keys[this.keyIndex].tcb ?? [0, 0, 0] };
        return true;
      }
    }
    const k = this.last.keys.findIndex(near);
    if (k < 0) return false;
    this.anim.player.pause();
    this.keyIndex = k;
    const key = doc.keys[k];
    this._edit = {
      ...start,
      kind: 'key',
      key: k,
      frame0: key.frame,
      value0: this._data.keys[k][1],
      lo: k > 0 ? doc.keys[k - 1].frame : -Infinity,
      hi: k + 1 < doc.keys.length ? doc.keys[k + 1].frame : Infinity,
    };
    this.draw();
    return true;
  }

  moveEdit(e) {
    const ed = this._edit,
      r = this.canvas.getBoundingClientRect();
    const x = e.clientX - r.left,
      y = e.clientY - r.top,
      { a, b, w, hh } = this.last;
    const doc = this.store.doc,
      key = doc.keys[ed.key];
    if (!key) return;
    if (ed.kind === 'key') {
      let f = ed.frame0 + ((x - ed.x) / w) * (b - a);
      if (!this.store.settings.keepFractions) f = Math.round(f);
      // between its neighbours: whole frames stop one short of them
      const gap = this.store.settings.keepFractions ? 1e-3 : 1;
      f = Math.min(Math.max(f, ed.lo + gap), ed.hi - gap);
      key.frame = f;
      if (ed.v.mode) {
        const [y0, y1] = ed.yRange;
        const value = ed.value0 - ((y - ed.y) / hh) * (y1 - y0);
        editValue(this.store.figure, key, ed.v, value);
      }
    } else {
      // out or in along x: tension; up or down: bias (the right handle up raises the curve
      // after the key, the left handle up before it)
      const sgn = ed.side === 'right' ? 1 : -1;
      const t = ed.tcb0[0] - (sgn * (x - ed.x)) / HANDLE_PX;
      const bias = ed.tcb0[2] - (sgn * (y - ed.y)) / (2 * HANDLE_PX);
      withTCB(doc, ed.v, ed.key, [t, ed.tcb0[1], bias]);
    }
    ed.moved = true;
    this.store._invalidateSequence();
    this.store.emit('doc', { label: 'graph edit' });
  }

  /** The end of a drag: one undo step with the document as it was, saved. */
  endEdit() {
    const ed = this._edit;
    this._edit = null;
    if (!ed) return;
    if (ed.moved) {
      const s = this.store;
      s._push({
        label: `graph: ${ed.kind === 'key' ? 'key' : 'tangent'}`,
        doc: ed.docBefore,
        q: Array.from(ed.qBefore),
        locks: JSON.stringify(s.settings.locks ?? {}),
      });
      s._docChanged(ed.kind === 'key' ? 'graph: key' : 'graph: tangent');
    }
    this.draw();
  }

  /** Page pixels of key k's dot and of the tangent handles shown (tests, scripts). */
  screenPoints(k) {
    const r = this.canvas.getBoundingClientRect(),
      p = this.last?.keys?.[k];
    const at = (q) => (q ? { x: r.left + q.x, y: r.top + q.y } : null);
    return { key: at(p), left: at(this.last?.handles?.left), right: at(this.last?.handles?.right), keyIndex: this.keyIndex };
  }
}
