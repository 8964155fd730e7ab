// The graph (#graph): one joint variable over time, sampled from the sequence (its plain
// in-betweens; with the locks kept at in-betweens, the constrained curve too, dashed), the keys
// marked, the current frame a vertical line. Click or drag on it to scrub. The variable follows
// the selected joint, or is picked in the list (hinges and slides: their value; balls and
// free joints: the rotation vector's components, and a free joint's position).
import { h } from './dom.js';
import { keysSequence, fullSequence, hasConstraints } from './sequence.js';

/** The variables of a figure's joints: [{ label, joint, get(q) }]. */
export function variables(figure) {
  const out = [];
  for (const j of figure.joints) {
    const a = j.qadr;
    if (j.type === 'hinge' || j.type === 'slide') out.push({ label: j.name, joint: j.name, get: (q) => q[a] });
    else if (j.type === 'ball' || j.type === 'free') {
      const r = j.type === 'free' ? a + 3 : a;
      if (j.type === 'free') ['x', 'y', 'z'].forEach((c, i) => out.push({ label: `${j.name} position ${c}`, joint: j.name, get: (q) => q[a + i] }));
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
    this.select = h('select', { id: 'graph-var', onchange: (e) => {
      this.picked = e.target.value;
      this.pickedWith = this.selectedJoint();
      this.draw();
    } });
    this.info = h('span', { class: 'graph-info', id: 'graph-info' });
    this.canvas = h('canvas', { class: 'graph-canvas', id: 'graph-canvas' });
    root.append(h('div', { class: 'graph-bar' }, h('label', {}, 'Variable ', this.select), this.info), this.canvas);
    this._version = 0; // counts document changes: the curves are sampled once per change
    this.store.on('doc', (d) => {
      this._version++;
      this._seq?.dispose();
      this._seq = null;
      if (d?.label === 'open') { this._fig?.dispose(); this._fig = null; this._vars = null; }
      this.draw();
    });
    for (const e of ['frame', 'selection', 'settings']) this.store.on(e, () => this.draw());
    this.canvas.addEventListener('pointerdown', (e) => { this.canvas.setPointerCapture(e.pointerId); this._scrub = true; this.scrub(e); });
    this.canvas.addEventListener('pointermove', (e) => { if (this._scrub) this.scrub(e); });
    this.canvas.addEventListener('pointerup', () => { this._scrub = false; });
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
    return typeof j === 'number' ? this.store.figure.jointNames[j] ?? null : j;
  }
  /** The variable drawn: the one picked in the list, until another joint is selected; then
   * the selected joint's first. */
  current() {
    const vars = this.vars(), joint = this.selectedJoint();
    const picked = this.picked && vars.find((x) => x.label === this.picked);
    if (picked && this.pickedWith === joint) return picked;
    return (joint && vars.find((x) => x.joint === joint)) || picked ||
      vars.find((x) => x.joint === this.store.figure.jointNames[1]) || vars[0];
  }
  scrub(e) {
    if (!this.last) return;
    const r = this.canvas.getBoundingClientRect(), { a, b, x0, w } = this.last;
    const f = Math.round(a + ((e.clientX - r.left - x0) / w) * (b - a));
    this.anim.player.pause();
    this.anim.player.show(f);
  }
  /** The curve of variable v over frames a..b: plain in-betweens (several per frame), the
   * constrained ones (each frame, played in order from the start as the export bakes them, on
   * a sequence of the graph's own so playback's warm start is left alone), the keys. */
  sample(v, a, b, keep) {
    const doc = this.store.doc, m = this.store.m;
    if (!this._fig) this._fig = this.anim.newFigure();
    if (!this._seq) this._seq = keysSequence(m, this._fig, doc);
    const n = Math.min(1200, Math.max(60, Math.round((b - a) * 4)));
    const plain = [], q = new Float64Array(this._fig.nq);
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
    const c = this.canvas, details = this.root.closest('details');
    if (details && !details.open) return;
    const dpr = window.devicePixelRatio || 1, W = c.clientWidth, H = c.clientHeight;
    if (!W || !H) return;
    c.width = Math.round(W * dpr);
    c.height = Math.round(H * dpr);
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    const doc = this.store.doc, v = this.current();
    if (!v || !doc.keys.length) return;
    this.select.value = v.label;
    const [lo, hi] = this.anim.player.range(), a = lo, b = Math.max(hi, lo + 1);
    const keep = this.anim.player.keepConstraints && hasConstraints(doc);
    const id = `${this._version}|${v.label}|${keep}`;
    if (this._data?.id !== id) this._data = { id, ...this.sample(v, a, b, keep) };
    const { plain, solved, keys, n } = this._data;
    let ymin = Infinity, ymax = -Infinity;
    for (const [, y] of [...plain, ...(solved ?? [])]) { ymin = Math.min(ymin, y); ymax = Math.max(ymax, y); }
    if (ymax - ymin < 1e-6) { ymin -= 0.5; ymax += 0.5; }
    const pad = 0.08 * (ymax - ymin);
    ymin -= pad; ymax += pad;
    const x0 = 44, w = W - x0 - 10, top = 8, hh = H - top - 18;
    const X = (f) => x0 + ((f - a) / (b - a)) * w, Y = (y) => top + (1 - (y - ymin) / (ymax - ymin)) * hh;
    this.last = { a, b, x0, w };
    // axes
    g.strokeStyle = '#2b3140';
    g.fillStyle = '#9ca3af';
    g.font = '10px system-ui, sans-serif';
    g.textBaseline = 'middle';
    for (let i = 0; i <= 4; i++) {
      const y = ymin + ((ymax - ymin) * i) / 4, py = Math.round(Y(y)) + 0.5;
      g.beginPath(); g.moveTo(x0, py); g.lineTo(x0 + w, py); g.stroke();
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
      g.beginPath(); g.arc(X(f), Y(y), 4, 0, 2 * Math.PI); g.fill();
    }
    const px = Math.round(X(Math.min(Math.max(this.store.ui.frame, a), b))) + 0.5;
    g.strokeStyle = '#ef4444';
    g.beginPath(); g.moveTo(px, top); g.lineTo(px, top + hh); g.stroke();
    this.info.textContent = `${v.label}: ${keys.length} keys, ${n + 1} samples` + (solved ? ', dashed: with the locks kept' : '');
    this.drawn = { variable: v.label, samples: plain.length, keys: keys.length, constrained: solved ? solved.length : 0 };
  }
}
