// The "Animate" menu: locks over time (Welman 6.3, 7.2.1). For each lock of the sequence, the
// frames where it holds, and its target keyed at the current frame from where its handle is
// now (an animated constraint: a hand that follows a path, a foot put down at a frame); and
// balance: the centre of mass kept over the support polygon of the feet.
import { h } from './dom.js';
import { uniqueName } from '../docmodel.js';
import { quatOfMatrix } from './mirror.js';

/** The world position and rotation (w, x, y, z) of a handle in the figure's current pose. */
export function handleValue(figure, handle) {
  const j = figure.jointNames.indexOf(handle.joint);
  if (j < 0) return null;
  const F = figure.frames.subarray(12 * j, 12 * j + 12),
    p = handle.point ?? [0, 0, 0];
  const pos = [0, 1, 2].map((r) => F[9 + r] + F[3 * r] * p[0] + F[3 * r + 1] * p[1] + F[3 * r + 2] * p[2]);
  return { pos, rot: quatOfMatrix(F.subarray(0, 9)) };
}
/** The support polygon of the feet in the current pose: the convex hull, on the ground, of
 * discs around every foot and toe joint (radius 3 % of the figure's height); only(j), when
 * given, picks which of them count (the locked feet). */
export function feetPolygon(figure, only = null) {
  const P = figure.positions,
    n = figure.jointCount;
  let y0 = Infinity,
    y1 = -Infinity;
  for (let j = 0; j < n; j++) {
    y0 = Math.min(y0, P[3 * j + 1]);
    y1 = Math.max(y1, P[3 * j + 1]);
  }
  const feet = figure.jointNames
    .map((name, j) => [name, j])
    .filter(([name, j]) => /foot|toe|ankle/i.test(name) && (!only || only(j)))
    .map(([, j]) => j);
  if (!feet.length) return null;
  const r = 0.03 * (y1 - y0),
    pts = [];
  for (const j of feet)
    for (let k = 0; k < 8; k++) pts.push([P[3 * j] + r * Math.cos((k * Math.PI) / 4), P[3 * j + 2] + r * Math.sin((k * Math.PI) / 4)]);
  const hull = convexHull(pts);
  const ground = Math.min(...feet.map((j) => P[3 * j + 1]));
  return hull.slice(0, 16).map(([x, z]) => [x, ground, z]);
}
function convexHull(pts) {
  pts = [...pts].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [],
    upper = [];
  for (const p of pts) {
    while (lower.length >= 2 && cross(lower.at(-2), lower.at(-1), p) <= 0) lower.pop();
    lower.push(p);
  }
  for (const p of pts.reverse()) {
    while (upper.length >= 2 && cross(upper.at(-2), upper.at(-1), p) <= 0) upper.pop();
    upper.push(p);
  }
  const hull = lower.slice(0, -1).concat(upper.slice(0, -1));
  // at most 16 vertices: keep every other one while there are more (still convex, slightly smaller)
  let out = hull;
  while (out.length > 16) out = out.filter((_, i) => i % 2 === 0);
  return out;
}

export class Animate {
  constructor(anim, menus) {
    this.anim = anim;
    this.store = anim.store;
    this.panel = menus.add('Animate', 'animate', 'Locks over time: frames, targets keyed at frames, balance', (panel) => this.fill(panel));
    const refill = () => {
      if (this.panel.hidden || this.panel.contains(document.activeElement)) return;
      this.panel.replaceChildren();
      this.fill(this.panel);
    };
    this.store.on('doc', refill);
    this.store.on('frame', () => {
      if (!this.anim.player.playing) refill();
    });
  }

  fill(panel) {
    const s = this.store,
      doc = s.doc,
      f = this.anim.frame();
    const rows = (doc.constraints ?? []).map((c, i) => {
      const handle = (doc.handles ?? []).find((x) => x.name === c.handle);
      const keyable = ['pin', 'orient', 'plane', 'line'].includes(c.type) && handle && handle.type !== 'com';
      const start = h('input', {
        type: 'number',
        step: '1',
        class: 'anim-num',
        value: c.frames ? String(c.frames[0]) : '',
        placeholder: 'all',
      });
      const end = h('input', {
        type: 'number',
        step: '1',
        class: 'anim-num',
        value: c.frames ? String(c.frames[1]) : '',
        placeholder: 'all',
      });
      const setFrames = () => {
        const a = start.value === '' ? null : Number(start.value),
          b = end.value === '' ? null : Number(end.value);
        this.anim.run('setLockFrames', i, a === null && b === null ? null : [a ?? -1e6, b ?? 1e6]);
      };
      start.addEventListener('change', setFrames);
      end.addEventListener('change', setFrames);
      const nk = c.target_keys?.length ?? 0;
      return h(
        'div',
        { class: 'anim-lock', 'data-index': String(i) },
        h(
          'div',
          { class: 'anim-lock-name' },
          `${c.name ?? `${c.type} ${i + 1}`}`,
          h('span', { class: 'anim-dim' }, ` ${c.type} on ${c.handle}`),
        ),
        h('div', { class: 'anim-row' }, 'frames', start, '\u2013', end),
        keyable
          ? h(
              'div',
              { class: 'anim-row' },
              h(
                'button',
                {
                  class: 'anim-key-target',
                  onclick: () => {
                    this.anim.run('keyLockTarget', i);
                  },
                },
                `Key target at ${f}`,
              ),
              h(
                'span',
                { class: 'anim-dim' },
                nk ? `${nk} target key${nk > 1 ? 's' : ''}` : c.lock || c.target === undefined ? 'locked where it is' : 'fixed target',
              ),
              nk
                ? h(
                    'button',
                    {
                      onclick: () => {
                        this.anim.run('clearLockTargets', i);
                      },
                    },
                    'Clear',
                  )
                : null,
            )
          : null,
      );
    });
    const hasBalance = (doc.constraints ?? []).some((c) => c.type === 'balance');
    panel.append(
      h('div', { class: 'anim-head' }, 'Locks over time'),
      ...(rows.length ? rows : [h('div', { class: 'anim-dim anim-pad' }, 'No locks yet: lock a part first (Lock menu).')]),
      h('div', { class: 'anim-head' }, 'Balance'),
      h(
        'div',
        { class: 'anim-row anim-pad' },
        h(
          'button',
          {
            id: 'anim-balance',
            onclick: () => {
              this.anim.run(hasBalance ? 'removeBalance' : 'addBalance');
            },
          },
          hasBalance ? 'Stop keeping balance' : 'Keep the centre of mass over the feet',
        ),
      ),
    );
  }
}

/** The actions of the menu (also window.marionette's): each one undo step. */
export function lockActions(anim) {
  const s = anim.store;
  const con = (i) => {
    const c = s.doc.constraints?.[i];
    if (!c) throw new Error(`no lock ${i}`);
    return c;
  };
  return {
    /** Lock i holds over frames [a, b] (null: every frame). */
    setLockFrames: (i, frames) => {
      con(i);
      if (frames && !(frames[1] >= frames[0])) throw new Error('the last frame comes before the first');
      s.apply('lock frames', (doc) => {
        if (frames) doc.constraints[i].frames = [frames[0], frames[1]];
        else delete doc.constraints[i].frames;
      });
      anim.player.show(s.ui.frame);
    },
    /** Keys lock i's target at the current frame where its handle is in the current pose. */
    keyLockTarget: (i) => {
      const c = con(i),
        f = anim.frame();
      const handle = (s.doc.handles ?? []).find((x) => x.name === c.handle);
      const v = handle && handleValue(s.figure, handle);
      if (!v) throw new Error(`lock ${c.name ?? i}: its handle is not on a joint`);
      let key;
      if (c.type === 'pin') key = { frame: f, target: v.pos };
      else if (c.type === 'orient') key = { frame: f, target: v.rot };
      else if (c.type === 'plane') key = { frame: f, origin: v.pos, normal: c.normal ?? c.target_keys?.at(-1)?.normal ?? [0, 1, 0] };
      else if (c.type === 'line')
        key = { frame: f, origin: v.pos, direction: c.direction ?? c.target_keys?.at(-1)?.direction ?? [0, 1, 0] };
      else throw new Error(`a ${c.type} lock has no target to key`);
      s.apply('key lock target', (doc) => {
        const d = doc.constraints[i];
        d.target_keys = (d.target_keys ?? []).filter((k) => k.frame !== f);
        d.target_keys.push(key);
        d.target_keys.sort((a, b) => a.frame - b.frame);
        delete d.lock; // target keys replace the lock and the fixed target
        delete d.target;
        delete d.origin;
        if (d.type === 'plane') delete d.normal;
        if (d.type === 'line') delete d.direction;
      });
      anim.status(`Lock ${c.name ?? i}: target keyed at frame ${f}`);
      return key;
    },
    clearLockTargets: (i) => {
      con(i);
      s.apply('clear lock targets', (doc) => {
        const d = doc.constraints[i],
          last = d.target_keys?.at(-1);
        delete d.target_keys;
        delete d.target_interpolation;
        if (d.type === 'pin' || d.type === 'orient') d.lock = true;
        else if (last) {
          d.origin = last.origin;
          if (d.type === 'plane') d.normal = last.normal;
          else d.direction = last.direction;
        }
      });
      anim.player.show(s.ui.frame);
    },
    /** Balance (Welman 7.2.1): the centre of mass over the feet's support polygon. */
    addBalance: () => {
      const poly = feetPolygon(s.figure);
      if (!poly || poly.length < 3) throw new Error('no foot or toe joints found by name: no support polygon');
      const P = s.figure.positions;
      let y0 = Infinity,
        y1 = -Infinity;
      for (let j = 0; j < s.figure.jointCount; j++) {
        y0 = Math.min(y0, P[3 * j + 1]);
        y1 = Math.max(y1, P[3 * j + 1]);
      }
      s.apply('keep balance', (doc) => {
        doc.handles ??= [];
        doc.constraints ??= [];
        const name = uniqueName(
          'centre of mass',
          doc.handles.map((x) => x.name),
        );
        doc.handles.push({ name, type: 'com' });
        doc.constraints.push({
          type: 'balance',
          name: uniqueName(
            'balance',
            doc.constraints.map((x) => x.name),
          ),
          handle: name,
          polygon: poly,
          up: [0, 1, 0],
          margin: Math.round(1e4 * 0.006 * (y1 - y0)) / 1e4,
        });
      });
      anim.player.show(s.ui.frame);
      anim.status(`Balance: the centre of mass kept over a ${poly.length}-sided support polygon`);
    },
    removeBalance: () => {
      s.apply('stop balance', (doc) => {
        const gone = new Set(doc.constraints.filter((c) => c.type === 'balance').map((c) => c.handle));
        doc.constraints = doc.constraints.filter((c) => c.type !== 'balance');
        doc.handles = doc.handles.filter(
          (x) => !(gone.has(x.name) && x.type === 'com' && !doc.constraints.some((c) => c.handle === x.name || c.handle2 === x.name)),
        );
      });
      anim.player.show(s.ui.frame);
    },
  };
}
