// Onion skin: the key poses before and after the current frame drawn as ghosts
// (viewport.setGhosts), so the animator sees where the motion comes from and goes to.
import { poseToQ } from '../docmodel.js';

export class Onion {
  constructor(anim, viewport) {
    this.anim = anim;
    this.store = anim.store;
    this.viewport = viewport;
    this.ghosts = [];
    this.store.on('frame', () => this.refresh(false));
    this.store.on('doc', () => this.refresh(true));
    this.store.on('settings', () => this.refresh(false));
  }
  get on() {
    return this.store.settings.onion === true;
  }
  set on(v) {
    this.store.setSettings({ onion: !!v });
  }
  /** The frames of the neighbouring keys (the one before and the one after the frame). */
  neighbours(frame = this.store.ui.frame) {
    let before = null,
      after = null;
    for (const k of this.store.doc.keys) {
      if (k.frame < frame && (before === null || k.frame > before.frame)) before = k;
      if (k.frame > frame && (after === null || k.frame < after.frame)) after = k;
    }
    return [before, after].filter(Boolean);
  }
  /** Sets the ghosts when the neighbouring keys changed (always when force). */
  refresh(force = true) {
    const keys = this.on ? this.neighbours() : [];
    const frames = keys.map((k) => k.frame).join(',');
    if (!force && frames === this._frames) return;
    this._frames = frames;
    const fig = this.store.figure;
    this.ghosts = keys.map((k) => ({ frame: k.frame, q: poseToQ(fig, k.pose) }));
    this.viewport?.setGhosts?.(
      this.ghosts.map((g) => g.q),
      0.3,
    );
    this.viewport?.requestRender?.();
  }
}
