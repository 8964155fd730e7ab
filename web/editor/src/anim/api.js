// window.marionette's animation members (docs/editor.md, "Animating"): what a test or a script needs to
// drive the timeline, playback and the animation tools without the mouse.
export function installApi(anim) {
  const s = anim.store,
    p = anim.player,
    act =
      (name) =>
      (...args) =>
        anim.actions[name](...args);
  const api = (window.marionette ??= {});
  Object.assign(api, {
    play: () => p.play(),
    pause: () => p.pause(),
    playing: () => p.playing,
    /** Shows a frame (the locks kept when the option is on). */
    setFrame: (f) => p.show(f),
    frame: () => s.ui.frame,
    step: (n = 1) => p.step(n),
    toStart: () => p.toStart(),
    toEnd: () => p.toEnd(),
    setLoop: (on) => {
      p.loop = !!on;
      anim.transport?.update();
    },
    /** The option "keep the locks at in-between frames". */
    keepConstraints: (on) => {
      if (on !== undefined) p.keepConstraints = on;
      return p.keepConstraints;
    },
    insertKey: act('insertKey'),
    deleteSelectedKeys: act('deleteSelectedKeys'),
    selectKeys: (frames) => anim.selectKeys(frames),
    selectRange: (lo, hi) => anim.selectRange(lo, hi),
    selection: () => structuredClone(s.ui.selection),
    copyRange: act('copyRange'),
    cutRange: act('cutRange'),
    pasteRange: act('pasteRange'),
    insertRange: act('insertRange'),
    deleteRange: act('deleteRange'),
    stretchRange: act('stretchRange'),
    slideRange: act('slideRange'),
    copyPose: act('copyPose'),
    pastePose: act('pastePose'),
    mirrorPose: act('mirrorPose'),
    /** Onion skin on or off; returns the ghosts shown: [{ frame }]. */
    onion: (on) => {
      if (on !== undefined) anim.onion.on = on;
      anim.onion.refresh(true);
      return anim.onion.ghosts.map((g) => ({ frame: g.frame }));
    },
    /** The graph: opens its panel, picks a variable (label), returns what was drawn. */
    graph: (variable) => {
      const d = document.getElementById('graph-panel');
      if (d && !d.open) d.open = true;
      if (variable) {
        anim.graph.picked = variable;
        anim.graph.pickedWith = anim.graph.selectedJoint();
      }
      anim.graph.draw();
      return anim.graph.drawn ?? null;
    },
    /** Page pixels of the graph's key k and of the tangent handles shown, with the scales:
     * { key: {x, y}, left, right, keyIndex, pxPerFrame, pxPerUnit }. */
    graphPoints: (k) => {
      const g = anim.graph,
        l = g.last;
      return { ...g.screenPoints(k), pxPerFrame: l ? l.w / (l.b - l.a) : null, pxPerUnit: l ? l.hh / (l.ymax - l.ymin) : null };
    },
    setLockFrames: act('setLockFrames'),
    keyLockTarget: act('keyLockTarget'),
    clearLockTargets: act('clearLockTargets'),
    addBalance: act('addBalance'),
    removeBalance: act('removeBalance'),
    exportSequence: (format) => anim.actions[format === 'bvh' ? 'exportBVH' : 'exportGLB'](),
    openFigureFile: act('openFigureFile'),
    /** Playback figures: solver ms of the constrained frames shown, the last solve. */
    animStats: () => ({
      solveMs: [...p.solveMs],
      playing: p.playing,
      frame: s.ui.frame,
      lastSolve: p.lastResult,
      keepConstraints: p.keepConstraints,
      status: anim.lastStatus ?? '',
    }),
    resetAnimStats: () => {
      p.solveMs.length = 0;
    },
    /** The timeline's x (CSS pixels in #tl-canvas) of a frame. */
    timelineX: (f) => anim.timeline.xOf(f),
    /** The contact rows of the timeline: [{ joint, y, heel, toe }] (y: CSS pixels). */
    contactRows: () =>
      (s.doc.contacts ?? []).map((t, i) => ({
        joint: t.joint,
        y: anim.timeline.contactRowY(i),
        heel: structuredClone(t.heel ?? []),
        toe: structuredClone(t.toe ?? []),
      })),
    /** Turns a foot's heel or toe contact at a frame on or off, as a click on its row does. */
    toggleContact: (joint, part, frame) => {
      const i = (s.doc.contacts ?? []).findIndex((t) => t.joint === joint);
      return i >= 0 && anim.timeline.toggleContact(i, part, frame);
    },
    /** The flipbook menu's sequences once opened: [{ path, keys, shown }]. */
    flipbooks: () =>
      anim.flipbook?.books.map((b) => ({ path: b.path, keys: b.keys, shown: b.shown ?? null, error: b.error ?? null })) ?? [],
  });
}
