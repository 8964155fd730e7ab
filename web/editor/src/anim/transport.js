// VCR transport in #anim-toolbar: to start, step back, play / pause (Space), step forward,
// to end, loop; the current frame; the option to keep the locks at in-between frames; and
// the animation menus (sequences, animate, export).
import { h } from './dom.js';

export class Menus {
  constructor(root) {
    this.root = root;
    document.addEventListener('pointerdown', (e) => {
      for (const m of root.querySelectorAll('.anim-menu:not([hidden])')) if (!m.parentElement.contains(e.target)) m.hidden = true;
    });
  }
  /** A menu button; fill(panel) is called each time it opens. */
  add(label, id, title, fill) {
    const panel = h('div', { class: 'anim-menu', id: `${id}-menu`, hidden: true });
    const button = h(
      'button',
      {
        id,
        title,
        onclick: (e) => {
          e.currentTarget.blur();
          const open = panel.hidden;
          for (const m of this.root.querySelectorAll('.anim-menu')) m.hidden = true;
          if (open) {
            panel.replaceChildren();
            fill(panel);
            panel.hidden = false;
          }
        },
      },
      `${label} \u25BE`,
    );
    this.root.append(h('span', { class: 'anim-menu-wrap' }, button, panel));
    return panel;
  }
}

// VCR icons as SVG paths (fonts differ in which media symbols they have)
const ICONS = {
  start: 'M3 2h2v12H3zM14 2v12L6 8z',
  back: 'M2 2h2v12H2zM13 2v12L5 8z',
  play: 'M4 2v12l10-6z',
  pause: 'M3 2h4v12H3zM9 2h4v12H9z',
  forward: 'M12 2h2v12h-2zM3 2v12l8-6z',
  end: 'M11 2h2v12h-2zM2 2v12l8-6z',
  loop: 'M4 5h7V3l3 3-3 3V7H5v3H3V6a1 1 0 0 1 1-1zm8 6H5v2l-3-3 3-3v2h6V6h2v4a1 1 0 0 1-1 1z',
};
function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[name]);
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}

export class Transport {
  constructor(anim, root, menuRoot) {
    this.anim = anim;
    const s = anim.store,
      p = anim.player,
      act = (n) => () => anim.run(n);
    // a clicked button gives the focus back, so Space plays and pauses (rather than pressing it again)
    const b = (name, title, action, id) =>
      h(
        'button',
        {
          class: 'vcr',
          title,
          id,
          onclick: (e) => {
            e.currentTarget.blur();
            act(action)();
          },
        },
        icon(name),
      );
    this.playButton = b('play', 'Play / pause (Space)', 'togglePlay', 'vcr-play');
    this.loop = h(
      'button',
      {
        class: 'vcr toggle',
        id: 'vcr-loop',
        title: 'Loop',
        onclick: (e) => {
          e.currentTarget.blur();
          p.loop = !p.loop;
          this.update();
        },
      },
      icon('loop'),
    );
    this.frameInput = h('input', {
      id: 'vcr-frame',
      type: 'number',
      step: '1',
      title: 'Current frame',
      onchange: (e) => {
        const f = Number(e.target.value);
        if (Number.isFinite(f)) p.show(f);
      },
    });
    this.keep = h('input', {
      type: 'checkbox',
      id: 'vcr-keep',
      onchange: (e) => {
        p.keepConstraints = e.target.checked;
        e.target.blur();
      },
    });
    const group = h(
      'div',
      { class: 'group anim-transport' },
      b('start', 'To the first key', 'toStart', 'vcr-start'),
      b('back', 'Step back a frame', 'stepBack', 'vcr-back'),
      this.playButton,
      b('forward', 'Step forward a frame', 'stepForward', 'vcr-forward'),
      b('end', 'To the last key', 'toEnd', 'vcr-end'),
      this.loop,
      h('label', { class: 'vcr-frame' }, this.frameInput),
      (this.extent = h('span', { class: 'vcr-extent', id: 'vcr-extent' })),
      h(
        'label',
        {
          class: 'vcr-keep',
          title:
            'Keep the locks at in-between frames: each frame is interpolated, then the locks active there are satisfied again (Welman 6.3, Fig. 6.5)',
        },
        this.keep,
        'Keep locks',
      ),
    );
    root.append(group);
    this.menus = new Menus(h('div', { class: 'anim-menus' }));
    (menuRoot ?? root).append(this.menus.root);
    this.menus.add('Export', 'export', 'Export the sequence (baked, locks kept) as BVH or glTF', (panel) => {
      panel.append(
        h(
          'button',
          {
            id: 'export-bvh',
            onclick: () => {
              panel.hidden = true;
              anim.run('exportBVH');
            },
          },
          'BVH motion (.bvh)',
        ),
        h(
          'button',
          {
            id: 'export-glb',
            onclick: () => {
              panel.hidden = true;
              anim.run('exportGLB');
            },
          },
          'glTF binary (.glb)',
        ),
      );
    });
    this.menus.add('Interpolation', 'interp', 'How the in-betweens are interpolated: the sequence, and the selected joint', (panel) =>
      this.fillInterpolation(panel),
    );
    for (const e of ['frame', 'doc', 'settings', 'playing']) s.on(e, () => this.update());
    this.update();
  }
  /**
   * The sequence document's `interpolation` (docs/sequence.md): the rotation and translation
   * modes of the sequence, and of the selected joint (its own, or the sequence's). Each
   * change is one undo step, and the current frame is shown again under it.
   */
  fillInterpolation(panel) {
    const anim = this.anim,
      s = anim.store,
      fig = s.figure;
    // splines in the angle are for hinges only, so not a sequence's default
    const ROT = ['slerp', 'squad', 'linear', 'constant'],
      TRANS = ['linear', 'catmull-rom', 'kb', 'constant'];
    const interp = () => s.doc.interpolation ?? {};
    const select = (id, modes, value, onchange, inherit) => {
      const el = h(
        'select',
        {
          id,
          onchange: (e) => {
            onchange(e.target.value);
            e.target.blur();
          },
        },
        ...(inherit ? [h('option', { value: '' }, `as the sequence (${inherit})`)] : []),
        ...modes.map((m) => h('option', { value: m }, m)),
      );
      el.value = value ?? '';
      return el;
    };
    const set = (label, edit) => {
      s.apply(label, (doc) => {
        doc.interpolation = structuredClone(doc.interpolation ?? {});
        edit(doc.interpolation);
        const i = doc.interpolation;
        if (i.joints && !Object.keys(i.joints).length) delete i.joints;
        if (!Object.keys(i).length) delete doc.interpolation;
      });
      anim.player.show(s.ui.frame);
    };
    const seqRot = interp().rotation ?? 'slerp',
      seqTrans = interp().translation ?? 'linear';
    panel.append(
      h(
        'div',
        { class: 'anim-lock' },
        h('div', { class: 'anim-title' }, 'Sequence'),
        h(
          'label',
          {},
          'rotation ',
          select('interp-rotation', ROT, seqRot, (v) =>
            set('interpolation', (i) => {
              i.rotation = v;
            }),
          ),
        ),
        h(
          'label',
          {},
          ' translation ',
          select('interp-translation', TRANS, seqTrans, (v) =>
            set('interpolation', (i) => {
              i.translation = v;
            }),
          ),
        ),
      ),
    );
    const j = s.ui.selection.joint;
    if (j === null) {
      panel.append(h('div', { class: 'anim-note' }, 'Select a joint to set its own.'));
      return;
    }
    // a compound joint's run takes the mode of its first joint (docs/sequence.md)
    const site = anim.viewport.sites[anim.viewport.siteOf[j]],
      name = fig.jointNames[site.joints[0]];
    const own = interp().joints?.[name] ?? {};
    const setJoint = (key) => (v) =>
      set(`interpolation of ${name}`, (i) => {
        i.joints = { ...(i.joints ?? {}) };
        const m = { ...(i.joints[name] ?? {}) };
        if (v) m[key] = v;
        else delete m[key];
        if (Object.keys(m).length) i.joints[name] = m;
        else delete i.joints[name];
      });
    panel.append(
      h(
        'div',
        { class: 'anim-lock' },
        h('div', { class: 'anim-title' }, `Joint ${name.replace(/\.\d+$/, '')}`),
        h(
          'label',
          {},
          'rotation ',
          select(
            'interp-joint-rotation',
            site.joints.every((x) => fig.joints[x].type === 'hinge') ? [...ROT, 'catmull-rom', 'kb'] : ROT,
            own.rotation,
            setJoint('rotation'),
            seqRot,
          ),
        ),
        h('label', {}, ' translation ', select('interp-joint-translation', TRANS, own.translation, setJoint('translation'), seqTrans)),
      ),
    );
  }

  update() {
    const s = this.anim.store,
      p = this.anim.player;
    if (this._shownPlaying !== p.playing) this.playButton.replaceChildren(icon(p.playing ? 'pause' : 'play'));
    this._shownPlaying = p.playing;
    this.playButton.classList.toggle('on', p.playing);
    this.loop.classList.toggle('on', p.loop);
    if (document.activeElement !== this.frameInput) this.frameInput.value = String(Math.round(s.ui.frame * 100) / 100);
    const [lo, hi] = p.range();
    this.extent.textContent = `${lo}\u2013${hi} \u00B7 ${p.fps()} fps`;
    this.keep.checked = p.keepConstraints;
  }
}
