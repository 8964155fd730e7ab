// The "Layers" menu: the sequence's layers (docs/sequence.md, "Layers"; layers.h) as a list,
// each with its mode, its weight keys and the weight at the current frame, and the joints its
// mask covers (the module's sequences read the layers with the document: anim/sequence.js).
import { h } from './dom.js';

/** A layer's weight at a frame from its keys: eased between keys, constant outside (as
 * layers.c weighs it; shown, not used for the blend, which the module computes). */
function weightAt(weights, f) {
  if (!weights || !weights.length) return 1;
  if (f <= weights[0][0]) return weights[0][1];
  const last = weights.at(-1);
  if (f >= last[0]) return last[1];
  let i = 0;
  while (weights[i + 1][0] <= f) i++;
  const [f0, w0] = weights[i],
    [f1, w1] = weights[i + 1];
  const u = (f - f0) / (f1 - f0);
  return w0 + u * u * (3 - 2 * u) * (w1 - w0);
}

/** The joints a mask covers with their weights: an array names branches (each joint with its
 * descendants), an object gives weights. */
function maskRows(mask, figure) {
  if (mask === undefined) return null;
  if (!Array.isArray(mask)) return Object.entries(mask).map(([name, w]) => [name, w]);
  const names = figure?.jointNames ?? [];
  const rows = [];
  for (const name of mask) {
    const j = names.indexOf(name);
    if (j < 0) {
      rows.push([name, 1]);
      continue;
    }
    for (let k = j; k < names.length; k++) {
      let p = k;
      while (p >= 0 && p !== j) p = figure.joints[p].parent;
      if (p === j) rows.push([names[k], 1]);
    }
  }
  return rows;
}

export class LayersPanel {
  constructor(anim, menus) {
    this.anim = anim;
    this.store = anim.store;
    this.panel = menus.add('Layers', 'layers', 'Layers over the keys: modes, weights and masks', (panel) => this.fill(panel));
    const refill = () => {
      if (this.panel.hidden) return;
      this.panel.replaceChildren();
      this.fill(this.panel);
    };
    this.store.on('doc', refill);
    this.store.on('frame', () => {
      if (!this.anim.player.playing) refill();
    });
  }

  fill(panel) {
    const doc = this.store.doc,
      f = this.anim.frame(),
      layers = doc.layers ?? [];
    const figure = this.store.figure;
    panel.style.minWidth = '22em';
    if (!layers.length) {
      panel.append(h('div', { class: 'anim-dim' }, 'No layers: add them to the sequence document ("layers", docs/sequence.md).'));
      return;
    }
    layers.forEach((layer, i) => {
      const weights = layer.weights ?? [];
      const rows = maskRows(layer.mask, figure);
      const w = weightAt(weights, f);
      panel.append(
        h(
          'div',
          { class: 'anim-layer', 'data-index': String(i), style: 'margin-bottom: 0.5em' },
          h(
            'div',
            { class: 'anim-lock-name' },
            layer.name ?? `layer ${i + 1}`,
            h('span', { class: 'anim-dim' }, ` ${layer.mode ?? 'override'}, ${layer.keys?.length ?? 0} keys`),
          ),
          h(
            'div',
            { class: 'anim-layer-weight' },
            `weight ${w.toFixed(2)} at frame ${f}`,
            h('span', { class: 'anim-dim' }, weights.length ? ` (keys ${weights.map(([k, v]) => `${v}@${k}`).join(' ')})` : ' (always 1)'),
          ),
          h(
            'div',
            { class: 'anim-layer-mask' },
            rows ? `mask: ${rows.map(([n, v]) => (v === 1 ? n : `${n} ${v}`)).join(', ')}` : 'mask: every joint',
          ),
          layer.time_warp ? h('div', { class: 'anim-dim' }, `time warp of ${layer.time_warp.length} keys`) : null,
        ),
      );
    });
    if (doc.time_warp) panel.append(h('div', { class: 'anim-row anim-dim' }, `sequence time warp of ${doc.time_warp.length} keys`));
  }
}
