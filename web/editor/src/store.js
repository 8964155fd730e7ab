// The editor's state: the figure being posed, the sequence document, the settings
// (editor.json), undo and redo, and the autosave to the server (docs/editor.md "Saving").
// Every change goes through apply() (the document) or commitPose() (the pose): each pushes an
// undo snapshot and is written to the server at once with the version it was read at
// (If-Match), so a second tab editing the same project gets a conflict, never an overwrite.
import { poseToQ, qToPose, newSequenceDoc, scaleFigureDoc, estimateMasses } from './docmodel.js';
import { keysSequence } from './anim/sequence.js';
import { beside, client, unquote } from './server.js';
import { isMulti, openFigures, splitDoc } from './figures.js';
import { changesRoot, restoreAcrossRoot } from './reroot.js';

const UNDO_LIMIT = 200;

export class Store {
  /** m: the Marionette module (load()); fetchFn: fetch, replaceable for tests. */
  constructor(m, fetchFn = globalThis.fetch.bind(globalThis)) {
    this.m = m;
    this.server = client(fetchFn); // every /api call (server.js)
    this.figure = null; // the wasm Figure being posed
    this.figureDoc = null; // the figure document of /api/figure
    this.doc = null; // the sequence document (docs/sequence.md), plain JSON
    this.settings = {}; // editor.json
    this.project = null; // /api/project
    this.sequencePath = 'sequence.json';
    this.ui = { frame: 0, selection: { joint: null, joints: [], keys: [], lock: null }, playing: false };
    this.saveStatus = 'saved';
    this.saveError = '';
    this.actions = {};
    this._listeners = new Map();
    this._undo = [];
    this._redo = [];
    this._versions = new Map(); // path -> version ("" : to be created)
    this._dirty = new Set(); // paths with changes not yet acknowledged
    this._inflight = new Map(); // path -> promise of the running PUT
    this._written = new Map(); // path -> the content the server has (no PUT of the same again)
    this.retry = { count: 0, at: 0, timer: 0 }; // the retry after a failed save (back-off)
    this._seq = null; // the wasm Sequence of doc (rebuilt lazily)
    this._seqFigure = null;
    this.multi = null; // a document of several figures: what saving it back needs (figures.js)
    this._settingsTimer = 0;
    this.actions.undo = () => this.undo();
    this.actions.redo = () => this.redo();
    this.actions.save = () => this.save();
  }

  // ---- events ----
  on(event, cb) {
    if (!this._listeners.has(event)) this._listeners.set(event, new Set());
    this._listeners.get(event).add(cb);
    return () => this._listeners.get(event).delete(cb);
  }
  emit(event, detail) {
    for (const cb of this._listeners.get(event) ?? []) {
      try {
        cb(detail);
      } catch (e) {
        console.error(e);
      }
    }
  }

  // ---- loading ----
  /** The server's answer to an /api address (server.js), for the page's console and tests. */
  _json(url, options) {
    return this.server.call(url, options);
  }

  async _readFile(path) {
    const r = await this.server.file(path);
    if (r.status === 404) return null;
    if (!r.ok) throw new Error(`${path}: ${r.body?.error ?? `HTTP ${r.status}`}`);
    if (r.body === null) throw new Error(`${path}: not JSON`);
    this._versions.set(path, unquote(r.etag));
    return r.body;
  }

  /** Reads the project, its settings, sequence and figure. */
  async open() {
    const p = await this.server.project();
    if (!p.ok) throw new Error(`/api/project: ${p.body?.error ?? `HTTP ${p.status}`}`);
    this.project = p.body;
    this.settings = (await this._readFile('editor.json')) ?? {};
    if (typeof this.settings !== 'object' || Array.isArray(this.settings)) this.settings = {};
    if (!this._versions.has('editor.json')) this._versions.set('editor.json', '');
    this.sequencePath = this.settings.sequence ?? this.project.sequence ?? 'sequence.json';
    let doc = await this._readFile(this.sequencePath);
    if (!doc) {
      doc = newSequenceDoc(this.project.figure ?? 'stickman');
      this._versions.set(this.sequencePath, '');
    }
    this.multi = null;
    if (isMulti(doc)) {
      await this._loadFigures(doc);
    } else {
      doc.handles ??= [];
      doc.constraints ??= [];
      this.doc = doc;
      await this._loadFigure(doc.figure);
    }
    const frame = Number.isFinite(this.settings.frame) ? this.settings.frame : (this.doc.keys[0]?.frame ?? 0);
    this.ui.frame = frame;
    let q = this.poseAt(frame);
    if (this.settings.pose && this.settings.pose.frame === frame && this.keyIndexAt(frame) < 0) {
      try {
        q = poseToQ(this.figure, this.settings.pose.pose);
      } catch (e) {
        console.warn(`editor.json pose: ${e.message}`);
      }
    }
    this.setPose(q);
    // what the server has, as this page would write it: an unchanged file is not written
    for (const path of [this.sequencePath, 'editor.json']) if (this._versions.get(path)) this._written.set(path, this._content(path));
    if (!this._versions.get(this.sequencePath)) this._markDirty(this.sequencePath);
    this.emit('doc', { label: 'open' });
    this.emit('frame', frame);
    this.emit('settings', this.settings);
  }

  async _loadFigure(path) {
    const r = await this.server.figure(beside(this.sequencePath, path), this.doc?.root); // re-rooted when the document says
    if (r.ok && r.body) {
      this.figureDoc = scaleFigureDoc(r.body, this.doc?.scale ?? 1);
      // masses for a figure without them (its centre of mass: balance and its overlay)
      this.figure = this.m.figureFromDocument(estimateMasses(this.figureDoc));
      this._seqFigure = this.m.figureFromDocument(this.figureDoc);
    } else if (path === 'stickman') {
      this.figure = this.m.stickman();
      this._seqFigure = this.m.stickman();
      this.figureDoc = null;
    } else {
      throw new Error(`${path}: ${r.body?.error ?? `HTTP ${r.status}`}`);
    }
    this.figure.fk();
  }

  /** A document of several figures: the page poses them joined into one (figures.js). */
  async _loadFigures(doc) {
    const figureDoc = async (path, root) => {
      const r = await this.server.figure(beside(this.sequencePath, path), root);
      if (!r.ok || !r.body) throw new Error(`${path}: ${r.body?.error ?? `HTTP ${r.status}`}`);
      return r.body;
    };
    let joined;
    try {
      joined = await openFigures(this.m, doc, figureDoc);
    } catch (e) {
      throw new Error(`${this.sequencePath}: ${e.message}`);
    }
    this.doc = joined.doc;
    this.multi = joined.multi;
    this.figureDoc = joined.figureDoc;
    this.figure = this.m.figureFromDocument(estimateMasses(this.figureDoc));
    this._seqFigure = this.m.figureFromDocument(this.figureDoc);
    this.figure.fk();
  }

  // ---- the document and undo ----
  // the document, the pose and the locks' contributing joints (editor.json `locks`)
  _snapshot(label, q) {
    return { label, doc: JSON.stringify(this.doc), q: Array.from(q ?? this.figure.q), locks: JSON.stringify(this.settings.locks ?? {}) };
  }
  _push(entry) {
    this._undo.push(entry);
    if (this._undo.length > UNDO_LIMIT) this._undo.shift();
    this._redo.length = 0;
  }

  /** mutate(doc) edits the document in place: an undo step, an autosave, a 'doc' event. */
  apply(label, mutate) {
    const entry = this._snapshot(label);
    const result = mutate(this.doc);
    this._push(entry);
    this._docChanged(label);
    return result;
  }

  /**
   * The pose was edited (a drag, a slider, a solve): one undo step back to qBefore. At a frame
   * with a key the key takes the pose (saved in the sequence); elsewhere, with auto-key on, a
   * key is made there, else the pose is the unkeyed pose of editor.json.
   */
  commitPose(label, qBefore) {
    const entry = this._snapshot(label, qBefore);
    let k = this.keyIndexAt(this.ui.frame);
    this._push(entry);
    // auto-key (editor.json `autoKey`): a pose edit at a frame without a key makes one there
    if (k < 0 && this.settings.autoKey && Number.isInteger(this.ui.frame)) {
      this.doc.keys.push({ frame: this.ui.frame, pose: {} });
      this.doc.keys.sort((a, b) => a.frame - b.frame);
      k = this.keyIndexAt(this.ui.frame);
      delete this.settings.pose;
      this._markDirty('editor.json');
    }
    if (k >= 0) {
      this.doc.keys[k].pose = qToPose(this.figure, this.figure.q);
      this._docChanged(label);
    } else {
      this._saveUnkeyedPose();
    }
  }

  /**
   * An edit already made live (a lock's target dragged or moved by a slider, the figure
   * following): one undo step back to docBefore (its JSON) and qBefore. The pose goes into
   * the key at this frame, else into editor.json's unkeyed pose, as commitPose does.
   */
  commitEdit(label, docBefore, qBefore) {
    this._push({ label, doc: docBefore, q: Array.from(qBefore), locks: JSON.stringify(this.settings.locks ?? {}) });
    const k = this.keyIndexAt(this.ui.frame);
    if (k >= 0) this.doc.keys[k].pose = qToPose(this.figure, this.figure.q);
    else this._saveUnkeyedPose();
    this._docChanged(label);
  }

  /** Settings that are part of the document's meaning (a lock's contributing joints):
   * merged like setSettings, and one undo step. */
  applySettings(label, patch) {
    this._push(this._snapshot(label));
    this.setSettings(patch);
    this.emit('doc', { label });
  }

  _docChanged(label) {
    this._invalidateSequence();
    this._markDirty(this.sequencePath);
    this.emit('doc', { label });
  }

  _restore(entry) {
    const back = this._snapshot(entry.label);
    // a step to another root (Make root): the page loads again on that figure (reroot.js)
    if (changesRoot(this, entry)) {
      restoreAcrossRoot(this, entry);
      return back;
    }
    const docChanged = back.doc !== entry.doc;
    this.doc = JSON.parse(entry.doc);
    if (entry.locks !== undefined && entry.locks !== back.locks) {
      this.settings.locks = JSON.parse(entry.locks);
      this._scheduleSettings();
      this.emit('settings', this.settings);
    }
    this.setPose(Float64Array.from(entry.q));
    if (docChanged) this._docChanged(entry.label);
    this._saveUnkeyedPose();
    return back;
  }
  canUndo() {
    return this._undo.length > 0;
  }
  canRedo() {
    return this._redo.length > 0;
  }
  undoLabel() {
    return this._undo.at(-1)?.label ?? '';
  }
  redoLabel() {
    return this._redo.at(-1)?.label ?? '';
  }
  undo() {
    if (!this._undo.length) return false;
    this._redo.push(this._restore(this._undo.pop()));
    return true;
  }
  redo() {
    if (!this._redo.length) return false;
    this._undo.push(this._restore(this._redo.pop()));
    return true;
  }

  // ---- frames and poses ----
  keyIndexAt(frame) {
    return this.doc.keys.findIndex((k) => k.frame === frame);
  }

  _invalidateSequence() {
    if (this._seq) this._seq.dispose();
    this._seq = null;
  }
  _sequence() {
    if (this._seq) return this._seq;
    // the keys read by the module's reader (anim/sequence.js), layers blended over them
    this._seq = keysSequence(this.m, this._seqFigure, this.doc);
    return this._seq;
  }

  /** The document's sampled pose at a frame (interpolated keys) as a new Float64Array. */
  poseAt(frame) {
    if (!this.doc.keys.length) return new Float64Array(this.figure.restQ);
    return new Float64Array(this._sequence().sampleBlendQ(frame));
  }

  /** Sets the figure's state, runs forward kinematics, emits 'pose'. */
  setPose(q) {
    this.figure.setQ(q).fk();
    this.emit('pose', this.figure.q);
  }

  setFrame(frame) {
    if (!Number.isFinite(frame)) return;
    this.ui.frame = frame;
    this.setPose(this.poseAt(frame));
    // playing shows frames, it changes nothing: the frame is remembered when it stops
    if (!this.ui.playing) this.persistFrame();
    this.emit('frame', frame);
  }
  /** editor.json remembers the current frame (an unkeyed pose of another frame is dropped). */
  persistFrame() {
    if (this.settings.frame === this.ui.frame && !this.settings.pose) return;
    this.settings.frame = this.ui.frame;
    delete this.settings.pose;
    this._scheduleSettings();
  }

  select(joint) {
    this.ui.selection.joint = joint;
    this.ui.selection.joints = [];
    this.emit('selection', this.ui.selection);
  }
  /** Several joints selected (Shift+click, a box): dragged together; `joint` the current one. */
  selectJoints(joints, joint = joints[0] ?? null) {
    this.ui.selection.joints = joints.length > 1 ? [...joints] : [];
    this.ui.selection.joint = joint;
    this.emit('selection', this.ui.selection);
  }
  /** The lock (a constraint's name) edited in the Locks panel; its marker is dragged first. */
  selectLock(name) {
    this.ui.selection.lock = name;
    this.emit('selection', this.ui.selection);
  }

  // ---- settings (editor.json) ----
  /** Merges patch into the settings, saves editor.json shortly, emits 'settings'. */
  setSettings(patch) {
    Object.assign(this.settings, patch);
    this._scheduleSettings();
    this.emit('settings', this.settings);
  }
  _saveUnkeyedPose() {
    if (this.keyIndexAt(this.ui.frame) >= 0) delete this.settings.pose;
    else this.settings.pose = { frame: this.ui.frame, pose: qToPose(this.figure, this.figure.q) };
    this.settings.frame = this.ui.frame;
    this._markDirty('editor.json');
  }
  _scheduleSettings() {
    clearTimeout(this._settingsTimer);
    this._dirty.add('editor.json');
    this._setStatus(this.saveStatus === 'conflict' ? 'conflict' : 'unsaved');
    this._settingsTimer = setTimeout(() => this._flush('editor.json'), 250);
  }

  // ---- saving ----
  _content(path) {
    if (path === 'editor.json') return JSON.stringify(this.settings, null, 2) + '\n';
    if (this.multi) return JSON.stringify(splitDoc(this.doc, this.multi), null, 1) + '\n';
    return JSON.stringify(this.doc, null, 1) + '\n';
  }
  _markDirty(path) {
    this._dirty.add(path);
    if (this.saveStatus !== 'conflict') this._setStatus('unsaved');
    this._flush(path);
  }
  _setStatus(s, error = '') {
    this.saveStatus = s;
    this.saveError = error;
    this.emit('save', { status: s, error });
  }
  _updateStatus() {
    if (this.saveStatus === 'conflict' || this.saveStatus === 'error') return;
    if (this._inflight.size) this._setStatus('saving');
    else this._setStatus(this._dirty.size ? 'unsaved' : 'saved');
  }

  /** Writes one file if it has changes; one PUT per file at a time. */
  _flush(path) {
    if (this.saveStatus === 'conflict') return Promise.resolve();
    if (this._inflight.has(path)) {
      const running = this._inflight.get(path);
      return running.then(() => this._flush(path));
    }
    if (!this._dirty.has(path)) return Promise.resolve();
    this._dirty.delete(path);
    const body = this._content(path);
    // only a change is written: the same content again (a frame shown and left) is not
    if (body === this._written.get(path)) {
      this._updateStatus();
      return Promise.resolve();
    }
    const version = this._versions.get(path) ?? '';
    const run = this.server
      .putFile(path, body, version)
      .then((r) => {
        if (r.ok) {
          this._versions.set(path, r.body.version);
          this._written.set(path, body);
          this.retry.count = 0;
        } else if (r.status === 409 || r.status === 412) {
          this._dirty.add(path);
          this._setStatus('conflict', `${path} was changed elsewhere (another tab or program)`);
        } else {
          this._dirty.add(path);
          this._failed(`${path}: ${r.body?.error ?? `HTTP ${r.status}`}`);
        }
      })
      .catch((e) => {
        this._dirty.add(path);
        this._failed(`${path}: ${e.message}`);
      })
      .finally(() => {
        this._inflight.delete(path);
        this._updateStatus();
      });
    this._inflight.set(path, run);
    this._updateStatus();
    return run;
  }

  /**
   * A save failed (the server down, a write refused): 'error', and a retry of every changed
   * file after a back-off of 1, 2, 4 ... up to 30 s (`retry.at`: when, for the indicator), so
   * the page reaches Saved by itself when the server is back.
   */
  _failed(message) {
    clearTimeout(this.retry.timer);
    const delay = Math.min(30000, 1000 * 2 ** this.retry.count);
    this.retry.count++;
    this.retry.at = Date.now() + delay;
    this.retry.timer = setTimeout(() => {
      this.retry.at = 0;
      if (this.saveStatus !== 'error') return;
      this.save();
    }, delay);
    this._setStatus('error', message);
  }

  /** Saves every changed file now (Ctrl+S); resolves when the server has answered. */
  async save() {
    clearTimeout(this._settingsTimer);
    clearTimeout(this.retry.timer);
    this.retry.at = 0;
    if (this.saveStatus === 'error') this.saveStatus = 'unsaved';
    await Promise.all([this.sequencePath, 'editor.json'].map((p) => this._flush(p)));
    // a change made while the first PUT ran
    await Promise.all([this.sequencePath, 'editor.json'].map((p) => this._flush(p)));
    this._updateStatus();
    return this.saveStatus;
  }

  /** After a conflict: drops local changes and reads everything again. */
  async reload() {
    this._dirty.clear();
    this._undo.length = 0;
    this._redo.length = 0;
    this._invalidateSequence();
    this.saveStatus = 'saved';
    await this.open();
    this._setStatus('saved');
  }

  /** After a conflict: writes ours over theirs (explicit, never silent). */
  async overwrite() {
    for (const path of [this.sequencePath, 'editor.json']) {
      const r = await this.server.file(path);
      if (r.ok) this._versions.set(path, unquote(r.etag));
      this._dirty.add(path);
    }
    this.saveStatus = 'unsaved';
    return this.save();
  }
}
