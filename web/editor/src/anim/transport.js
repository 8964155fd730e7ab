// VCR transport in #anim-toolbar: to start, step back, play / pause (Space), step forward,
// to end, loop; the current frame; the option to keep the locks at in-between frames; and
// the animation menus (sequences, animate, export).
import { h } from './dom.js';

export class Menus {
  constructor(root) {
    this.root = root;
    document.addEventListener('pointerdown', (e) => {
      for (const m of root.querySelectorAll('.anim-menu:not([hidden])'))
        if (!m.parentElement.contains(e.target)) m.hidden = true;
    });
  }
  /** A menu button; fill(panel) is called each time it opens. */
  add(label, id, title, fill) {
    const panel = h('div', { class: 'anim-menu', id: `${id}-menu`, hidden: true });
    const button = h('button', { id, title, onclick: () => {
      const open = panel.hidden;
      for (const m of this.root.querySelectorAll('.anim-menu')) m.hidden = true;
      if (open) {
        panel.replaceChildren();
        fill(panel);
        panel.hidden = false;
      }
    } }, `${label} \u25BE`);
    this.root.append(h('span', { class: 'anim-menu-wrap' }, button, panel));
    return panel;
  }
}

export class Transport {
  constructor(anim, root) {
    this.anim = anim;
    const s = anim.store, p = anim.player, act = (n) => () => anim.run(n);
    const b = (text, title, name, id) => h('button', { class: 'vcr', title, id, onclick: act(name) }, text);
    this.playButton = b('\u25B6', 'Play / pause (Space)', 'togglePlay', 'vcr-play');
    this.loop = h('button', { class: 'vcr toggle', id: 'vcr-loop', title: 'Loop', onclick: () => {
      p.loop = !p.loop;
      this.update();
    } }, '\u21BB');
    this.frameInput = h('input', { id: 'vcr-frame', type: 'number', step: '1', title: 'Current frame',
      onchange: (e) => { const f = Number(e.target.value); if (Number.isFinite(f)) p.show(f); } });
    this.extent = h('span', { class: 'vcr-extent', id: 'vcr-extent' });
    this.keep = h('input', { type: 'checkbox', id: 'vcr-keep', onchange: (e) => { p.keepConstraints = e.target.checked; } });
    const group = h('div', { class: 'group anim-transport' },
      b('\u23EE', 'To the first key', 'toStart', 'vcr-start'),
      b('\u23F4', 'Step back a frame', 'stepBack', 'vcr-back'),
      this.playButton,
      b('\u23F5', 'Step forward a frame', 'stepForward', 'vcr-forward'),
      b('\u23ED', 'To the last key', 'toEnd', 'vcr-end'),
      this.loop,
      h('label', { class: 'vcr-frame' }, 'Frame', this.frameInput), this.extent,
      h('label', { class: 'vcr-keep', title: 'Keep the locks at in-between frames: each frame is interpolated, then the locks active there are satisfied again (Welman 6.3, Fig. 6.5)' },
        this.keep, 'Keep locks'));
    this.menus = new Menus(h('div', { class: 'group anim-menus' }));
    root.append(group, this.menus.root);
    this.menus.add('Export', 'export', 'Export the sequence (baked, locks kept) as BVH or glTF', (panel) => {
      panel.append(
        h('button', { id: 'export-bvh', onclick: () => { panel.hidden = true; anim.run('exportBVH'); } }, 'BVH motion (.bvh)'),
        h('button', { id: 'export-glb', onclick: () => { panel.hidden = true; anim.run('exportGLB'); } }, 'glTF binary (.glb)'));
    });
    for (const e of ['frame', 'doc', 'settings', 'playing']) s.on(e, () => this.update());
    this.update();
  }
  update() {
    const s = this.anim.store, p = this.anim.player;
    this.playButton.textContent = p.playing ? '\u23F8' : '\u25B6';
    this.playButton.classList.toggle('on', p.playing);
    this.loop.classList.toggle('on', p.loop);
    if (document.activeElement !== this.frameInput) this.frameInput.value = String(Math.round(s.ui.frame * 100) / 100);
    const [lo, hi] = p.range();
    this.extent.textContent = `${lo}\u2013${hi} @ ${p.fps()} fps`;
    this.keep.checked = p.keepConstraints;
  }
}
