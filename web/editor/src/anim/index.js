// The animation half of the editor (docs/editor.md, "Animating"): the timeline and its edits, VCR
// transport and playback with the locks kept at in-betweens, keys from the current pose,
// copy and mirror of poses, onion skin, the graph of one joint variable, the flipbook menu of
// the project's sequences, locks animated over time and balance, export to BVH and glTF,
// and a figure file dropped on the page opened as a new sequence.
// installAnimation(store, viewport) is called once by main.js.
import { qToPose } from '../docmodel.js';
import { figureFor, keysSequence } from './sequence.js';
import { runEdit, NothingToDo, halfOpen } from './edits.js';
import { mirrorMap } from './mirror.js';
import { Player } from './player.js';
import { Onion } from './onion.js';
import { Timeline } from './timeline.js';
import { Transport } from './transport.js';
import { Graph } from './graph.js';
import { Flipbook } from './flipbook.js';
import { Animate, lockActions } from './animate.js';
import { LayersPanel } from './layers.js';
import { exportSequence, installDrop, openFigureFile } from './files.js';
import { installStyle } from './style.js';
import { installApi } from './api.js';

export class Animation {
  constructor(store, viewport) {
    this.store = store;
    this.viewport = viewport;
    this.clipboard = null; // { span, keys: [{ frame, q, pose, tcb }] }
    this.poseClipboard = null; // a state
    this._figure = null; // the figure edits run on
    this._mirror = null;
    this.player = new Player(this);
    this.onion = new Onion(this, viewport);
    store.on('doc', (d) => {
      if (d?.label === 'open') this._reset();
    });
  }
  _reset() {
    this.player.pause();
    this.player.invalidate();
    if (this._figure) this._figure.dispose();
    this._figure = null;
    this._mirror = null;
    this.player._fig?.dispose();
    this.player._fig = null;
  }
  /** A new figure of the document's (the caller disposes it). */
  newFigure() {
    return figureFor(this.store);
  }
  editFigure() {
    if (!this._figure) this._figure = this.newFigure();
    return this._figure;
  }
  mirror() {
    if (!this._mirror) this._mirror = mirrorMap(this.editFigure());
    return this._mirror;
  }
  status(text) {
    const el = document.getElementById('status-line');
    if (el) el.textContent = text;
    this.lastStatus = text;
  }
  frame() {
    return Math.round(this.store.ui.frame);
  }

  // ---- selection ----
  selectKeys(frames) {
    const sel = this.store.ui.selection;
    sel.keys = [...new Set(frames)].sort((a, b) => a - b);
    sel.range = null;
    this.store.emit('selection', sel);
  }
  /** Selects the frames lo..hi (both included) and the keys in them. */
  selectRange(lo, hi) {
    const sel = this.store.ui.selection,
      [a, b] = halfOpen(lo, hi);
    sel.range = [Math.min(lo, hi), Math.max(lo, hi)];
    sel.keys = this.store.doc.keys.filter((k) => k.frame >= a && k.frame < b).map((k) => k.frame);
    this.store.emit('selection', sel);
  }
  /** The frames the range edits act on, lo..hi: the selected range, else the selected keys,
   * else the current frame. */
  editRange() {
    const sel = this.store.ui.selection;
    if (sel.range) return [sel.range[0], sel.range[1]];
    if (sel.keys.length) return [Math.floor(Math.min(...sel.keys)), Math.floor(Math.max(...sel.keys))];
    return [this.frame(), this.frame()];
  }

  // ---- actions (buttons, keys, window.marionette) ----
  run(name, ...args) {
    try {
      const r = this.actions[name](...args);
      return r;
    } catch (e) {
      if (e instanceof NothingToDo) this.status(e.message);
      else {
        console.error(e);
        this.status(`${name}: ${e.message}`);
      }
      return null;
    }
  }
  get actions() {
    if (this._actions) return this._actions;
    const s = this.store;
    const commitPose = (label, q) => {
      const before = new Float64Array(s.figure.q);
      s.setPose(q);
      s.commitPose(label, before); // a key at this frame takes it; elsewhere the unkeyed pose
    };
    this._actions = {
      insertKey: () => {
        const f = this.frame(),
          pose = qToPose(s.figure, s.figure.q);
        s.apply('insert key', (doc) => {
          const k = doc.keys.findIndex((x) => x.frame === f);
          if (k >= 0) doc.keys[k].pose = pose;
          else {
            doc.keys.push({ frame: f, pose });
            doc.keys.sort((a, b) => a.frame - b.frame);
          }
        });
        if (s.ui.frame !== f) s.setFrame(f);
        this.selectKeys([f]);
        this.status(`Key at frame ${f}`);
        return f;
      },
      deleteSelectedKeys: () => {
        const frames = s.ui.selection.keys.filter((f) => s.keyIndexAt(f) >= 0);
        if (!frames.length) throw new NothingToDo('No keys selected');
        // each key cut on its own (keys after it stay put)
        runEdit(this, 'delete keys', (seq) => {
          const removed = [];
          for (const f of frames) {
            const { clip, edit } = seq.cut(f, f + 1e-6);
            removed.push(...edit.removed);
            clip.dispose();
          }
          return { removed, added: [] };
        });
        this.selectKeys([]);
        this.player.show(s.ui.frame);
        this.status(`Deleted ${frames.length} key${frames.length > 1 ? 's' : ''}`);
        return frames;
      },
      ...rangeActions(this),
      copyPose: () => {
        this.poseClipboard = new Float64Array(s.figure.q);
        this.status(`Copied the pose of frame ${this.frame()}`);
      },
      pastePose: () => {
        if (!this.poseClipboard) throw new NothingToDo('No pose copied');
        commitPose('paste pose', this.poseClipboard);
        this.status(`Pasted the pose at frame ${this.frame()}`);
      },
      mirrorPose: () => {
        const mm = this.mirror();
        if (!mm.pairs) throw new NothingToDo('No left and right joints found by name: nothing to mirror');
        commitPose('mirror pose', mm.apply(s.figure.q));
        this.status(`Mirrored the pose (${mm.pairs} joint pairs)`);
      },
      play: () => this.player.play(),
      pause: () => this.player.pause(),
      togglePlay: () => this.player.toggle(),
      stepForward: () => this.player.step(1),
      stepBack: () => this.player.step(-1),
      toStart: () => this.player.toStart(),
      toEnd: () => this.player.toEnd(),
      exportBVH: () => exportSequence(this, 'bvh'),
      exportGLB: () => exportSequence(this, 'glb'),
      openFigureFile: (file, options) => openFigureFile(this, file, options),
      ...lockActions(this),
    };
    return this._actions;
  }

  /** Slides the selected keys' range by delta frames (a drag on the timeline). */
  slideKeys(delta) {
    if (this.store.ui.selection.keys.length) this.run('slideRange', delta);
  }
}

export function installAnimation(store, viewport) {
  installStyle();
  const anim = new Animation(store, viewport);
  for (const name of [
    'insertKey',
    'togglePlay',
    'deleteSelectedKeys',
    'play',
    'pause',
    'stepForward',
    'stepBack',
    'toStart',
    'toEnd',
    'copyRange',
    'cutRange',
    'pasteRange',
    'insertRange',
    'deleteRange',
    'stretchRange',
    'slideRange',
    'copyPose',
    'pastePose',
    'mirrorPose',
    'exportBVH',
    'exportGLB',
    'setLockFrames',
    'keyLockTarget',
    'clearLockTargets',
    'addBalance',
    'removeBalance',
  ])
    store.actions[name] = (...args) => anim.run(name, ...args);
  const el = (id) => document.getElementById(id);
  if (el('timeline')) anim.timeline = new Timeline(anim, el('timeline'));
  if (el('anim-toolbar')) anim.transport = new Transport(anim, el('anim-toolbar'), anim.timeline?.bar);
  if (el('graph')) anim.graph = new Graph(anim, el('graph'));
  if (anim.transport) {
    anim.flipbook = new Flipbook(anim, anim.transport.menus);
    anim.animate = new Animate(anim, anim.transport.menus);
    anim.layers = new LayersPanel(anim, anim.transport.menus);
  }
  installDrop(anim);
  installApi(anim);
  return anim;
}

/** The edits of the selected range (copy, cut, paste, insert, delete, stretch, slide), for
 * Animation.actions: anim is the Animation. */
function rangeActions(anim) {
  const s = anim.store,
    m = s.m;
  const range = () => halfOpen(...anim.editRange());
  const keepClip = (clip, f0) => {
    const byFrame = new Map(s.doc.keys.map((k) => [k.frame, k]));
    anim.clipboard = {
      span: clip.span,
      keys: clip.keys().map((k) => ({ frame: k.frame, q: k.q, tcb: k.tcb, pose: byFrame.get(f0 + k.frame)?.pose })),
    };
  };
  const place = (how) => {
    if (!anim.clipboard) throw new NothingToDo('Nothing to paste: copy or cut a range first');
    const at = anim.frame(),
      cb = anim.clipboard;
    const r = runEdit(
      anim,
      how,
      (seq, fig) => {
        const clip = m.createClip(fig, { span: cb.span, keys: cb.keys.map((k) => ({ frame: k.frame, q: k.q, tcb: k.tcb })) });
        try {
          return how === 'paste' ? seq.paste(clip, at) : seq.insert(clip, at);
        } finally {
          clip.dispose();
        }
      },
      cb.keys.filter((k) => k.pose),
    );
    anim.selectRange(at, at + cb.span - 1);
    anim.status(`${how === 'paste' ? 'Pasted' : 'Inserted'} ${cb.keys.length} keys at frame ${at}`);
    return r;
  };
  return {
    copyRange: () => {
      const [a, b] = range(),
        fig = anim.editFigure();
      const sq = keysSequence(m, fig, s.doc);
      try {
        const clip = sq.copy(a, b);
        keepClip(clip, a);
        clip.dispose();
      } finally {
        sq.dispose();
      }
      anim.status(`Copied ${anim.clipboard.keys.length} keys (frames ${a}\u2013${b - 1})`);
      return anim.clipboard.keys.length;
    },
    cutRange: () => {
      const [a, b] = range();
      const r = runEdit(anim, 'cut', (seq) => {
        const { clip, edit } = seq.cut(a, b);
        keepClip(clip, a);
        clip.dispose();
        return edit;
      });
      anim.selectKeys([]);
      anim.player.show(s.ui.frame);
      anim.status(`Cut ${r.removed.length} keys (frames ${a}\u2013${b - 1})`);
      return r;
    },
    pasteRange: () => place('paste'),
    insertRange: () => place('insert'),
    deleteRange: () => {
      const [a, b] = range();
      const r = runEdit(anim, 'delete range', (seq) => seq.delete(a, b));
      anim.selectKeys([]);
      anim.player.show(s.ui.frame);
      anim.status(`Deleted frames ${a}\u2013${b - 1}`);
      return r;
    },
    stretchRange: (factor = Number(anim.timeline?.factor.value)) => {
      if (!(factor > 0)) throw new Error('the factor must be a number above 0');
      const [a, b] = range();
      // keys at whole frames unless the option keeps the fractions the factor gives
      const r = runEdit(anim, factor >= 1 ? 'stretch' : 'shrink', (seq) => seq.stretch(a, b, factor), [], {
        whole: !s.settings.keepFractions,
      });
      anim.selectRange(a, Math.max(a, Math.ceil(a + factor * (b - a)) - 1));
      anim.player.show(s.ui.frame);
      anim.status(`${factor >= 1 ? 'Stretched' : 'Shrank'} frames ${a}\u2013${b - 1} by ${factor}`);
      return r;
    },
    slideRange: (delta = Number(anim.timeline?.delta.value)) => {
      if (!Number.isFinite(delta) || !delta) throw new Error('slide by a number of frames other than 0');
      const [a, b] = range();
      const r = runEdit(anim, 'slide', (seq) => seq.slide(a, b, delta), [], { whole: !s.settings.keepFractions });
      anim.selectRange(a + delta, b - 1 + delta);
      anim.player.show(s.ui.frame);
      anim.status(`Slid frames ${a}\u2013${b - 1} by ${delta}`);
      return r;
    },
  };
}
