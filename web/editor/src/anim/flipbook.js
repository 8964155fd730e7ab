// The sequences menu: one flipbook icon per sequence document saved in the project, cycling
// its key poses (drawn from the front), with its name and key count. Choosing one opens it.
import { h } from './dom.js';
import { poseToQ } from '../docmodel.js';
import { switchSequence } from './files.js';
import { beside } from '../server.js';

const SIZE = 56,
  PERIOD = 400;

export class Flipbook {
  constructor(anim, menus) {
    this.anim = anim;
    this.store = anim.store;
    this.books = []; // [{ path, keys, frames: [[segments]] }]
    this._timer = 0;
    this.panel = menus.add('Sequences', 'sequences', 'The sequences of this project (flipbooks of their keys)', (panel) =>
      this.fill(panel),
    );
  }

  async fill(panel) {
    const list = h('div', { class: 'flip-list' }, h('div', { class: 'flip-empty' }, 'Reading the project\u2026'));
    panel.append(list);
    let files = [];
    try {
      files = (await this.store.server.project()).body.files.filter((f) => f.kind === 'sequence').map((f) => f.path);
    } catch (e) {
      list.replaceChildren(h('div', { class: 'flip-empty' }, `Cannot read the project: ${e.message}`));
      return;
    }
    // the open document as it is now, saved or not
    if (!files.includes(this.store.sequencePath)) files.unshift(this.store.sequencePath);
    const books = [];
    for (const path of files) {
      try {
        books.push(await this.book(path));
      } catch (e) {
        books.push({ path, error: e.message, frames: [] });
      }
    }
    this.books = books;
    list.replaceChildren(
      ...books.map((b) => {
        const canvas = h('canvas', { class: 'flip-icon', width: SIZE * 2, height: SIZE * 2 });
        b.canvas = canvas;
        const current = b.path === this.store.sequencePath;
        return h(
          'button',
          {
            class: `flip-item${current ? ' current' : ''}`,
            'data-path': b.path,
            title: b.error ?? `Open ${b.path}`,
            onclick: () => {
              panel.hidden = true;
              if (!current) this.open(b.path);
            },
          },
          canvas,
          h('span', { class: 'flip-name' }, b.path),
          h('span', { class: 'flip-meta' }, b.error ? 'unreadable' : `${b.keys} keys${current ? ' (open)' : ''}`),
        );
      }),
    );
    clearInterval(this._timer);
    let tick = 0;
    const step = () => {
      if (panel.hidden) {
        clearInterval(this._timer);
        return;
      }
      for (const b of this.books) this.drawBook(b, tick);
      tick++;
    };
    step();
    this._timer = setInterval(step, PERIOD);
  }

  /** A flipbook of a sequence document: its key poses as 2-D bone segments (front view). */
  async book(path) {
    const open = path === this.store.sequencePath;
    let doc = open ? this.store.doc : (await this.store.server.file(path)).body;
    // a document of several figures: the open one as the page joined them, another by its first
    if (!open && Array.isArray(doc?.figures)) doc = { figure: doc.figures[0]?.file, keys: doc.figures[0]?.keys ?? [] };
    const figPath = beside(path, doc.figure);
    const m = this.store.m;
    let fig;
    if (open && this.store.multi) fig = m.figureFromDocument(this.store.figureDoc);
    else if (figPath === 'stickman') fig = m.stickman();
    else {
      const r = await this.store.server.figure(figPath);
      if (!r.ok) throw new Error(`${figPath}: HTTP ${r.status}`);
      fig = m.figureFromDocument(r.body);
    }
    try {
      const keys = [...doc.keys].sort((a, b) => a.frame - b.frame);
      const frames = keys.map((k) => {
        fig.setQ(poseToQ(fig, k.pose)).fk();
        const p = fig.positions,
          segs = [];
        fig.joints.forEach((j, i) => {
          if (j.parent >= 0) segs.push([p[3 * j.parent], p[3 * j.parent + 1], p[3 * i], p[3 * i + 1]]);
        });
        return segs;
      });
      return { path, keys: keys.length, frames };
    } finally {
      fig.dispose();
    }
  }

  drawBook(b, tick) {
    const g = b.canvas?.getContext('2d');
    if (!g) return;
    const W = b.canvas.width;
    g.clearRect(0, 0, W, W);
    if (!b.frames.length) return;
    if (!b.box) {
      let x0 = Infinity,
        y0 = Infinity,
        x1 = -Infinity,
        y1 = -Infinity;
      for (const f of b.frames)
        for (const [ax, ay, bx, by] of f) {
          x0 = Math.min(x0, ax, bx);
          x1 = Math.max(x1, ax, bx);
          y0 = Math.min(y0, ay, by);
          y1 = Math.max(y1, ay, by);
        }
      const s = (0.84 * W) / Math.max(x1 - x0, y1 - y0, 1e-9);
      b.box = { s, cx: (x0 + x1) / 2, cy: (y0 + y1) / 2 };
    }
    const { s, cx, cy } = b.box,
      segs = b.frames[tick % b.frames.length];
    g.strokeStyle = '#e5e7eb';
    g.lineWidth = 3;
    g.lineCap = 'round';
    g.beginPath();
    for (const [ax, ay, bx, by] of segs) {
      g.moveTo(W / 2 + (ax - cx) * s, W / 2 - (ay - cy) * s);
      g.lineTo(W / 2 + (bx - cx) * s, W / 2 - (by - cy) * s);
    }
    g.stroke();
    b.shown = tick % b.frames.length;
  }

  /** Opens another sequence document of the project. */
  open(path) {
    return switchSequence(this.anim, path).catch((e) => this.anim.status(e.message));
  }
}
