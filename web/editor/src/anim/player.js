// Playback (VCR transport) and the frame shown. Playing runs at the sequence's fps from
// requestAnimationFrame: the frame shown is the one due at the time (frames are skipped, never
// slowed down, when the page falls behind). With "keep constraints at in-betweens" each frame
// is the interpolated pose with the active locks re-satisfied (Welman 6.3, Fig. 6.5: the feet
// stay put), warm-started from the previous frame (mn_seq_solve_frame): the constrained
// sequence is built once per document change and solves allocate nothing.
import { fullSequence, hasConstraints } from './sequence.js';

const STATS = 4000; // solver times kept (ms): more than two minutes at 30 fps

export class Player {
  constructor(anim) {
    this.anim = anim;
    this.store = anim.store;
    this.loop = true;
    this.playing = false;
    this._seq = null; // the constrained Sequence of the document, built on demand
    this._fig = null;
    this._raf = 0;
    this.solveMs = [];
    this.lastResult = null;
    this.store.on('doc', () => this.invalidate());
  }
  get keepConstraints() {
    return this.store.settings.keepConstraints !== false;
  }
  set keepConstraints(on) {
    this.store.setSettings({ keepConstraints: !!on });
    this.show(this.store.ui.frame);
  }

  invalidate() {
    if (this._seq) this._seq.dispose();
    this._seq = null;
  }
  range() {
    const keys = this.store.doc.keys;
    if (!keys.length) return [0, 0];
    let lo = Infinity,
      hi = -Infinity;
    for (const k of keys) {
      lo = Math.min(lo, k.frame);
      hi = Math.max(hi, k.frame);
    }
    return [lo, hi];
  }
  fps() {
    return this.store.doc.fps ?? 30;
  }

  _constrained() {
    if (this._seq) return this._seq;
    if (!this._fig) this._fig = this.anim.newFigure();
    this._seq = fullSequence(this.store.m, this._fig, this.store.doc);
    return this._seq;
  }
  /** The constrained in-between at a frame as a state (null when the option is off, there
   * are no keys or no constraints). */
  constrainedQ(frame) {
    const doc = this.store.doc;
    if (!this.keepConstraints || !doc.keys.length || !hasConstraints(doc)) return null;
    let seq;
    try {
      seq = this._constrained();
    } catch (e) {
      this.anim.status(`Constraints: ${e.message}`);
      return null;
    }
    const o = this.store.settings;
    const t0 = performance.now();
    // the tolerances of the export's bake (mn_seq_bake_default): what plays is what is exported
    const r = seq.solveFrame(frame, {
      method: o.csolver ?? 'lagrange',
      maxIters: Math.max(20, o.iterations ?? 20),
      tol: 1e-5,
      tolRot: 1e-5,
    });
    const ms = performance.now() - t0;
    this.solveMs.push(ms);
    if (this.solveMs.length > STATS) this.solveMs.shift();
    this.lastResult = r;
    return new Float64Array(this._fig.q);
  }

  /** Shows a frame: the document's pose there, with the locks kept when the option is on. */
  show(frame) {
    const s = this.store;
    s.setFrame(frame);
    // an unkeyed edit at this frame (editor.json's pose) is what the user made: keep it
    if (s.keyIndexAt(frame) < 0 && s.settings.pose && s.settings.pose.frame === frame) return;
    const q = this.constrainedQ(frame);
    if (q) s.setPose(q);
  }

  play() {
    if (this.playing) return;
    const [lo, hi] = this.range();
    if (hi <= lo) return;
    let from = this.store.ui.frame;
    if (from >= hi || from < lo) from = lo;
    this.playing = true;
    this.store.ui.playing = true;
    const t0 = performance.now();
    let shown = NaN;
    const tick = (now) => {
      if (!this.playing) return;
      const [a, b] = this.range();
      let f = from + Math.floor(((now - t0) / 1000) * this.fps());
      if (f > b) {
        if (this.loop && b > a) f = a + ((f - a) % (b - a + 1));
        else {
          this.show(b);
          this.pause();
          return;
        }
      }
      if (f !== shown) {
        shown = f;
        this.show(f);
      }
      this._raf = requestAnimationFrame(tick);
    };
    this._raf = requestAnimationFrame(tick);
    this.store.emit('playing', true);
  }
  pause() {
    if (!this.playing) return;
    this.playing = false;
    this.store.ui.playing = false;
    cancelAnimationFrame(this._raf);
    this.store.persistFrame(); // the frame it stopped at, once
    this.store.emit('playing', false);
  }
  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }
  /** Steps n frames from the current one (whole frames; not before frame 0 or the first key). */
  step(n) {
    this.pause();
    const f = Math.round(this.store.ui.frame) + n;
    this.show(Math.max(f, Math.min(this.range()[0], 0)));
  }
  toStart() {
    this.pause();
    this.show(this.range()[0]);
  }
  toEnd() {
    this.pause();
    this.show(this.range()[1]);
  }

  dispose() {
    this.pause();
    this.invalidate();
    if (this._fig) this._fig.dispose();
    this._fig = null;
  }
}
