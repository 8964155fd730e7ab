// marionette for JavaScript: the C library compiled to WebAssembly, behind a small API.
// Guide: docs/web.md. Objects that hold module memory (figures, constraint systems, rigs,
// fitters) are freed by dispose(); a bad argument throws an Error naming the argument.

const IK_METHODS = ['lm', 'dls', 'pinv', 'jt', 'ccd', 'fabrik', 'analytic', 'altjac'];
const CSOLVERS = ['lagrange', 'ccd', 'dls'];
const JOINT_TYPES = ['fixed', 'hinge', 'slide', 'ball', 'free'];
const EULER = ['xyz', 'xzy', 'yxz', 'yzx', 'zxy', 'zyx'];
const HANDLE_TYPES = ['point', 'orientation', 'com'];
const CONSTRAINT_TYPES = ['pin', 'plane', 'line', 'orient', 'equal', 'balance'];
const CTRL_KINDS = ['point', 'bone', 'cage'];
const STATUS = ['OK', 'ARG', 'IO', 'PARSE', 'NOMEM', 'NOTFOUND', 'SINGULAR', 'UNREACHABLE', 'NOCONVERGE', 'UNSUPPORTED'];

function fail(arg, what) {
  throw new Error(`${arg}: ${what}`);
}
function num(v, arg) {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(arg, 'expected a finite number');
  return v;
}
function int(v, arg, lo = -Infinity, hi = Infinity) {
  if (!Number.isInteger(v)) fail(arg, 'expected an integer');
  if (v < lo || v > hi) fail(arg, `out of range (${lo}..${hi})`);
  return v;
}
function vec(v, n, arg) {
  if (v == null || typeof v.length !== 'number' || v.length !== n) fail(arg, `expected ${n} numbers`);
  // the element's name is only made for the message (a pose is checked at every drag frame)
  for (let i = 0; i < n; i++) if (typeof v[i] !== 'number' || !Number.isFinite(v[i])) num(v[i], `${arg}[${i}]`);
  return v;
}
function pick(v, names, arg) {
  const i = names.indexOf(String(v).toLowerCase());
  if (typeof v !== 'string' || i < 0) fail(arg, `expected one of ${names.join(', ')}`);
  return i;
}
function bool(v, arg) {
  if (typeof v !== 'boolean') fail(arg, 'expected true or false');
  return v ? 1 : 0;
}
function object(v, arg) {
  if (v == null || typeof v !== 'object') fail(arg, 'expected an object');
  return v;
}
const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

// A minimal WASI: a clock (the solvers' time budgets), stderr, and nothing else.
function wasi(getMemory) {
  // nanoseconds as two 32-bit halves (no BigInt: the solvers read the clock on every solve)
  let view = null;
  const imports = {
    clock_time_get(id, precision, out) {
      const buf = getMemory().buffer;
      if (!view || view.buffer !== buf) view = new DataView(buf);
      const ns = performance.now() * 1e6,
        hi = Math.floor(ns / 4294967296);
      view.setUint32(out, ns - hi * 4294967296, true);
      view.setUint32(out + 4, hi, true);
      return 0;
    },
    fd_write(fd, iovs, n, written) {
      const view = new DataView(getMemory().buffer);
      let text = '',
        total = 0;
      for (let i = 0; i < n; i++) {
        const p = view.getUint32(iovs + 8 * i, true),
          len = view.getUint32(iovs + 8 * i + 4, true);
        text += utf8d.decode(new Uint8Array(getMemory().buffer, p, len));
        total += len;
      }
      if (fd === 1 || fd === 2) console.error(text.replace(/\n$/, ''));
      view.setUint32(written, total, true);
      return 0;
    },
    fd_close: () => 8,
    fd_seek: () => 8,
    proc_exit(code) {
      throw new Error(`marionette: the module exited (${code})`);
    },
  };
  return new Proxy(imports, { get: (t, k) => (k in t ? t[k] : () => 52) });
}

async function wasmBytes(source) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  const url = source ?? new URL('./marionette.wasm', import.meta.url);
  if (typeof process !== 'undefined' && process.versions?.node && (typeof url === 'string' || url.protocol === 'file:')) {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const r = await fetch(url);
  if (!r.ok) throw new Error(`wasm: cannot fetch ${url} (${r.status})`);
  return r.arrayBuffer();
}

/** Loads the module. options.wasm: the module's bytes or URL (default: next to this file). */
export async function load(options = {}) {
  let memory = null;
  const { instance } = await WebAssembly.instantiate(await wasmBytes(options.wasm), { wasi_snapshot_preview1: wasi(() => memory) });
  memory = instance.exports.memory;
  instance.exports._initialize();
  return new Marionette(instance.exports);
}

class Marionette {
  constructor(x) {
    this._x = x;
    this._scratch = x.mnw_malloc(4096);
  }
  // ---- memory helpers
  _f64(ptr, n) {
    return new Float64Array(this._x.memory.buffer, ptr, n);
  }
  _i32(ptr, n) {
    return new Int32Array(this._x.memory.buffer, ptr, n);
  }
  _str(ptr) {
    const b = new Uint8Array(this._x.memory.buffer);
    let e = ptr;
    while (b[e]) e++;
    return utf8d.decode(b.subarray(ptr, e));
  }
  _cstr(s, arg) {
    if (typeof s !== 'string') fail(arg, 'expected a string');
    const bytes = utf8.encode(s);
    const p = this._x.mnw_malloc(bytes.length + 1);
    if (!p) fail(arg, 'out of memory');
    const b = new Uint8Array(this._x.memory.buffer, p, bytes.length + 1);
    b.set(bytes);
    b[bytes.length] = 0;
    return p;
  }
  _doubles(arr, arg) {
    const p = this._x.mnw_malloc(8 * Math.max(arr.length, 1));
    if (!p) fail(arg, 'out of memory');
    this._f64(p, arr.length).set(arr);
    return p;
  }
  _ints(arr, arg) {
    const p = this._x.mnw_malloc(4 * Math.max(arr.length, 1));
    if (!p) fail(arg, 'out of memory');
    this._i32(p, arr.length).set(arr);
    return p;
  }
  _error(fallbackArg) {
    const msg = this._str(this._x.mnw_error_message());
    const field = this._str(this._x.mnw_error_field());
    const e = new Error(msg || `${fallbackArg}: refused`);
    e.field = field || fallbackArg;
    e.status = STATUS[this._x.mnw_error_status()] ?? 'ARG';
    return e;
  }
  _with(ptrs, fn) {
    try {
      return fn();
    } finally {
      for (const p of ptrs) if (p) this._x.mnw_free(p);
    }
  }

  /** Heap blocks of the module allocated and not freed (live), and allocations so far. */
  allocations() {
    return { live: this._x.mnw_alloc_live(), total: this._x.mnw_alloc_total() };
  }
  /** Bytes of the module's linear memory. */
  memoryBytes() {
    return this._x.memory.buffer.byteLength;
  }

  // ---- rotations (docs/web.md): Euler angles in radians, quaternions (w, x, y, z)
  /** The rotation of Euler angles e in order ('XYZ' ... 'ZYX': R = R1(e[0]) R2(e[1]) R3(e[2])). */
  eulerToQuat(order, e) {
    const o = pick(order, EULER, 'order'),
      s = this._scratch;
    this._f64(s, 3).set(vec(e, 3, 'e'));
    if (this._x.mnw_euler_to_quat(o, s, s + 32) !== 0) throw this._error('order');
    return Array.from(this._f64(s + 32, 4));
  }
  /** The Euler angles in order of the rotation q; given ref, the solution nearest ref (both
   * Tait-Bryan branches, each angle moved by whole turns), else the middle angle in [-pi/2, pi/2]. */
  eulerFromQuat(order, q, ref) {
    const o = pick(order, EULER, 'order'),
      s = this._scratch;
    this._f64(s, 4).set(vec(q, 4, 'q'));
    if (ref != null) this._f64(s + 32, 3).set(vec(ref, 3, 'ref'));
    if (this._x.mnw_euler_from_quat(o, s, ref != null ? s + 32 : 0, s + 64) !== 0) throw this._error('q');
    return Array.from(this._f64(s + 64, 3));
  }
  /** q = swing * twist about the unit axis: the twist angle in [-pi, pi), the swing's
   * rotation vector and its angle (what a ball's cone limits). */
  swingTwist(q, axis) {
    const s = this._scratch;
    this._f64(s, 4).set(vec(q, 4, 'q'));
    this._f64(s + 32, 3).set(vec(axis, 3, 'axis'));
    this._x.mnw_swing_twist(s, s + 32, s + 64);
    const r = this._f64(s + 64, 4);
    return { twist: r[0], swing: [r[1], r[2], r[3]], swingAngle: Math.hypot(r[1], r[2], r[3]) };
  }
  /** q projected onto a ball's limits: swing angle within cone, twist about axis within [lo, hi]. */
  ballClamp(q, axis, cone, lo, hi) {
    const s = this._scratch;
    this._f64(s, 4).set(vec(q, 4, 'q'));
    this._f64(s + 32, 3).set(vec(axis, 3, 'axis'));
    this._x.mnw_ball_clamp(s, s + 32, num(cone, 'cone'), num(lo, 'lo'), num(hi, 'hi'));
    return Array.from(this._f64(s, 4));
  }

  /** The built-in stick figure of the thesis. */
  stickman() {
    const f = this._x.mnw_figure_stickman();
    if (!f) throw this._error('stickman');
    return new Figure(this, f, null);
  }

  /** A figure from skeleton text (docs/skeleton-format.md). */
  figureFromSkeleton(text, name = 'figure.skel') {
    const t = this._cstr(text, 'text'),
      n = this._cstr(name, 'name');
    return this._with([t, n], () => {
      const f = this._x.mnw_figure_read_skel(t, utf8.encode(text).length, n);
      if (!f) throw this._error('text');
      return new Figure(this, f, null);
    });
  }

  /** A figure and its motion from BVH text; options.scale multiplies lengths. */
  figureFromBVH(text, options = {}) {
    const scale = options.scale === undefined ? 1 : num(options.scale, 'options.scale');
    if (!(scale > 0)) fail('options.scale', 'must be > 0');
    const t = this._cstr(text, 'text'),
      n = this._cstr(options.name ?? 'figure.bvh', 'options.name');
    const out = this._scratch;
    return this._with([t, n], () => {
      const f = this._x.mnw_figure_read_bvh(t, utf8.encode(text).length, n, scale, out, out + 8, out + 16);
      if (!f) throw this._error('text');
      const i = this._i32(out, 6),
        qp = i[0],
        nframes = i[2];
      const frameTime = this._f64(out + 16, 1)[0];
      const nq = this._x.mnw_figure_size(f, 1);
      const frames = new Float64Array(this._f64(qp, nframes * nq));
      this._x.mnw_free(qp);
      return new Figure(this, f, { frameTime, nframes, frames });
    });
  }

  /** A figure from a figure document (docs/figure-document.md): its text or a parsed object,
   * read by the reader of the command line (inside the module): an error names the document
   * (name), the line and the field as `marionette` does ("name:line: field: text"). */
  figureFromDocument(doc, name = 'document') {
    const text = this._docText(doc, 'document');
    const t = this._cstr(text, 'document'),
      n = this._cstr(name, 'name');
    const out = this._scratch;
    return this._with([t, n], () => {
      const f = this._x.mnw_figure_read_doc(t, utf8.encode(text).length, n, out, out + 8, out + 16);
      if (!f) throw this._error('document');
      const qp = this._i32(out, 1)[0],
        nframes = this._i32(out + 8, 1)[0];
      let motion = null;
      if (qp) {
        const nq = this._x.mnw_figure_size(f, 1);
        motion = { frameTime: this._f64(out + 16, 1)[0], nframes, frames: new Float64Array(this._f64(qp, nframes * nq)) };
        this._x.mnw_free(qp);
      }
      const fig = new Figure(this, f, motion);
      // the skin (a rig for createRig) is the page's: the module's figure has none
      const parsed = typeof doc === 'string' ? (text.includes('"skin"') ? JSON.parse(text) : null) : doc;
      fig.skin = parsed?.skin ?? null;
      return fig;
    });
  }

  /** A sequence of figure from a sequence document (docs/sequence.md): its text or a parsed
   * object, read by the reader of the command line with figure as its figure (its "figure"
   * member is kept: sequence.document.figure). Errors name the document as figureFromDocument's. */
  sequenceFromDocument(figure, doc, name = 'sequence') {
    if (!(figure instanceof Figure) || figure._mn !== this) fail('figure', 'not a figure of this module');
    figure._live('figure');
    const text = this._docText(doc, 'document');
    const t = this._cstr(text, 'document'),
      n = this._cstr(name, 'name');
    return this._with([t, n], () => {
      const p = this._x.mnw_seq_read_doc(figure._p, t, utf8.encode(text).length, n);
      if (!p) throw this._error('document');
      return new Sequence(this, p, figure);
    });
  }

  /** What a scene document (docs/scene.md) holds, read by the reader of the command line:
   * { frames, solver, iterations, root, figures: [{ name, file, sequence, position, rotation }] }. */
  sceneFromDocument(doc, name = 'scene') {
    const text = this._docText(doc, 'document');
    const t = this._cstr(text, 'document'),
      n = this._cstr(name, 'name');
    return this._with([t, n], () => {
      const x = this._x,
        sc = x.mnw_scene_read(t, utf8.encode(text).length, n);
      if (!sc) throw this._error('document');
      try {
        const solver = x.mnw_scene_int(sc, 1);
        const figures = [];
        for (let i = 0; i < x.mnw_scene_int(sc, 3); i++) {
          x.mnw_scene_place(sc, i, this._scratch);
          const pl = Array.from(this._f64(this._scratch, 7));
          figures.push({
            name: this._str(x.mnw_scene_str(sc, 1, i)),
            file: this._str(x.mnw_scene_str(sc, 2, i)),
            sequence: this._str(x.mnw_scene_str(sc, 3, i)) || null,
            position: pl.slice(0, 3),
            rotation: pl.slice(3),
          });
        }
        return {
          frames: x.mnw_scene_int(sc, 0),
          solver: solver >= 0 ? CSOLVERS[solver] : null,
          iterations: x.mnw_scene_int(sc, 2),
          root: this._str(x.mnw_scene_str(sc, 0, 0)) || null,
          figures,
        };
      } finally {
        x.mnw_scene_destroy(sc);
      }
    });
  }

  // A document's text: a string as it is, an object as JSON.
  _docText(doc, arg) {
    if (typeof doc === 'string') return doc;
    object(doc, arg);
    return JSON.stringify(doc);
  }
  // A malloc'd text the module wrote (length at this._scratch), freed.
  _takeText(p, arg) {
    if (!p) throw this._error(arg);
    const len = this._i32(this._scratch, 1)[0];
    const text = utf8d.decode(new Uint8Array(this._x.memory.buffer, p, len));
    this._x.mnw_free(p);
    return text;
  }

  /** A constraint system over figures (1..8): handles, constraints, drags and solves. */
  createConstraintSystem(figures, options = {}) {
    if (!Array.isArray(figures) || figures.length < 1 || figures.length > 8) fail('figures', 'expected 1..8 figures');
    figures.forEach((f, i) => {
      if (!(f instanceof Figure) || f._mn !== this) fail(`figures[${i}]`, 'not a figure of this module');
      f._live('figures[' + i + ']');
    });
    const maxH = options.maxHandles === undefined ? 0 : int(options.maxHandles, 'options.maxHandles', 1, 1 << 16);
    const maxC = options.maxConstraints === undefined ? 0 : int(options.maxConstraints, 'options.maxConstraints', 1, 1 << 16);
    const p = this._ints(
      figures.map((f) => f._p),
      'figures',
    );
    return this._with([p], () => {
      const s = this._x.mnw_csys_create(p, figures.length, maxH, maxC);
      if (!s) throw this._error('figures');
      return new ConstraintSystem(this, s, figures);
    });
  }

  /** A constraint system over figures (1..8) built from a scene document's handles and
   * constraints (docs/scene.md; its text or a parsed object) by the reader of `marionette
   * pose`: joints by name, a pin or an orientation without a target held where its handle is
   * now. The handles and constraints keep the document's order as their indices. options:
   * { name = 'scene' (in messages: "name:line: constraints[0].normal: ..."), spareHandles,
   * spareConstraints (room for more, added with addHandle and addConstraint) }. The
   * document's drags, frames and solver are the command's: the system holds none of them. */
  constraintSystemFromDocument(figures, doc, options = {}) {
    if (!Array.isArray(figures) || figures.length < 1 || figures.length > 8) fail('figures', 'expected 1..8 figures');
    figures.forEach((f, i) => {
      if (!(f instanceof Figure) || f._mn !== this) fail(`figures[${i}]`, 'not a figure of this module');
      f._live('figures[' + i + ']');
    });
    object(options, 'options');
    const spareH = options.spareHandles === undefined ? 0 : int(options.spareHandles, 'options.spareHandles', 0, 4096);
    const spareC = options.spareConstraints === undefined ? 0 : int(options.spareConstraints, 'options.spareConstraints', 0, 4096);
    const text = this._docText(doc, 'document');
    const t = this._cstr(text, 'document'),
      n = this._cstr(options.name ?? 'scene', 'options.name'),
      p = this._ints(
        figures.map((f) => f._p),
        'figures',
      );
    return this._with([t, n, p], () => {
      const s = this._x.mnw_csys_from_scene(p, figures.length, t, utf8.encode(text).length, n, spareH, spareC);
      if (!s) throw this._error('document');
      return new ConstraintSystem(this, s, figures);
    });
  }

  /** A skinning rig: { dim, vertices, masses?, controllers, influences, weightIndex, weight }
   * (the "skin" of a figure document has this form). */
  createRig(skin) {
    object(skin, 'skin');
    const x = this._x;
    const dim = int(skin.dim ?? 3, 'skin.dim', 2, 3);
    const verts = skin.vertices;
    if (!verts || verts.length < dim || verts.length % dim) fail('skin.vertices', `expected nverts x ${dim} numbers`);
    const n = verts.length / dim;
    for (let i = 0; i < verts.length; i++) num(verts[i], `skin.vertices[${i}]`);
    if (skin.masses != null && skin.masses.length !== n) fail('skin.masses', `expected ${n} numbers`);
    const vp = this._doubles(verts, 'skin.vertices');
    const mp = skin.masses != null ? this._doubles(skin.masses, 'skin.masses') : 0;
    const r = this._with([vp, mp], () => x.mnw_rig_create(dim, n, vp, mp));
    if (!r) throw this._error('skin.vertices');
    const rig = new Rig(this, r);
    try {
      if (!Array.isArray(skin.controllers) || !skin.controllers.length) fail('skin.controllers', 'expected an array');
      skin.controllers.forEach((c, i) => {
        const a = `skin.controllers[${i}]`;
        object(c, a);
        const kind = pick(c.kind ?? 'point', CTRL_KINDS, `${a}.kind`);
        const vals = [...vec(c.pivot, 3, `${a}.pivot`), ...vec(c.tail ?? c.pivot, 3, `${a}.tail`)];
        const parent = int(c.parent ?? -1, `${a}.parent`, -1, i - 1);
        const np = this._cstr(c.name, `${a}.name`);
        this._with([np], () => {
          this._f64(this._scratch, 6).set(vals);
          if (x.mnw_rig_add_ctrl(r, np, kind, this._scratch, parent, c.attached ? 1 : 0) < 0) {
            const e = this._error(a);
            e.message = `${a}: ${e.message}`;
            throw e;
          }
        });
      });
      const k = int(skin.influences, 'skin.influences', 1, 8);
      if (!skin.weightIndex && skin.weight_index) skin = { ...skin, weightIndex: skin.weight_index };
      if (!skin.weightIndex || skin.weightIndex.length !== n * k) fail('skin.weightIndex', `expected ${n * k} integers`);
      if (!skin.weight || skin.weight.length !== n * k) fail('skin.weight', `expected ${n * k} numbers`);
      for (let i = 0; i < n * k; i++) {
        int(skin.weightIndex[i], `skin.weightIndex[${i}]`);
        num(skin.weight[i], `skin.weight[${i}]`);
      }
      const ip = this._ints(skin.weightIndex, 'skin.weightIndex'),
        wp = this._doubles(skin.weight, 'skin.weight');
      this._with([ip, wp], () => {
        if (x.mnw_rig_set_weights(r, k, ip, wp) !== 0) throw this._error('skin.weight');
      });
    } catch (e) {
      rig.dispose();
      throw e;
    }
    return rig;
  }
}

// The numbers of a constraint definition as the module takes them: iv (type, handle,
// handle2, npolygon, priority, enabled, lock) and v (target, targetRotation, origin, dir, up,
// margin, weight, 16 polygon points, start, end).
function constraintArgs(def, handle) {
  object(def, 'constraint');
  const type = pick(def.type ?? 'pin', CONSTRAINT_TYPES, 'constraint.type');
  const h = handle(def.handle, 'constraint.handle');
  const h2 = def.handle2 === undefined ? -1 : handle(def.handle2, 'constraint.handle2');
  const v = new Float64Array(18 + 3 * 16 + 2);
  const set = (k, n, at, dflt) => v.set(def[k] === undefined ? dflt : vec(def[k], n, `constraint.${k}`), at);
  set('target', 3, 0, [0, 0, 0]);
  set('targetRotation', 4, 3, [1, 0, 0, 0]);
  set('origin', 3, 7, [0, 0, 0]);
  set('dir', 3, 10, [0, 0, 0]);
  set('up', 3, 13, [0, 1, 0]);
  v[16] = def.margin === undefined ? 0 : num(def.margin, 'constraint.margin');
  v[17] = def.weight === undefined ? 1 : num(def.weight, 'constraint.weight');
  const poly = def.polygon ?? [];
  if (!Array.isArray(poly) || poly.length > 16) fail('constraint.polygon', 'expected up to 16 points');
  poly.forEach((pt, i) => v.set(vec(pt, 3, `constraint.polygon[${i}]`), 18 + 3 * i));
  v[66] = def.start === undefined ? NaN : num(def.start, 'constraint.start'); // NaN: every frame
  v[67] = def.end === undefined ? NaN : num(def.end, 'constraint.end');
  const iv = [
    type,
    h,
    h2,
    poly.length,
    def.priority === undefined ? 0 : int(def.priority, 'constraint.priority', 0),
    def.enabled === undefined ? 1 : bool(def.enabled, 'constraint.enabled'),
    def.lock === undefined ? 0 : bool(def.lock, 'constraint.lock'),
    axisOf(def.axis),
  ];
  return { iv, v };
}
// orient: 0 the whole orientation, 'x' | 'y' | 'z' (or 1..3) only that axis's direction
function axisOf(a) {
  if (a === undefined || a === 0 || a === null) return 0;
  const i = typeof a === 'string' ? ['x', 'y', 'z'].indexOf(a) + 1 : Number.isInteger(a) ? a : -1;
  if (i < 1 || i > 3) fail('constraint.axis', "expected 'x', 'y' or 'z'");
  return i;
}
function constraintError(mn) {
  const e = mn._error('constraint');
  if (e.field && !e.message.includes('constraint.')) e.message = `constraint.${e.message}`;
  return e;
}
function solveOptions(mn, options, dvp, ivp, seq) {
  object(options, 'options');
  const x = mn._x;
  if (seq) x.mnw_seq_solve_defaults(dvp, ivp);
  else x.mnw_csolve_defaults(dvp, ivp);
  const dv = mn._f64(dvp, 10),
    iv = mn._i32(ivp, 6);
  ['tol', 'tolRot', 'dragTol', 'rcond', 'feedback', 'feedbackK', 'dragDamping', 'maxStep', 'minProgress'].forEach((k, i) => {
    if (options[k] !== undefined) dv[i] = num(options[k], `options.${k}`);
  });
  if (options.method !== undefined) iv[0] = pick(options.method, CSOLVERS, 'options.method');
  if (options.maxIters !== undefined) iv[1] = int(options.maxIters, 'options.maxIters', 1, 1e9);
  if (options.respectLimits !== undefined) iv[2] = bool(options.respectLimits, 'options.respectLimits');
  if (seq) {
    if (options.relax !== undefined) dv[9] = num(options.relax, 'options.relax');
    if (options.warmStart !== undefined) iv[3] = bool(options.warmStart, 'options.warmStart');
    if (options.balance !== undefined) iv[4] = bool(options.balance, 'options.balance');
    if (options.constraints !== undefined) iv[5] = bool(options.constraints, 'options.constraints');
  }
}
function solveResult(mn, s, outp) {
  const o = mn._f64(outp, 8);
  // a violation that is not finite (a target beyond any reach, 1e300 m) is no result: the
  // solve throws rather than report Infinity as a measure
  for (const [i, what] of [
    [4, 'maxViolation'],
    [5, 'maxRotViolation'],
    [6, 'maxDragError'],
  ]) {
    if (!Number.isFinite(o[i])) fail(what, `${o[i]}: the constraints cannot be measured (a target out of reach of any number)`);
  }
  return {
    status: STATUS[o[0]],
    ok: o[0] === 0,
    iterations: o[1],
    svdFallbacks: o[2],
    rows: o[3],
    maxViolation: o[4],
    maxRotViolation: o[5],
    maxDragError: o[6],
    unmet: o[7],
    message: s === 0 ? '' : mn._str(mn._x.mnw_error_message()),
  };
}

class Owned {
  constructor(mn, p, kind) {
    this._mn = mn;
    this._p = p;
    this._kind = kind;
    this._users = new Set();
  }
  _live(arg = this._kind) {
    if (!this._p) fail(arg, `this ${this._kind} was disposed`);
  }
  get disposed() {
    return !this._p;
  }
}

/** A figure: a compiled model and its state. */
class Figure extends Owned {
  constructor(mn, p, motion) {
    super(mn, p, 'figure');
    const x = mn._x;
    this.motion = motion;
    this.skin = null;
    this.name = mn._str(x.mnw_figure_name(p));
    this.jointCount = x.mnw_figure_size(p, 0);
    this.nq = x.mnw_figure_size(p, 1);
    this.nv = x.mnw_figure_size(p, 2);
    this.joints = [];
    for (let j = 0; j < this.jointCount; j++) {
      this.joints.push({
        name: mn._str(x.mnw_joint_name(p, j)),
        parent: x.mnw_joint_int(p, j, 0),
        type: JOINT_TYPES[x.mnw_joint_int(p, j, 1)],
        qadr: x.mnw_joint_int(p, j, 2),
        dofadr: x.mnw_joint_int(p, j, 3),
        limited: x.mnw_joint_int(p, j, 4) === 1,
        range: [x.mnw_joint_range(p, j, 0), x.mnw_joint_range(p, j, 1)],
        swing: x.mnw_joint_range(p, j, 2),
        twist: [x.mnw_joint_range(p, j, 3), x.mnw_joint_range(p, j, 4)],
        axis: [x.mnw_joint_range(p, j, 5), x.mnw_joint_range(p, j, 6), x.mnw_joint_range(p, j, 7)],
        rotOrder: EULER[x.mnw_joint_int(p, j, 5)].toUpperCase(),
      });
    }
    this.jointNames = this.joints.map((j) => j.name);
    this._views = {};
    this._arrays = {};
    this._io = mn._x.mnw_malloc(8 * 64);
  }
  _array(key, ptrFn, n) {
    this._live();
    let v = this._arrays[key];
    if (!v || v.buffer !== this._mn._x.memory.buffer) {
      v = this._arrays[key] = new Float64Array(this._mn._x.memory.buffer, ptrFn(this._p), n);
    }
    return v;
  }
  // A view of the figure's numbers in the module's memory that stays right when the memory
  // grows and throws once the figure is disposed: a view kept past dispose() would otherwise
  // read and write the memory the next figure is given.
  _view(key, ptrFn, n) {
    this._live();
    if (!this._views[key]) {
      const at = () => this._array(key, ptrFn, n);
      this._views[key] = new Proxy(at(), {
        get(_, k) {
          const t = at(),
            v = t[k];
          return typeof v === 'function' ? v.bind(t) : v;
        },
        set(_, k, value) {
          at()[k] = value;
          return true;
        },
        has(_, k) {
          return k in at();
        },
        ownKeys() {
          return Reflect.ownKeys(at());
        },
        getOwnPropertyDescriptor(_, k) {
          return Reflect.getOwnPropertyDescriptor(at(), k);
        },
      });
    }
    return this._views[key];
  }
  /** The state (nq numbers), a view of the module's memory: write it, then call fk(). */
  get q() {
    return this._view('q', this._mn._x.mnw_figure_q, this.nq);
  }
  /** The rest state (a copy). */
  get restQ() {
    return new Float64Array(this._view('q0', this._mn._x.mnw_figure_q0, this.nq));
  }
  /** Joint positions (jointCount x 3) after the last fk() or solve: a view, not a copy. */
  get positions() {
    return this._view('pos', this._mn._x.mnw_figure_positions, 3 * this.jointCount);
  }
  /** Joint frames (jointCount x 12: rotation row-major, then position): a view. */
  get frames() {
    return this._view('xf', this._mn._x.mnw_figure_frames, 12 * this.jointCount);
  }

  /** Copies a state in (checked: nq finite numbers). */
  setQ(q) {
    this._live();
    vec(q, this.nq, 'q');
    this.q.set(q);
    return this;
  }
  /** Joint index of a name or an index; -1 for 'world' or -1 when allowWorld. */
  joint(j, arg = 'joint', allowWorld = false) {
    if (allowWorld && (j === -1 || j === 'world')) return -1;
    if (typeof j === 'string') {
      const i = this.jointNames.indexOf(j);
      if (i < 0) fail(arg, `no joint named '${j}'`);
      return i;
    }
    return int(j, arg, 0, this.jointCount - 1);
  }
  /** Forward kinematics of q: frames and positions. Throws when q is not finite. */
  fk() {
    this._live();
    if (this._mn._x.mnw_figure_fk(this._p) !== 0) throw this._mn._error('q');
    return this;
  }
  reset() {
    this._live();
    this._mn._x.mnw_figure_reset(this._p);
    return this;
  }
  clampToLimits() {
    this._live();
    this._mn._x.mnw_figure_clamp(this._p);
    return this;
  }
  /**
   * The heel and toe contacts of both feet over a take of this figure (default: its own
   * motion), as retargeting finds them (docs/retarget.md "Contacts"), in the sequence
   * document's form (docs/sequence.md "Contacts"): [{ joint, heel: [[first, last], ...],
   * toe: [...] }] per foot, frames inclusive. [] when no rig table names the figure's legs.
   */
  footContacts(motion = this.motion) {
    this._live();
    if (!motion) fail('motion', 'this figure has no motion');
    const nq = this.nq,
      frames = motion.frames,
      n = motion.nframes;
    if (!frames || frames.length !== n * nq || n < 1) fail('motion.frames', `expected nframes x ${nq} numbers`);
    num(motion.frameTime, 'motion.frameTime');
    const mn = this._mn,
      x = mn._x,
      p = mn._doubles(frames, 'motion.frames');
    const out = x.mnw_malloc(2 * n + 8);
    return mn._with([p, out], () => {
      if (!out) fail('motion', 'out of memory');
      const st = x.mnw_foot_contacts(this._p, p, n, motion.frameTime, out, this._io);
      if (st !== 0) {
        const e = mn._error('motion');
        if (e.status === 'NOTFOUND') return [];
        throw e;
      }
      const feet = [...mn._i32(this._io, 2)],
        bits = new Uint8Array(x.memory.buffer, out, 2 * n);
      return feet.map((j, k) => {
        const track = { joint: this.joints[j].name, heel: [], toe: [] };
        for (const [key, bit] of [
          ['heel', 1],
          ['toe', 2],
        ]) {
          for (let f = 0; f < n;) {
            if (!(bits[k * n + f] & bit)) {
              f++;
              continue;
            }
            let g = f;
            while (g < n && bits[k * n + g] & bit) g++;
            track[key].push([f, g - 1]);
            f = g;
          }
        }
        return track;
      });
    });
  }
  /** Sets q to motion frame k and computes FK. */
  setFrame(k) {
    this._live();
    if (!this.motion) fail('frame', 'this figure has no motion');
    int(k, 'frame', 0, this.motion.nframes - 1);
    this.q.set(this.motion.frames.subarray(k * this.nq, (k + 1) * this.nq));
    return this.fk();
  }

  _ikArgs(problem, options) {
    object(problem, 'problem');
    if (options != null) object(options, 'options');
    options ??= {};
    const x = this._mn._x,
      dvp = this._io,
      ivp = this._io + 8 * 24;
    if (!this._ikDefaults) {
      x.mnw_ik_defaults(dvp, ivp);
      this._ikDefaults = [new Float64Array(this._mn._f64(dvp, 21)), new Int32Array(this._mn._i32(ivp, 12))];
    }
    const buf = x.memory.buffer;
    if (!this._ikViews || this._ikViews[0].buffer !== buf)
      this._ikViews = [new Float64Array(buf, dvp, 21), new Int32Array(buf, ivp, 12), new Float64Array(buf, this._io + 8 * 40, 6)];
    const [dv, iv] = this._ikViews;
    dv.set(this._ikDefaults[0]);
    iv.set(this._ikDefaults[1]);
    iv[0] = this.joint(problem.base ?? -1, 'problem.base', true);
    iv[1] = this.joint(problem.tip, 'problem.tip');
    if (problem.point !== undefined) dv.set(vec(problem.point, 3, 'problem.point'), 0);
    const hasPos = problem.target !== undefined,
      hasRot = problem.targetRotation !== undefined;
    if (!hasPos && !hasRot) fail('problem.target', 'give a target position and/or a targetRotation');
    if (hasPos) dv.set(vec(problem.target, 3, 'problem.target'), 3);
    if (hasRot) dv.set(vec(problem.targetRotation, 4, 'problem.targetRotation'), 6);
    if (problem.weightPosition !== undefined) dv[10] = num(problem.weightPosition, 'problem.weightPosition');
    if (problem.weightRotation !== undefined) dv[11] = num(problem.weightRotation, 'problem.weightRotation');
    if (problem.pole !== undefined) dv.set(vec(problem.pole, 3, 'problem.pole'), 12);
    iv[2] = hasPos ? 1 : 0;
    iv[3] = hasRot ? 1 : 0;
    const d = (k, i) => {
      if (options[k] !== undefined) dv[i] = num(options[k], `options.${k}`);
    };
    d('tolPos', 15);
    d('tolRot', 16);
    d('timeoutMs', 17);
    d('maxStep', 18);
    d('damping', 19);
    d('nullspaceGain', 20);
    if (options.method !== undefined) iv[4] = pick(options.method, IK_METHODS, 'options.method');
    if (options.maxIters !== undefined) iv[5] = int(options.maxIters, 'options.maxIters', 1, 1e9);
    if (options.maxRestarts !== undefined) iv[6] = int(options.maxRestarts, 'options.maxRestarts', 0, 1e9);
    if (options.respectLimits !== undefined) iv[7] = bool(options.respectLimits, 'options.respectLimits');
    if (options.nullspace !== undefined) iv[8] = bool(options.nullspace, 'options.nullspace');
    if (options.timeoutCpu !== undefined) iv[9] = bool(options.timeoutCpu, 'options.timeoutCpu');
    if (options.seed !== undefined) {
      const s = BigInt.asUintN(64, BigInt(int(options.seed, 'options.seed', 0, Number.MAX_SAFE_INTEGER)));
      iv[10] = Number(s & 0xffffffffn) | 0;
      iv[11] = Number(s >> 32n) | 0;
    }
    return [dvp, ivp, hasRot];
  }

  /**
   * The figure re-rooted at a joint (name or index; Welman 2.1.2, 6.3: a hand or a foot as
   * the root): a new Figure whose state puts every joint where this one's does. Each joint
   * keeps its name; the motions on the path from the old root are carried by joints named
   * with a "~" added (docs/model.md, "Re-rooting").
   */
  reroot(joint) {
    this._live();
    const j = this.joint(joint);
    const f = this._mn._x.mnw_figure_reroot(this._p, j);
    if (!f) throw this._mn._error('joint');
    return new Figure(this._mn, f, null);
  }

  /** The state of `other` (a re-rooting of this figure, or the figure this one re-roots)
   * that puts every joint where state q (default: this figure's) puts it here. */
  rerootState(other, q = this.q) {
    this._live();
    other._live();
    vec(q, this.nq, 'q');
    const mn = this._mn,
      qa = mn._doubles(q, 'q'),
      qb = mn._x.mnw_malloc(8 * Math.max(other.nq, 1));
    return mn._with([qa, qb], () => {
      if (!qb) fail('q', 'out of memory');
      if (mn._x.mnw_figure_reroot_state(this._p, qa, other._p, qb) !== 0) throw mn._error('other');
      return new Float64Array(mn._f64(qb, other.nq));
    });
  }

  /** Chain IK from the current state (docs/web.md: problem and options). The answer is
   * left in q, positions and frames. Returns the result; throws on a bad argument. */
  solveIK(problem, options) {
    this._live();
    const [dvp, ivp] = this._ikArgs(problem, options);
    const outp = this._io + 8 * 40;
    const s = this._mn._x.mnw_ik_solve(this._p, dvp, ivp, outp);
    if (s === 1) throw this._mn._error('problem');
    const o = this._ikViews[2].buffer === this._mn._x.memory.buffer ? this._ikViews[2] : this._mn._f64(outp, 6);
    return {
      status: STATUS[o[0]],
      ok: o[0] === 0,
      iterations: o[1],
      restarts: o[2],
      posErr: o[3],
      rotErr: o[4],
      timeUs: o[5],
      message: s === 0 ? '' : this._mn._str(this._mn._x.mnw_error_message()),
    };
  }

  /** Solves the same chain for many targets, each from the state seedQ (a loop inside the
   * module). targets: n x 3 positions, or n x 7 (position, quaternion w x y z) when
   * problem.targetRotation is given. Returns { solved (n flags), q (n x nq), count }. */
  solveIKBatch(problem, options, seedQ, targets) {
    this._live();
    vec(seedQ, this.nq, 'seedQ');
    const [dvp, ivp, hasRot] = this._ikArgs(problem, options);
    const stride = hasRot ? 7 : 3;
    if (!targets || targets.length % stride) fail('targets', `expected n x ${stride} numbers`);
    for (let i = 0; i < targets.length; i++) num(targets[i], `targets[${i}]`);
    const n = targets.length / stride,
      mn = this._mn,
      x = mn._x;
    const sp = mn._doubles(seedQ, 'seedQ'),
      tp = mn._doubles(targets, 'targets');
    const fl = x.mnw_malloc(Math.max(n, 1)),
      qp = x.mnw_malloc(8 * Math.max(n * this.nq, 1));
    return mn._with([sp, tp, fl, qp], () => {
      if (!fl || !qp) fail('targets', 'out of memory');
      const count = x.mnw_ik_solve_many(this._p, dvp, ivp, sp, n, tp, fl, qp);
      if (count < 0) throw mn._error('problem');
      return {
        count,
        solved: new Uint8Array(new Uint8Array(x.memory.buffer, fl, n)),
        q: new Float64Array(mn._f64(qp, n * this.nq)),
      };
    });
  }

  /** The figure document of this figure and its motion (the skin is not written): the text
   * `marionette convert` writes. */
  toDocument() {
    this._live();
    const mn = this._mn,
      mo = this.motion;
    const fp = mo ? mn._doubles(mo.frames, 'motion.frames') : 0;
    return mn._with([fp], () =>
      mn._takeText(mn._x.mnw_figure_write_doc(this._p, fp, mo ? mo.nframes : 0, mo ? mo.frameTime : 0, mn._scratch), 'figure'),
    );
  }
  dispose() {
    if (!this._p) return;
    if (this._users.size) fail('figure', 'still used by a constraint system or a sequence: dispose that first');
    this._mn._x.mnw_figure_destroy(this._p);
    this._mn._x.mnw_free(this._io);
    this._p = 0;
    this._views = {};
    this._arrays = {};
  }
}

/** Handles, constraints, drags and solves over figures (Welman ch. 5). */
class ConstraintSystem extends Owned {
  constructor(mn, p, figures) {
    super(mn, p, 'constraint system');
    this.figures = figures;
    for (const f of figures) f._users.add(this);
    this._io = mn._x.mnw_malloc(8 * (24 + 3 * 16 + 2));
  }
  _figure(i, arg) {
    return this.figures[int(i ?? 0, arg, 0, this.figures.length - 1)];
  }
  _handle(h, arg = 'handle') {
    return int(h, arg, 0, this._mn._x.mnw_csys_count(this._p, 0) - 1);
  }
  _con(c, arg = 'constraint') {
    return int(c, arg, 0, this._mn._x.mnw_csys_count(this._p, 1) - 1);
  }
  get handleCount() {
    this._live();
    return this._mn._x.mnw_csys_count(this._p, 0);
  }
  get constraintCount() {
    this._live();
    return this._mn._x.mnw_csys_count(this._p, 1);
  }

  /** { type: 'point'|'orientation'|'com', figure: 0, joint (name or index; com: -1 for
   * the whole figure), point: [x,y,z] in the joint frame, name }. Returns the index. */
  addHandle(def) {
    this._live();
    object(def, 'handle');
    const type = pick(def.type ?? 'point', HANDLE_TYPES, 'handle.type');
    const fi = def.figure ?? 0;
    const fig = this._figure(fi, 'handle.figure');
    const joint = fig.joint(def.joint ?? 0, 'handle.joint', type === 2);
    const pt = def.point === undefined ? [0, 0, 0] : vec(def.point, 3, 'handle.point');
    const np = def.name ? this._mn._cstr(def.name, 'handle.name') : 0;
    return this._mn._with([np], () => {
      const h = this._mn._x.mnw_csys_add_handle(this._p, type, fi, joint, pt[0], pt[1], pt[2], np);
      if (h < 0) throw this._mn._error('handle');
      return h;
    });
  }

  /** { type: 'pin'|'plane'|'line'|'orient'|'equal'|'balance', handle, handle2, target,
   * targetRotation, origin, dir, polygon: [[x,y,z],...], up, margin, weight, priority,
   * enabled, name }. Returns the index. */
  addConstraint(def) {
    this._live();
    const { iv, v } = constraintArgs(def, (h, arg) => this._handle(h, arg));
    const mn = this._mn,
      x = mn._x;
    mn._f64(this._io, v.length).set(v);
    const ip = mn._ints(iv, 'constraint'),
      np = def.name ? mn._cstr(def.name, 'constraint.name') : 0;
    return mn._with([ip, np], () => {
      const c = x.mnw_csys_add_constraint(this._p, ip, this._io, np);
      if (c < 0) throw constraintError(mn);
      return c;
    });
  }

  _edit(c, what, vals, i, arg) {
    this._live();
    c = this._con(c);
    if (vals) this._mn._f64(this._io, vals.length).set(vals);
    if (this._mn._x.mnw_csys_edit(this._p, c, what, i, this._io) !== 0) {
      const e = this._mn._error(arg);
      e.message = `${arg}: ${e.message.replace(/^[a-z]+: /, '')}`;
      throw e;
    }
    return this;
  }
  setTarget(c, target) {
    return this._edit(c, 0, vec(target, 3, 'target'), 0, 'target');
  }
  setTargetRotation(c, q) {
    return this._edit(c, 1, vec(q, 4, 'targetRotation'), 0, 'targetRotation');
  }
  setEnabled(c, on) {
    return this._edit(c, 2, null, bool(on, 'enabled'), 'enabled');
  }
  setWeight(c, w) {
    return this._edit(c, 3, [num(w, 'weight')], 0, 'weight');
  }

  /** Per-joint mobility (Welman 4.1.4, 6.2): the joint's DOFs move `scale` times as readily;
   * 0 freezes it for every solver, small values make a stiff rod, large ones loose links. */
  setJointScale(joint, scale, figure = 0) {
    this._live();
    const fig = this._figure(figure, 'figure');
    const j = fig.joint(joint, 'joint');
    const s = num(scale, 'scale');
    if (!(s >= 0)) fail('scale', 'expected a number >= 0');
    if (this._mn._x.mnw_csys_set_joint_scale(this._p, figure, j, s) !== 0) throw this._mn._error('scale');
    return this;
  }
  jointScale(joint, figure = 0) {
    this._live();
    const fig = this._figure(figure, 'figure');
    return this._mn._x.mnw_csys_joint_scale(this._p, figure, fig.joint(joint, 'joint'));
  }
  /** Comfort, a secondary goal of drags (Welman 7; constrain.h mn_csys_set_comfort): each
   * step pulls the moving joints toward the rest state (springs as stiff as the joints) and
   * out of a margin inside their limits, in the null space of the constraints. options:
   * { gain = 0.05, limitMargin = 0.1, limitGain = 0.5 }, or null/false to switch it off. */
  setComfort(options = {}) {
    this._live();
    let r;
    if (options === null || options === false) r = this._mn._x.mnw_csys_set_comfort(this._p, -1, 0, 0);
    else {
      object(options, 'comfort');
      const g = options.gain === undefined ? 0.05 : num(options.gain, 'comfort.gain');
      const mg = options.limitMargin === undefined ? 0.1 : num(options.limitMargin, 'comfort.limitMargin');
      const lg = options.limitGain === undefined ? 0.5 : num(options.limitGain, 'comfort.limitGain');
      if (!(g >= 0 && g <= 1)) fail('comfort.gain', 'expected a number in 0..1');
      if (!(mg >= 0 && mg <= 0.5)) fail('comfort.limitMargin', 'expected a number in 0..0.5');
      if (!(lg >= 0 && lg <= 1)) fail('comfort.limitGain', 'expected a number in 0..1');
      r = this._mn._x.mnw_csys_set_comfort(this._p, g, mg, lg);
    }
    if (r !== 0) throw this._mn._error('comfort');
    return this;
  }
  /** Comfort's weight of a joint: its spring toward rest is `w` times as stiff (default 1; 0:
   * no pull, as for the limb a drag pulls). */
  setComfortWeight(joint, w, figure = 0) {
    this._live();
    const fig = this._figure(figure, 'figure');
    const j = fig.joint(joint, 'joint');
    const v = num(w, 'weight');
    if (!(v >= 0)) fail('weight', 'expected a number >= 0');
    if (this._mn._x.mnw_csys_set_comfort_weight(this._p, figure, j, v) !== 0) throw this._mn._error('weight');
    return this;
  }
  /** The rest state comfort pulls figure `figure` toward: its q (nq numbers), or null for the
   * model's rest state. */
  setRest(q, figure = 0) {
    this._live();
    const fig = this._figure(figure, 'figure');
    if (q === null || q === undefined) {
      if (this._mn._x.mnw_csys_set_rest(this._p, figure, 0) !== 0) throw this._mn._error('rest');
      return this;
    }
    const v = vec(q, fig.q.length, 'rest');
    const p = this._mn._doubles(v, 'rest');
    return this._mn._with([p], () => {
      if (this._mn._x.mnw_csys_set_rest(this._p, figure, p) !== 0) throw this._mn._error('rest');
      return this;
    });
  }
  /** Every joint back to scale 1. */
  resetJointScales() {
    this._live();
    this._mn._x.mnw_csys_set_joint_scale(this._p, 0, 0, -1);
    return this;
  }

  _drag(h, what, vals, priority, arg) {
    this._live();
    h = this._handle(h);
    if (vals) this._mn._f64(this._io, vals.length).set(vals);
    if (this._mn._x.mnw_csys_drag(this._p, h, what, this._io, priority) !== 0) {
      const e = this._mn._error(arg);
      e.message = `${arg}: ${e.message.replace(/^[a-z]+: /, '')}`;
      throw e;
    }
    return this;
  }
  /** Pulls handle h toward a world target: options { weight = 1, priority = 0 }. */
  drag(h, target, options = {}) {
    const w = options.weight === undefined ? 1 : num(options.weight, 'options.weight');
    const pr = options.priority === undefined ? 0 : int(options.priority, 'options.priority', 0);
    return this._drag(h, 0, [...vec(target, 3, 'target'), w], pr, 'target');
  }
  dragRotation(h, q, options = {}) {
    const w = options.weight === undefined ? 1 : num(options.weight, 'options.weight');
    const pr = options.priority === undefined ? 0 : int(options.priority, 'options.priority', 0);
    return this._drag(h, 1, [...vec(q, 4, 'targetRotation'), w], pr, 'targetRotation');
  }
  push(h, force) {
    return this._drag(h, 2, vec(force, 3, 'force'), 0, 'force');
  }
  release(h) {
    return this._drag(h, 3, null, 0, 'handle');
  }
  dragError(h) {
    this._live();
    return this._mn._x.mnw_csys_drag_error(this._p, this._handle(h));
  }
  /** { position: [x,y,z], rotation: 9 numbers row-major }. */
  handleValue(h) {
    this._live();
    h = this._handle(h);
    if (this._mn._x.mnw_csys_handle_value(this._p, h, this._io) !== 0) throw this._mn._error('handle');
    const o = this._mn._f64(this._io, 12);
    return { position: Array.from(o.subarray(0, 3)), rotation: Array.from(o.subarray(3, 12)) };
  }
  /** Call after writing a figure's q directly. */
  invalidate() {
    this._live();
    this._mn._x.mnw_csys_invalidate(this._p);
    return this;
  }
  residual(c) {
    this._live();
    return this._mn._x.mnw_csys_residual(this._p, this._con(c));
  }
  unmet(c) {
    this._live();
    return this._mn._x.mnw_csys_unmet(this._p, this._con(c)) === 1;
  }

  /** One solve (a frame of interaction). options: { method: 'lagrange'|'ccd'|'dls', tol,
   * tolRot, dragTol, maxIters, rcond, feedback, feedbackK, dragDamping, maxStep,
   * respectLimits, minProgress }. */
  solve(options = {}) {
    this._live();
    const mn = this._mn,
      dvp = this._io,
      ivp = this._io + 8 * 10,
      outp = this._io + 8 * 14;
    solveOptions(mn, options, dvp, ivp, false);
    const s = mn._x.mnw_csys_solve(this._p, dvp, ivp, outp);
    if (s === 1) {
      const e = mn._error('options');
      if (!/^options/.test(e.message)) e.message = `options: ${e.message}`;
      throw e;
    }
    return solveResult(mn, s, outp);
  }

  dispose() {
    if (!this._p) return;
    this._mn._x.mnw_csys_destroy(this._p);
    this._mn._x.mnw_free(this._io);
    for (const f of this.figures) f._users.delete(this);
    this._p = 0;
  }
}

/** A linear blend skinning rig (controllers, weights) and its fit. */
class Rig extends Owned {
  constructor(mn, p) {
    super(mn, p, 'rig');
  }
  get vertexCount() {
    this._live();
    return this._mn._x.mnw_rig_size(this._p, 0);
  }
  get controllerCount() {
    this._live();
    return this._mn._x.mnw_rig_size(this._p, 1);
  }
  get dim() {
    this._live();
    return this._mn._x.mnw_rig_size(this._p, 2);
  }
  get controllerNames() {
    this._live();
    const n = this.controllerCount,
      out = [];
    for (let c = 0; c < n; c++) out.push(this._mn._str(this._mn._x.mnw_rig_ctrl_name(this._p, c)));
    return out;
  }
  _pose(pose, arg = 'pose') {
    const n = 12 * this.controllerCount;
    vec(pose, n, arg);
    return n;
  }
  /** The rest pose: controllerCount x 12 (rotation row-major, then position). */
  restPose() {
    this._live();
    const n = 12 * this.controllerCount,
      x = this._mn._x,
      p = x.mnw_malloc(8 * n);
    return this._mn._with([p], () => {
      x.mnw_rig_rest_pose(this._p, p);
      return new Float64Array(this._mn._f64(p, n));
    });
  }
  /** Skinned vertices (vertexCount x dim) for a pose. */
  deform(pose) {
    this._live();
    const n = this._pose(pose),
      mn = this._mn,
      x = mn._x;
    const pp = mn._doubles(pose, 'pose'),
      op = x.mnw_malloc(8 * this.vertexCount * this.dim);
    return mn._with([pp, op], () => {
      x.mnw_rig_deform(this._p, pp, op);
      void n;
      return new Float64Array(mn._f64(op, this.vertexCount * this.dim));
    });
  }
  /** A fitter; fixed: controller names or indices held at the pose given to fit(). */
  createFitter(fixed = []) {
    this._live();
    if (!Array.isArray(fixed)) fail('fixed', 'expected an array of controller names or indices');
    const names = this.controllerNames,
      flags = new Uint8Array(names.length);
    fixed.forEach((c, i) => {
      const k = typeof c === 'string' ? names.indexOf(c) : c;
      if (!Number.isInteger(k) || k < 0 || k >= names.length) fail(`fixed[${i}]`, `no controller ${c}`);
      flags[k] = 1;
    });
    const x = this._mn._x,
      fp = x.mnw_malloc(Math.max(names.length, 1));
    new Uint8Array(x.memory.buffer, fp, names.length).set(flags);
    return this._mn._with([fp], () => {
      const f = x.mnw_fitter_create(this._p, fp);
      if (!f) throw this._mn._error('fixed');
      return new Fitter(this._mn, f, this);
    });
  }
  dispose() {
    if (!this._p) return;
    if (this._users.size) fail('rig', 'still used by a fitter: dispose that first');
    this._mn._x.mnw_rig_destroy(this._p);
    this._p = 0;
  }
}

class Fitter extends Owned {
  constructor(mn, p, rig) {
    super(mn, p, 'fitter');
    this.rig = rig;
    rig._users.add(this);
  }
  /** Fits pose (controllerCount x 12, in: warm start, out: the fit, changed in place) to
   * targets (vertexCount x dim). options: { maxIters, tol, maxHalvings, coupledRotation,
   * vertexError, coldStart (per-controller Kabsch first) }. */
  fit(pose, targets, options = {}) {
    this._live();
    object(options, 'options');
    const rig = this.rig,
      mn = this._mn,
      x = mn._x;
    rig._pose(pose);
    if (!(pose instanceof Float64Array)) fail('pose', 'expected a Float64Array (it is written in place)');
    vec(targets, rig.vertexCount * rig.dim, 'targets');
    const io = x.mnw_malloc(8 * 16),
      dv = io,
      iv = io + 8,
      out = io + 8 * 8;
    const pp = mn._doubles(pose, 'pose'),
      tp = mn._doubles(targets, 'targets');
    return mn._with([io, pp, tp], () => {
      x.mnw_fit_defaults(dv, iv);
      const d = mn._f64(dv, 1),
        i = mn._i32(iv, 5);
      if (options.tol !== undefined) d[0] = num(options.tol, 'options.tol');
      if (options.maxIters !== undefined) i[0] = int(options.maxIters, 'options.maxIters', 1, 1e9);
      if (options.maxHalvings !== undefined) i[1] = int(options.maxHalvings, 'options.maxHalvings', 0, 1000);
      if (options.coupledRotation !== undefined) i[2] = bool(options.coupledRotation, 'options.coupledRotation');
      if (options.vertexError !== undefined) i[3] = bool(options.vertexError, 'options.vertexError');
      if (options.coldStart !== undefined) i[4] = bool(options.coldStart, 'options.coldStart');
      const s = x.mnw_fit(this._p, pp, tp, dv, iv, out);
      if (s === 1) throw mn._error('targets');
      pose.set(mn._f64(pp, pose.length));
      const o = mn._f64(out, 5);
      return {
        status: STATUS[o[0]],
        ok: o[0] === 0,
        iterations: o[1],
        energy: o[2],
        rms: o[3],
        maxErr: o[4],
        message: s === 0 ? '' : mn._str(x.mnw_error_message()),
      };
    });
  }
  /** Forgets what earlier fits taught the fitter (the corrections its rigid start predicts
   * from along a motion), so that the next fit depends on its arguments only. */
  reset() {
    this._live();
    this._mn._x.mnw_fitter_reset(this._p);
  }
  dispose() {
    if (!this._p) return;
    this._mn._x.mnw_fitter_destroy(this._p);
    this.rig._users.delete(this);
    this._p = 0;
  }
}

export { Marionette, Figure, ConstraintSystem, Rig, Fitter, IK_METHODS, CSOLVERS };

export const INTERPOLATIONS = ['default', 'constant', 'linear', 'slerp', 'squad', 'catmull-rom', 'kb'];

/** A keyframed sequence of one figure (anim.h, Welman 6.1.2): keys, interpolation, plain
 * and constrained in-betweens. Sampling writes the figure's q, frames and positions. */
class Sequence extends Owned {
  constructor(mn, p, figure) {
    super(mn, p, 'sequence');
    this.figure = figure;
    figure._users.add(this);
    // what a document read by sequenceFromDocument named besides the sequence
    const x = mn._x;
    this.document = {
      figure: mn._str(x.mnw_seq_doc_str(p, 0)) || null,
      scale: x.mnw_seq_doc_number(p, 0) || null,
      contacts: x.mnw_seq_doc_number(p, 1),
    };
    // argument and result space: a constraint's numbers, or a sampled state (sampleQ: nq)
    this._io = mn._x.mnw_malloc(8 * Math.max(24 + 3 * 16 + 2, figure.nq));
  }
  /** The sequence document (docs/sequence.md) of this sequence, the text the command line
   * writes: its figure named figure (default: the one it was read with), scale written for a
   * BVH figure, the contact tracks it was read with. */
  toDocument(figure = this.document.figure, scale = this.document.scale) {
    this._live();
    const mn = this._mn;
    if (typeof figure !== 'string' || !figure) fail('figure', 'expected the figure file the document names');
    const sc = scale == null ? 0 : num(scale, 'scale');
    const fp = mn._cstr(figure, 'figure');
    return mn._with([fp], () => mn._takeText(mn._x.mnw_seq_write_doc(this._p, fp, sc, mn._scratch), 'sequence'));
  }
  get keyCount() {
    this._live();
    return this._mn._x.mnw_seq_count(this._p, 0);
  }
  get fps() {
    this._live();
    return this._mn._x.mnw_seq_number(this._p, 0, 0);
  }
  /** First and last key frames. */
  get start() {
    this._live();
    return this._mn._x.mnw_seq_number(this._p, 1, 0);
  }
  get end() {
    this._live();
    return this._mn._x.mnw_seq_number(this._p, 2, 0);
  }
  keyFrame(k) {
    this._live();
    return this._mn._x.mnw_seq_number(this._p, 3, this._key(k));
  }
  /** Key k's state (a copy). */
  keyQ(k) {
    this._live();
    return new Float64Array(this._mn._f64(this._mn._x.mnw_seq_key_q(this._p, this._key(k)), this.figure.nq));
  }
  _key(k) {
    return int(k, 'key', 0, this._mn._x.mnw_seq_count(this._p, 0) - 1);
  }
  _fail(arg) {
    const e = this._mn._error(arg);
    if (!e.message.startsWith(arg)) e.message = `${arg}: ${e.message}`;
    return e;
  }
  /** Sets (or replaces) the key at a frame to a state (nq numbers); returns its index. */
  setKey(frame, q) {
    this._live();
    num(frame, 'frame');
    vec(q, this.figure.nq, 'q');
    const mn = this._mn,
      p = mn._doubles(q, 'q');
    return mn._with([p], () => {
      const k = mn._x.mnw_seq_set_key(this._p, frame, p);
      if (k < 0) throw this._fail('q');
      return k;
    });
  }
  /** Kochanek-Bartels tension, continuity and bias of key k (each in [-1, 1]). */
  setKeyTCB(k, tcb) {
    this._live();
    k = this._key(k);
    vec(tcb, 3, 'tcb');
    if (this._mn._x.mnw_seq_set_key_tcb(this._p, k, tcb[0], tcb[1], tcb[2]) !== 0) throw this._fail('tcb');
    return this;
  }
  removeKey(k) {
    this._live();
    if (this._mn._x.mnw_seq_remove_key(this._p, this._key(k)) !== 0) throw this._fail('key');
    return this;
  }
  /** { rotation, translation } modes ('constant', 'linear', 'slerp', 'squad', 'catmull-rom',
   * 'kb'; 'default' or omitted keeps the current one) for the sequence, or for one joint. */
  setInterpolation(modes, joint) {
    this._live();
    object(modes, 'modes');
    const rot = modes.rotation === undefined ? 0 : pick(modes.rotation, INTERPOLATIONS, 'modes.rotation');
    const trans = modes.translation === undefined ? 0 : pick(modes.translation, INTERPOLATIONS, 'modes.translation');
    const j = joint === undefined ? -1 : this.figure.joint(joint, 'joint');
    if (this._mn._x.mnw_seq_set_interp(this._p, j, rot, trans) !== 0) throw this._fail('modes');
    return this;
  }
  /** Keys from a motion (nframes x nq states, e.g. figure.motion.frames): every frame a key,
   * or with options.tol > 0 the fewest keys whose in-betweens stay within tol (length) of
   * every joint. Returns { keys, maxError }. */
  addMotion(frames, options = {}) {
    this._live();
    const nq = this.figure.nq;
    if (!frames || !frames.length || frames.length % nq) fail('frames', `expected nframes x ${nq} numbers`);
    for (let i = 0; i < frames.length; i++) num(frames[i], `frames[${i}]`);
    const first = options.firstFrame === undefined ? 0 : num(options.firstFrame, 'options.firstFrame');
    const tol = options.tol === undefined ? 0 : num(options.tol, 'options.tol');
    const mn = this._mn,
      p = mn._doubles(frames, 'frames');
    return mn._with([p], () => {
      if (mn._x.mnw_seq_add_motion(this._p, p, frames.length / nq, first, tol, this._io) !== 0) throw this._fail('frames');
      const o = mn._f64(this._io, 2);
      return { keys: o[0], maxError: o[1] };
    });
  }
  /** The plain in-between at a frame (clamped to the keys) into the figure: q, frames,
   * positions. */
  sample(frame) {
    this._live();
    num(frame, 'frame');
    if (this._mn._x.mnw_seq_sample(this._p, frame) !== 0) throw this._fail('frame');
    return this.figure;
  }
  /** The plain in-between at a frame as a new state (or into out). */
  sampleQ(frame, out = new Float64Array(this.figure.nq)) {
    this._live();
    num(frame, 'frame');
    if (!(out instanceof Float64Array) || out.length !== this.figure.nq) fail('out', `expected a Float64Array of ${this.figure.nq}`);
    const x = this._mn._x;
    if (x.mnw_seq_sample_q(this._p, frame, this._io) !== 0) throw this._fail('frame');
    out.set(this._mn._f64(this._io, this.figure.nq));
    return out;
  }
  /** A handle of the figure (as ConstraintSystem.addHandle, without `figure`). */
  addHandle(def) {
    this._live();
    object(def, 'handle');
    const type = pick(def.type ?? 'point', HANDLE_TYPES, 'handle.type');
    const joint = this.figure.joint(def.joint ?? 0, 'handle.joint', type === 2);
    const pt = def.point === undefined ? [0, 0, 0] : vec(def.point, 3, 'handle.point');
    const np = def.name ? this._mn._cstr(def.name, 'handle.name') : 0;
    return this._mn._with([np], () => {
      const h = this._mn._x.mnw_seq_add_handle(this._p, type, joint, pt[0], pt[1], pt[2], np);
      if (h < 0) throw this._mn._error('handle');
      return h;
    });
  }
  /** A constraint over frames: as ConstraintSystem.addConstraint plus start, end (active for
   * start <= frame <= end; default every frame) and lock (pin and orient: the target is
   * where the handle is at start). */
  addConstraint(def) {
    this._live();
    const mn = this._mn,
      x = mn._x;
    const { iv, v } = constraintArgs(def, (h, arg) => int(h, arg, 0, x.mnw_seq_count(this._p, 1) - 1));
    iv.push(
      def.targetInterpolation === undefined
        ? 0
        : [2, 5][pick(def.targetInterpolation, ['linear', 'catmull-rom'], 'constraint.targetInterpolation')],
    );
    mn._f64(this._io, v.length).set(v);
    const ip = mn._ints(iv, 'constraint'),
      np = def.name ? mn._cstr(def.name, 'constraint.name') : 0;
    return mn._with([ip, np], () => {
      const c = x.mnw_seq_add_constraint(this._p, ip, this._io, np);
      if (c < 0) throw constraintError(mn);
      return c;
    });
  }
  get handleCount() {
    this._live();
    return this._mn._x.mnw_seq_count(this._p, 1);
  }
  get constraintCount() {
    this._live();
    return this._mn._x.mnw_seq_count(this._p, 2);
  }
  _con(c) {
    return int(c, 'constraint', 0, this._mn._x.mnw_seq_count(this._p, 2) - 1);
  }

  /** An animated constraint's target key (Welman 7.2.1) at key.frame: pin { frame, target },
   * orient { frame, targetRotation }, plane { frame, origin, normal | dir }, line { frame,
   * origin, dir }. Replaces a target key at the same frame. */
  setTargetKey(c, key) {
    this._live();
    c = this._con(c);
    object(key, 'key');
    const v = this._mn._f64(this._io, 11);
    v.fill(0);
    v[0] = num(key.frame, 'key.frame');
    if (key.target !== undefined) v.set(vec(key.target, 3, 'key.target'), 1);
    if (key.origin !== undefined) v.set(vec(key.origin, 3, 'key.origin'), 1);
    const dir = key.normal ?? key.dir;
    if (dir !== undefined) v.set(vec(dir, 3, key.normal !== undefined ? 'key.normal' : 'key.dir'), 4);
    v.set(key.targetRotation === undefined ? [1, 0, 0, 0] : vec(key.targetRotation, 4, 'key.targetRotation'), 7);
    if (this._mn._x.mnw_seq_set_target_key(this._p, c, this._io) !== 0) throw this._fail('key');
    return this;
  }
  targetKeyCount(c) {
    this._live();
    return this._mn._x.mnw_seq_target_key_count(this._p, this._con(c));
  }
  _target(c, k, frame, arg) {
    if (this._mn._x.mnw_seq_target(this._p, this._con(c), k, frame, this._io) !== 0) throw this._fail(arg);
    const o = this._mn._f64(this._io, 11);
    return {
      frame: o[0],
      position: Array.from(o.subarray(1, 4)),
      dir: Array.from(o.subarray(4, 7)),
      rotation: Array.from(o.subarray(7, 11)),
    };
  }
  /** Target key k of constraint c: { frame, position, dir, rotation } (a pin's target and a
   * plane's or line's origin are `position`). */
  targetKey(c, k) {
    this._live();
    return this._target(c, int(k, 'key', 0, Math.max(0, this.targetKeyCount(c) - 1)), 0, 'key');
  }
  /** Constraint c's target at a frame, interpolated between its target keys. */
  targetAt(c, frame) {
    this._live();
    return this._target(c, -1, num(frame, 'frame'), 'frame');
  }
  /** Balance over a sequence (Welman 7.2.1): a centre-of-mass handle and a balance
   * constraint over [start, end] (default every frame). { polygon: 3..16 points, up =
   * [0, 1, 0], margin = 0, start, end }. Returns the constraint's index. */
  addBalance(def) {
    this._live();
    object(def, 'balance');
    const poly = def.polygon;
    if (!Array.isArray(poly) || poly.length < 3 || poly.length > 16) fail('balance.polygon', 'expected 3 to 16 points');
    const v = [
      ...(def.up === undefined ? [0, 1, 0] : vec(def.up, 3, 'balance.up')),
      def.margin === undefined ? 0 : num(def.margin, 'balance.margin'),
      def.start === undefined ? -Infinity : num(def.start, 'balance.start'),
      def.end === undefined ? Infinity : num(def.end, 'balance.end'),
    ];
    poly.forEach((pt, i) => v.push(...vec(pt, 3, `balance.polygon[${i}]`)));
    const mn = this._mn,
      p = mn._doubles(v, 'balance');
    return mn._with([p], () => {
      const c = mn._x.mnw_seq_add_balance(this._p, p, poly.length);
      if (c < 0) throw this._fail('balance');
      return c;
    });
  }

  // ---- edits (Welman 6.1.2): half-open ranges [f0, f1); each returns the edit's record
  _range(f0, f1) {
    num(f0, 'f0');
    num(f1, 'f1');
    if (!(f1 > f0)) fail('range', 'empty: f1 must be after f0');
  }
  _edit(p, arg) {
    if (!p) throw this._fail(arg);
    return new SequenceEdit(this._mn, p, this);
  }
  _clip(clip) {
    if (!(clip instanceof Clip) || clip._mn !== this._mn) fail('clip', 'expected a Clip of this module');
    clip._live('clip');
    if (clip.nq !== this.figure.nq) fail('clip', 'its keys are states of another figure');
    return clip._p;
  }
  /** The keys of [f0, f1) as a clip (frames relative to f0, span f1 - f0). */
  copy(f0, f1) {
    this._live();
    this._range(f0, f1);
    const p = this._mn._x.mnw_seq_copy(this._p, f0, f1);
    if (!p) throw this._fail('range');
    return new Clip(this._mn, p);
  }
  /** Copies the keys of [f0, f1) and removes them (later keys stay put): { clip, edit }. */
  cut(f0, f1) {
    this._live();
    this._range(f0, f1);
    const x = this._mn._x,
      out = this._io;
    const e = x.mnw_seq_cut(this._p, f0, f1, out);
    const edit = this._edit(e, 'range');
    return { clip: new Clip(this._mn, this._mn._i32(out, 1)[0]), edit };
  }
  /** Places the clip's keys at `at` + their frames, replacing the keys of [at, at + span). */
  paste(clip, at) {
    this._live();
    const c = this._clip(clip);
    return this._edit(this._mn._x.mnw_seq_paste(this._p, c, num(at, 'at')), 'clip');
  }
  /** Opens a gap of the clip's span at `at` (later keys move) and places the clip in it. */
  insert(clip, at) {
    this._live();
    const c = this._clip(clip);
    return this._edit(this._mn._x.mnw_seq_insert(this._p, c, num(at, 'at')), 'clip');
  }
  /** Removes the keys of [f0, f1) and closes the gap. */
  delete(f0, f1) {
    this._live();
    this._range(f0, f1);
    return this._edit(this._mn._x.mnw_seq_range_edit(this._p, 0, f0, f1, 0), 'range');
  }
  /** Stretches (factor > 1) or shrinks (0 < factor < 1) [f0, f1) about f0; later keys move
   * by (factor - 1)(f1 - f0). */
  stretch(f0, f1, factor) {
    this._live();
    this._range(f0, f1);
    num(factor, 'factor');
    if (!(factor > 0)) fail('factor', 'must be > 0');
    return this._edit(this._mn._x.mnw_seq_range_edit(this._p, 1, f0, f1, factor), 'factor');
  }
  /** Moves the keys of [f0, f1) by delta frames, replacing keys where they land. */
  slide(f0, f1, delta) {
    this._live();
    this._range(f0, f1);
    return this._edit(this._mn._x.mnw_seq_range_edit(this._p, 2, f0, f1, num(delta, 'delta')), 'delta');
  }
  /** Undoes an edit of this sequence (bit for bit); throws, changing nothing, when the
   * sequence is no longer as the edit left it. */
  undo(edit) {
    this._live();
    this._record(edit);
    if (this._mn._x.mnw_seq_undo(this._p, edit._p) !== 0) throw this._fail('edit');
    return this;
  }
  /** Does an undone edit again. */
  redo(edit) {
    this._live();
    this._record(edit);
    const x = this._mn._x;
    x.mnw_edit_invert(edit._p);
    const s = x.mnw_seq_undo(this._p, edit._p);
    x.mnw_edit_invert(edit._p);
    if (s !== 0) throw this._fail('edit');
    return this;
  }
  _record(edit) {
    if (!(edit instanceof SequenceEdit) || edit.sequence !== this) fail('edit', 'expected an edit of this sequence');
    edit._live('edit');
  }
  /** The constrained in-between at a frame into the figure (warm-started from the last
   * frame solved). options: ConstraintSystem.solve's, plus relax, warmStart, balance,
   * constraints (false: the plain in-between). */
  solveFrame(frame, options = {}) {
    this._live();
    num(frame, 'frame');
    const mn = this._mn,
      dvp = this._io,
      ivp = this._io + 8 * 10,
      outp = this._io + 8 * 14;
    solveOptions(mn, options, dvp, ivp, true);
    const s = mn._x.mnw_seq_solve_frame(this._p, frame, dvp, ivp, outp);
    if (s === 1) throw this._fail('frame');
    if (s !== 0 && s !== 7 && s !== 8) throw this._fail('sequence'); // not a solver outcome
    return solveResult(mn, s, outp);
  }
  dispose() {
    if (!this._p) return;
    for (const e of this._users) e.dispose();
    this._mn._x.mnw_seq_destroy(this._p);
    this._mn._x.mnw_free(this._io);
    this.figure._users.delete(this);
    this._p = 0;
  }
}

// The keys of a clip or of an edit's record, read from module memory: [{ frame, q, tcb }].
function keysOf(mn, ks) {
  const x = mn._x,
    n = x.mnw_keyset_int(ks, 0),
    nq = x.mnw_keyset_int(ks, 1);
  const fr = mn._f64(x.mnw_keyset_ptr(ks, 0), n),
    q = mn._f64(x.mnw_keyset_ptr(ks, 1), n * nq);
  const tcb = mn._f64(x.mnw_keyset_ptr(ks, 2), 3 * n),
    out = [];
  for (let i = 0; i < n; i++)
    out.push({ frame: fr[i], q: new Float64Array(q.subarray(i * nq, (i + 1) * nq)), tcb: Array.from(tcb.subarray(3 * i, 3 * i + 3)) });
  return out;
}

/** Keys taken from a range (Sequence.copy, cut) or made by Marionette.createClip: frames
 * relative to the range's start, and the range's span. Pasted or inserted by a sequence of
 * a figure with the same state size. */
class Clip extends Owned {
  constructor(mn, p) {
    super(mn, p, 'clip');
  }
  get span() {
    this._live();
    return this._mn._x.mnw_keyset_span(this._p);
  }
  get count() {
    this._live();
    return this._mn._x.mnw_keyset_int(this._p, 0);
  }
  get nq() {
    this._live();
    return this._mn._x.mnw_keyset_int(this._p, 1);
  }
  /** [{ frame, q, tcb }] (copies). */
  keys() {
    this._live();
    return keysOf(this._mn, this._p);
  }
  dispose() {
    if (!this._p) return;
    this._mn._x.mnw_keyset_destroy(this._p);
    this._p = 0;
  }
}

/** What an edit did: the keys it removed (as they were) and the keys it added, absolute
 * frames; Sequence.undo(edit) and redo(edit) apply it backwards and forwards. Disposed with
 * its sequence. */
class SequenceEdit extends Owned {
  constructor(mn, p, seq) {
    super(mn, p, 'edit');
    this.sequence = seq;
    seq._users.add(this);
  }
  get removed() {
    this._live();
    return keysOf(this._mn, this._mn._x.mnw_edit_keys(this._p, 0));
  }
  get added() {
    this._live();
    return keysOf(this._mn, this._mn._x.mnw_edit_keys(this._p, 1));
  }
  dispose() {
    if (!this._p) return;
    this._mn._x.mnw_edit_destroy(this._p);
    this.sequence._users.delete(this);
    this._p = 0;
  }
}

/** A clip from keys: { span, keys: [{ frame (0 <= frame < span), q (nq numbers), tcb }] }
 * for a figure (its nq). */
Marionette.prototype.createClip = function createClip(figure, def) {
  if (!(figure instanceof Figure) || figure._mn !== this) fail('figure', 'not a figure of this module');
  figure._live('figure');
  object(def, 'clip');
  const span = num(def.span, 'clip.span');
  if (!(span > 0)) fail('clip.span', 'must be > 0');
  if (!Array.isArray(def.keys)) fail('clip.keys', 'expected an array');
  const nq = figure.nq,
    n = def.keys.length;
  const rows = def.keys.map((k, i) => {
    object(k, `clip.keys[${i}]`);
    const f = num(k.frame, `clip.keys[${i}].frame`);
    if (!(f >= 0 && f < span)) fail(`clip.keys[${i}].frame`, `expected 0 <= frame < span (${span})`);
    return [f, vec(k.q, nq, `clip.keys[${i}].q`), k.tcb === undefined ? [0, 0, 0] : vec(k.tcb, 3, `clip.keys[${i}].tcb`)];
  });
  const x = this._x,
    p = x.mnw_keyset_create(n, nq, span);
  if (!p) throw this._error('clip');
  const fr = this._f64(x.mnw_keyset_ptr(p, 0), n),
    q = this._f64(x.mnw_keyset_ptr(p, 1), n * nq);
  const tcb = this._f64(x.mnw_keyset_ptr(p, 2), 3 * n);
  rows.forEach(([f, s, t], i) => {
    fr[i] = f;
    q.set(s, i * nq);
    tcb.set(t, 3 * i);
  });
  return new Clip(this, p);
};

/** A sequence of a figure: options { fps = 30, rotation = 'slerp', translation = 'linear' }. */
Marionette.prototype.createSequence = function createSequence(figure, options = {}) {
  if (!(figure instanceof Figure) || figure._mn !== this) fail('figure', 'not a figure of this module');
  figure._live('figure');
  object(options, 'options');
  const fps = options.fps === undefined ? 0 : num(options.fps, 'options.fps');
  if (options.fps !== undefined && !(fps > 0)) fail('options.fps', 'must be > 0');
  const rot = options.rotation === undefined ? 0 : pick(options.rotation, INTERPOLATIONS, 'options.rotation');
  const trans = options.translation === undefined ? 0 : pick(options.translation, INTERPOLATIONS, 'options.translation');
  const p = this._x.mnw_seq_create(figure._p, fps, rot, trans);
  if (!p) throw this._error('options');
  return new Sequence(this, p, figure);
};

// ---- layers and time warps (layers.h; docs/animation.md, "Layers")

const LAYER_MODES = ['override', 'additive'];

/** A layer over the sequence's keys: def { name, mode ('override' | 'additive'), keys:
 * [{ frame, q }], weights: [[frame, weight], ...] (eased between keys; none: 1), mask: an
 * array of joints (each with its descendants at 1, the rest 0) or { joint: weight }, warp:
 * time-warp keys (see setTimeWarp) }. Returns the layer's index. */
Sequence.prototype.addLayer = function addLayer(def) {
  this._live();
  object(def, 'layer');
  const mn = this._mn,
    x = mn._x,
    fig = this.figure;
  const mode = def.mode === undefined ? 0 : pick(def.mode, LAYER_MODES, 'layer.mode');
  if (!Array.isArray(def.keys) || !def.keys.length) fail('layer.keys', 'expected an array of { frame, q }');
  const np = def.name ? mn._cstr(String(def.name), 'layer.name') : 0;
  const i = mn._with([np], () => x.mnw_seq_add_layer(this._p, np, mode));
  if (i < 0) throw this._fail('layer');
  def.keys.forEach((k, n) => {
    object(k, `layer.keys[${n}]`);
    const f = num(k.frame, `layer.keys[${n}].frame`);
    const qp = mn._doubles(vec(k.q, fig.nq, `layer.keys[${n}].q`), `layer.keys[${n}].q`);
    mn._with([qp], () => {
      if (x.mnw_seq_layer_set_key(this._p, i, f, qp) < 0) throw this._fail(`layer.keys[${n}]`);
    });
  });
  if (def.weights !== undefined) {
    if (!Array.isArray(def.weights)) fail('layer.weights', 'expected [[frame, weight], ...]');
    const fr = def.weights.map((w, n) => vec(w, 2, `layer.weights[${n}]`)[0]);
    const wv = def.weights.map((w) => w[1]);
    const fp = mn._doubles(fr, 'layer.weights'),
      wp = mn._doubles(wv, 'layer.weights');
    mn._with([fp, wp], () => {
      if (x.mnw_seq_layer_set_weights(this._p, i, fr.length, fp, wp) !== 0) throw this._fail('layer.weights');
    });
  }
  if (def.mask !== undefined) {
    const mask = new Float64Array(fig.jointCount);
    if (Array.isArray(def.mask)) {
      for (const name of def.mask) {
        const j = fig.joint(name, 'layer.mask');
        for (let k = j; k < fig.jointCount; k++) {
          if (k !== j && !isDescendant(fig, k, j)) continue;
          mask[k] = 1;
        }
      }
    } else {
      object(def.mask, 'layer.mask');
      for (const [name, w] of Object.entries(def.mask)) mask[fig.joint(name, 'layer.mask')] = num(w, `layer.mask.${name}`);
    }
    const mp = mn._doubles(mask, 'layer.mask');
    mn._with([mp], () => {
      if (x.mnw_seq_layer_set_mask(this._p, i, mp) !== 0) throw this._fail('layer.mask');
    });
  }
  if (def.warp !== undefined) this.setTimeWarp(def.warp, i);
  return i;
};

function isDescendant(fig, k, j) {
  for (let p = fig.joints[k].parent; p >= 0; p = fig.joints[p].parent) if (p === j) return true;
  return false;
}

/** The layers: [{ name, mode, keyCount, weights: [[frame, weight]], mask (Float64Array per
 * joint, or null: every joint 1), warpKeys }]. */
Object.defineProperty(Sequence.prototype, 'layers', {
  get() {
    this._live();
    const mn = this._mn,
      x = mn._x,
      out = [];
    for (let i = 0, n = x.mnw_seq_layer_count(this._p); i < n; i++) {
      const weights = [];
      for (let k = 0, nw = x.mnw_seq_layer_int(this._p, i, 2); k < nw; k++) {
        x.mnw_seq_layer_weight(this._p, i, k, 0, this._io);
        const o = mn._f64(this._io, 2);
        weights.push([o[0], o[1]]);
      }
      const mp = x.mnw_seq_layer_mask(this._p, i);
      out.push({
        name: mn._str(x.mnw_seq_layer_name(this._p, i)),
        mode: LAYER_MODES[x.mnw_seq_layer_int(this._p, i, 0)],
        keyCount: x.mnw_seq_layer_int(this._p, i, 1),
        weights,
        mask: mp ? new Float64Array(mn._f64(mp, this.figure.jointCount)) : null,
        warpKeys: x.mnw_seq_layer_int(this._p, i, 3),
      });
    }
    return out;
  },
});

/** Layer i's weight at a frame. */
Sequence.prototype.layerWeight = function layerWeight(i, frame) {
  this._live();
  if (this._mn._x.mnw_seq_layer_weight(this._p, int(i, 'layer', 0), -1, num(frame, 'frame'), this._io) !== 0) throw this._fail('layer');
  return this._mn._f64(this._io, 3)[2];
};

/** The time warp of the sequence (layer omitted) or of a layer: keys [[t, s], [t, s, speed],
 * ...] from output frames t to the sequence's (or the layer's) frames s, monotone; [] removes
 * it. */
Sequence.prototype.setTimeWarp = function setTimeWarp(keys, layer = -1) {
  this._live();
  if (!Array.isArray(keys)) fail('warp', 'expected [[t, s], ...]');
  const mn = this._mn,
    n = keys.length;
  const t = [],
    s = [],
    sp = [];
  keys.forEach((k, i) => {
    if (!Array.isArray(k) || (k.length !== 2 && k.length !== 3)) fail(`warp[${i}]`, 'expected [t, s] or [t, s, speed]');
    t.push(num(k[0], `warp[${i}][0]`));
    s.push(num(k[1], `warp[${i}][1]`));
    sp.push(k.length === 3 ? num(k[2], `warp[${i}][2]`) : NaN);
  });
  const tp = mn._doubles(t, 'warp'),
    sp2 = mn._doubles(s, 'warp'),
    vp = mn._doubles(sp, 'warp');
  mn._with([tp, sp2, vp], () => {
    if (mn._x.mnw_seq_set_warp(this._p, layer, n, tp, sp2, vp) !== 0) throw this._fail('warp');
  });
  return this;
};

/** The sequence's frame at output frame t (or layer i's frame at the base's frame t). */
Sequence.prototype.warp = function warp(t, layer = -1) {
  this._live();
  return this._mn._x.mnw_seq_warp(this._p, layer, num(t, 't'));
};

/** The blended in-between (the keys with every layer over them) at a frame, as a new state
 * (or into out). */
Sequence.prototype.sampleBlendQ = function sampleBlendQ(frame, out = new Float64Array(this.figure.nq)) {
  this._live();
  num(frame, 'frame');
  if (!(out instanceof Float64Array) || out.length !== this.figure.nq) fail('out', `expected a Float64Array of ${this.figure.nq}`);
  if (this._mn._x.mnw_seq_sample_blend_q(this._p, frame, this._io) !== 0) throw this._fail('frame');
  out.set(this._mn._f64(this._io, this.figure.nq));
  return out;
};

// ---- takes (takes.h): crossfade, root motion, loops, retiming

function takeFrames(mn, figure, frames, arg) {
  if (!(figure instanceof Figure) || figure._mn !== mn) fail('figure', 'not a figure of this module');
  figure._live('figure');
  if (!(frames instanceof Float64Array) || !frames.length || frames.length % figure.nq)
    fail(arg, `expected a Float64Array of nframes x ${figure.nq}`);
  return frames.length / figure.nq;
}

function takeResult(mn, p, n, nq, arg) {
  if (!p) throw mn._error(arg);
  const frames = new Float64Array(mn._f64(p, n * nq));
  mn._x.mnw_free(p);
  return frames;
}

/** Take a into take b (Float64Arrays of frames, one figure, fps): options { at (A's frame, default
 * its middle), length (blend frames, default half a second), bRange: [b0, b1] (B's frames
 * searched for the phase, 0 <= b0 <= b1; default: the window `marionette anim crossfade`
 * chooses without --b-range, which ends before B's motion of interest), bFrame (B's start, no
 * phase search), lock (default true: planted feet locked) }. Returns { frames, aFrame, bFrame,
 * length, phaseCost, locks, maxViolation, bMin, bMax, bRange: 'auto' | 'given' | null (no
 * search: bFrame given), interestStart, interestEnd (B's motion of interest the window ends
 * before; -1 when none stands out or the range was given) }. */
Marionette.prototype.crossfade = function crossfade(figure, a, b, fps, options = {}) {
  const na = takeFrames(this, figure, a, 'a'),
    nb = takeFrames(this, figure, b, 'b');
  num(fps, 'fps');
  object(options, 'options');
  let range = [0, -1]; // b_max < 0: the window is chosen (mn_crossfade_window)
  if (options.bRange !== undefined) {
    if (!Array.isArray(options.bRange) || options.bRange.length !== 2) fail('options.bRange', 'expected [first, last] frames of b');
    const b0 = int(options.bRange[0], 'options.bRange[0]', 0);
    range = [b0, int(options.bRange[1], 'options.bRange[1]', b0)];
  }
  const opt = [
    options.at === undefined ? -1 : num(options.at, 'options.at'),
    options.length === undefined ? 0 : int(options.length, 'options.length', 2),
    range[0],
    range[1],
    options.lock === false ? 0 : 1,
    options.bFrame === undefined ? -1 : int(options.bFrame, 'options.bFrame', 0),
  ];
  const ap = this._doubles(a, 'a'),
    bp = this._doubles(b, 'b'),
    op = this._doubles(opt, 'options');
  const info = this._scratch;
  return this._with([ap, bp, op], () => {
    const p = this._x.mnw_take_crossfade(figure._p, ap, na, bp, nb, fps, op, info);
    if (!p) throw this._error('options');
    const i = Array.from(this._f64(info, 12));
    const search = options.bFrame === undefined;
    return {
      frames: takeResult(this, p, i[4], figure.nq, 'options'),
      aFrame: i[0],
      bFrame: i[1],
      length: i[2],
      phaseCost: i[3],
      locks: i[5],
      maxViolation: i[6],
      bMin: search ? i[7] : null,
      bMax: search ? i[8] : null,
      bRange: search ? (i[9] ? 'auto' : 'given') : null,
      interestStart: i[10],
      interestEnd: i[11],
    };
  });
};

/** The root's ground motion and heading: { track (nframes x 3: ground e1, e2 (+z, +x for
 * +y up), heading), inPlace (the take with them taken out) }. */
Marionette.prototype.rootMotion = function rootMotion(figure, frames) {
  const n = takeFrames(this, figure, frames, 'frames');
  const qp = this._doubles(frames, 'frames'),
    tp = this._x.mnw_malloc(24 * n);
  return this._with([qp, tp], () => {
    if (this._x.mnw_take_root_extract(figure._p, qp, n, tp, qp) !== 0) throw this._error('frames');
    return { track: new Float64Array(this._f64(tp, 3 * n)), inPlace: new Float64Array(this._f64(qp, n * figure.nq)) };
  });
};

/** The take with a track put back; options { fps, turn (radians per second: the path bent
 * into an arc) }. */
Marionette.prototype.applyRootMotion = function applyRootMotion(figure, inPlace, track, options = {}) {
  const n = takeFrames(this, figure, inPlace, 'inPlace');
  if (!(track instanceof Float64Array) || track.length !== 3 * n) fail('track', `expected a Float64Array of ${3 * n}`);
  const turn = options.turn === undefined ? 0 : num(options.turn, 'options.turn');
  const fps = options.fps === undefined ? 30 : num(options.fps, 'options.fps');
  const qp = this._doubles(inPlace, 'inPlace'),
    tp = this._doubles(track, 'track');
  return this._with([qp, tp], () => {
    if (this._x.mnw_take_root_apply(figure._p, qp, n, tp, fps, turn, qp) !== 0) throw this._error('track');
    return new Float64Array(this._f64(qp, n * figure.nq));
  });
};

/** A seamless loop: options { minLength (frames, default a second), blend, cycles (default 1)
 * }. Returns { frames, start, end, blend, match, step: [e1, e2, heading] }. */
Marionette.prototype.loop = function loop(figure, frames, fps, options = {}) {
  const n = takeFrames(this, figure, frames, 'frames');
  num(fps, 'fps');
  const minLen = options.minLength === undefined ? 0 : int(options.minLength, 'options.minLength', 2);
  const blend = options.blend === undefined ? 0 : int(options.blend, 'options.blend', 1);
  const cycles = options.cycles === undefined ? 1 : int(options.cycles, 'options.cycles', 1, 1000);
  const qp = this._doubles(frames, 'frames'),
    info = this._scratch;
  return this._with([qp], () => {
    const p = this._x.mnw_take_loop(figure._p, qp, n, fps, minLen, blend, cycles, info);
    if (!p) throw this._error('options');
    const i = Array.from(this._f64(info, 8));
    return {
      frames: takeResult(this, p, i[7], figure.nq, 'options'),
      start: i[0],
      end: i[1],
      blend: i[2],
      match: i[3],
      step: i.slice(4, 7),
    };
  });
};

/** A take retimed by warp keys [[t, s], [t, s, speed], ...]; options { ballistic }. Returns
 * { frames, flights, gravity, apex: [in the take, retimed] }. */
Marionette.prototype.retime = function retime(figure, frames, fps, keys, options = {}) {
  const n = takeFrames(this, figure, frames, 'frames');
  num(fps, 'fps');
  if (!Array.isArray(keys) || keys.length < 2) fail('keys', 'expected at least two [t, s] keys');
  const t = keys.map((k, i) => num(k[0], `keys[${i}][0]`)),
    s = keys.map((k, i) => num(k[1], `keys[${i}][1]`));
  const sp = keys.map((k, i) => (k.length > 2 ? num(k[2], `keys[${i}][2]`) : NaN));
  const qp = this._doubles(frames, 'frames'),
    tp = this._doubles(t, 'keys'),
    sp1 = this._doubles(s, 'keys');
  const vp = this._doubles(sp, 'keys'),
    info = this._scratch;
  return this._with([qp, tp, sp1, vp], () => {
    const p = this._x.mnw_take_retime(figure._p, qp, n, fps, keys.length, tp, sp1, vp, options.ballistic ? 1 : 0, info);
    if (!p) throw this._error('keys');
    const i = Array.from(this._f64(info, 5));
    return { frames: takeResult(this, p, i[0], figure.nq, 'keys'), flights: i[1], gravity: i[2], apex: [i[3], i[4]] };
  });
};

export { Sequence, Clip, SequenceEdit };

// ---- soft bodies coupled both ways to a rig (docs/web.md, "Soft bodies")

const SOFT_RESULT = ['status', 'substeps', 'fitIterations', 'residual', 'fitRms', 'maxSpeed'];

/** A soft body: { dim = 3, vertices, triangles, resolution = 12, density = 1000,
 * edgeCompliance = 1e-6, elementCompliance = 0, damping = 0.5, gravity = [0, -9.81, 0],
 * ground = -Infinity, substeps = 5 }. dim 3: a closed surface (vertices n x 3) embedded in
 * a lattice of tetrahedra of `resolution` cubes along its longest side; dim 2: a shape's
 * triangles in the plane (vertices n x 2). Masses from the density (kg/m^3, or kg/m^2). */
Marionette.prototype.createSoftBody = function createSoftBody(def) {
  object(def, 'body');
  const x = this._x;
  const dim = int(def.dim ?? 3, 'body.dim', 2, 3);
  const v = def.vertices;
  if (!v || typeof v.length !== 'number' || v.length < 3 * dim || v.length % dim) fail('body.vertices', `expected nverts x ${dim} numbers`);
  const n = v.length / dim,
    pos = new Float64Array(3 * n);
  for (let i = 0; i < n; i++) for (let k = 0; k < dim; k++) pos[3 * i + k] = num(v[dim * i + k], `body.vertices[${dim * i + k}]`);
  const t = def.triangles;
  if (!t || typeof t.length !== 'number' || t.length < 3 || t.length % 3) fail('body.triangles', 'expected ntris x 3 integers');
  for (let i = 0; i < t.length; i++) int(t[i], `body.triangles[${i}]`, 0, n - 1);
  const res = def.resolution === undefined ? 12 : int(def.resolution, 'body.resolution', 1, 256);
  const g = def.gravity === undefined ? [0, -9.81, 0] : vec(def.gravity, 3, 'body.gravity');
  const opt = (k, d) => (def[k] === undefined ? d : num(def[k], `body.${k}`));
  const ground = def.ground === undefined || def.ground === -Infinity ? -Infinity : num(def.ground, 'body.ground');
  const dv = [
    opt('density', 1000),
    opt('edgeCompliance', 1e-6),
    opt('elementCompliance', 0),
    opt('damping', 0.5),
    g[0],
    g[1],
    g[2],
    ground,
  ];
  if (!(dv[0] > 0)) fail('body.density', 'must be > 0');
  if (dv[1] < 0 || dv[2] < 0 || dv[3] < 0) fail('body', 'compliances and damping must be >= 0');
  const substeps = def.substeps === undefined ? 5 : int(def.substeps, 'body.substeps', 1, 1000);
  const pp = this._doubles(pos, 'body.vertices'),
    tp = this._ints(t, 'body.triangles');
  const dp = this._doubles(dv, 'body');
  const p = this._with([pp, tp, dp], () => x.mnw_soft_create(dim, n, pp, t.length / 3, tp, res, dp, substeps));
  if (!p) throw this._error('body');
  return new SoftBody(this, p, { dim, resolution: res, substeps });
};

/** A soft body, optionally coupled to a rig: driven controllers move it, it moves the free
 * ones (Wu & Umetani 2023). Views (positions(), surface(), poses()) are valid until the
 * module's memory grows (the next allocation); the *Copy() forms are arrays of their own. */
class SoftBody extends Owned {
  constructor(mn, p, info) {
    super(mn, p, 'soft body');
    this.dim = info.dim;
    this.resolution = info.resolution;
    this.substeps = info.substeps;
    this._out = mn._x.mnw_malloc(8 * 16);
    this._driven = new Uint8Array(0);
    this.controllerNames = [];
  }
  _size(k) {
    this._live();
    return this._mn._x.mnw_soft_size(this._p, k);
  }
  get vertexCount() {
    return this._size(0);
  }
  get elementCount() {
    return this._size(1);
  }
  get corners() {
    return this._size(2);
  }
  get surfaceCount() {
    return this._size(3);
  }
  get controllerCount() {
    return this._size(4);
  }
  get grabCount() {
    return this._size(6);
  }
  get coupled() {
    return this._size(8) === 1;
  }
  _f(what, n) {
    this._live();
    const p = this._mn._x.mnw_soft_ptr(this._p, what);
    return p ? this._mn._f64(p, n) : null;
  }
  /** The body's vertices (the lattice's nodes in 3D), vertexCount x 3: a view. */
  positions() {
    return this._f(0, 3 * this.vertexCount);
  }
  positionsCopy() {
    return new Float64Array(this.positions());
  }
  velocities() {
    return this._f(1, 3 * this.vertexCount);
  }
  restPositions() {
    return new Float64Array(this._f(4, 3 * this.vertexCount));
  }
  masses() {
    return new Float64Array(this._f(6, this.vertexCount));
  }
  /** The elements (tetrahedra or triangles), elementCount x corners indices (a copy). */
  elements() {
    this._live();
    const p = this._mn._x.mnw_soft_ptr(this._p, 5);
    return new Int32Array(this._mn._i32(p, this.elementCount * this.corners));
  }
  /** The embedded surface (3D; surfaceCount x 3), carried by the lattice: a view. */
  surface() {
    return this.dim === 3 ? this._f(2, 3 * this.surfaceCount) : this.positions();
  }
  surfaceCopy() {
    return new Float64Array(this.surface());
  }
  /** The controllers' poses (controllerCount x 12: rotation row-major, position): a view. */
  poses() {
    return this._f(3, 12 * this.controllerCount);
  }
  posesCopy() {
    const p = this.poses();
    return p ? new Float64Array(p) : null;
  }
  /** The rig's reproduction of the body at the current poses (vertexCount x 3): a view. */
  rigged() {
    return this._f(7, 3 * this.vertexCount);
  }
  _ctrl(c, arg = 'controller') {
    const k = typeof c === 'string' ? this.controllerNames.indexOf(c) : c;
    if (!Number.isInteger(k) || k < 0 || k >= this.controllerCount) fail(arg, `no controller ${c}`);
    return k;
  }
  /** Couples the body to a rig over the surface's vertices (3D: transferred to the lattice's
   * nodes) or over the body's own vertices (2D, or over: 'nodes'). options: { driven: names or indices,
   * over = 'surface',
   * complianceDriven = 0, complianceFree = 0, enabled = true, drivenRotation = true,
   * fitIterations = 8 }. The rig may be disposed afterwards. */
  couple(rig, options = {}) {
    this._live();
    if (!(rig instanceof Rig) || rig._mn !== this._mn) fail('rig', 'not a rig of this module');
    rig._live('rig');
    object(options, 'options');
    const names = rig.controllerNames,
      flags = new Uint8Array(names.length);
    (options.driven ?? []).forEach((c, i) => {
      const k = typeof c === 'string' ? names.indexOf(c) : c;
      if (!Number.isInteger(k) || k < 0 || k >= names.length) fail(`options.driven[${i}]`, `no controller ${c}`);
      flags[k] = 1;
    });
    const o = (k, d) => (options[k] === undefined ? d : num(options[k], `options.${k}`));
    const dv = [o('complianceDriven', 0), o('complianceFree', 0)];
    const iv = [
      options.enabled === undefined ? 1 : bool(options.enabled, 'options.enabled'),
      options.drivenRotation === undefined ? 1 : bool(options.drivenRotation, 'options.drivenRotation'),
      options.fitIterations === undefined ? 8 : int(options.fitIterations, 'options.fitIterations', 1, 1000),
      options.over === undefined || options.over === 'surface'
        ? 0
        : options.over === 'nodes'
          ? 1
          : fail('options.over', "expected 'surface' or 'nodes'"),
    ];
    const mn = this._mn,
      x = mn._x;
    const fp = x.mnw_malloc(Math.max(names.length, 1)),
      dp = mn._doubles(dv, 'options'),
      ip = mn._ints(iv, 'options');
    new Uint8Array(x.memory.buffer, fp, names.length).set(flags);
    mn._with([fp, dp, ip], () => {
      if (x.mnw_soft_couple(this._p, rig._p, fp, dp, ip) !== 0) throw mn._error('rig');
    });
    this.controllerNames = names;
    this._driven = flags;
    return this;
  }
  /** Whether each controller is driven (a copy). */
  get driven() {
    return Array.from(this._driven, (f) => f === 1);
  }
  /** Makes controller c driven (it stays where it is until drive() moves it) or free. */
  setDriven(c, on) {
    const k = this._ctrl(c),
      flag = bool(on, 'on');
    if (this._driven[k] === flag) return;
    const mn = this._mn,
      x = mn._x,
      fp = x.mnw_malloc(this._driven.length);
    const next = new Uint8Array(this._driven);
    next[k] = flag;
    new Uint8Array(x.memory.buffer, fp, next.length).set(next);
    mn._with([fp], () => {
      if (x.mnw_soft_set_driven(this._p, fp) !== 0) throw mn._error('controller');
    });
    this._driven = next;
  }
  /** Where driven controller c is to be at the end of the next step: 12 numbers (rotation
   * row-major, position), or { R: 9 numbers, p: 3 numbers }. */
  drive(c, pose) {
    const k = this._ctrl(c),
      v = this._mn._f64(this._mn._scratch, 12);
    if (pose && pose.R) {
      v.set(vec(pose.R, 9, 'pose.R'));
      v.set(vec(pose.p, 3, 'pose.p'), 9);
    } else v.set(vec(pose, 12, 'pose'));
    if (!this._driven[k]) fail('controller', `${this.controllerNames[k]} is free: setDriven() it first`);
    if (this._mn._x.mnw_soft_drive(this._p, k, this._mn._scratch) !== 0) throw this._mn._error('controller');
  }
  /** Holds vertex i by a zero-length spring to target (compliance m/N, 0: exactly). */
  grab(i, target, compliance = 0) {
    this._live();
    int(i, 'vertex', 0, this.vertexCount - 1);
    vec(target, 3, 'target');
    if (this._mn._x.mnw_soft_grab(this._p, i, target[0], target[1], target[2], num(compliance, 'compliance')) !== 0)
      throw this._mn._error('vertex');
  }
  /** Releases vertex i's grab (-1 or nothing: every grab). */
  release(i = -1) {
    this._live();
    this._mn._x.mnw_soft_release(this._p, int(i, 'vertex', -1, this.vertexCount - 1));
  }
  /** The k vertices nearest a point (indices, nearest first). */
  nearest(point, k = 1) {
    vec(point, 3, 'point');
    const x = this.positions(),
      n = this.vertexCount,
      d = new Float64Array(n);
    for (let i = 0; i < n; i++) d[i] = (x[3 * i] - point[0]) ** 2 + (x[3 * i + 1] - point[1]) ** 2 + (x[3 * i + 2] - point[2]) ** 2;
    const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => d[a] - d[b]);
    return idx.slice(0, int(k, 'k', 1, n));
  }
  /** One step of dt seconds in `substeps` substeps. The result: { ok, status, substeps,
   * fitIterations, residual, fitRms, maxSpeed, us: { sim, fit, couple, surface, total },
   * message }. A failed step restores the state it started from. */
  step(dt = 1 / 60) {
    this._live();
    const mn = this._mn,
      s = mn._x.mnw_soft_step(this._p, num(dt, 'dt'), this._out);
    const o = mn._f64(this._out, 11),
      r = {};
    SOFT_RESULT.forEach((k, i) => {
      r[k] = o[i];
    });
    r.status = STATUS[o[0]];
    r.ok = o[0] === 0;
    r.us = { sim: o[6], fit: o[7], couple: o[8], surface: o[9], total: o[10] };
    r.message = s === 0 ? '' : mn._str(mn._x.mnw_error_message());
    return r;
  }
  /** The complementary constraint's residual max_j |C_j| / (L M) (NaN when not coupled). */
  residual() {
    this._live();
    return this._mn._x.mnw_soft_residual(this._p);
  }
  /** Back to rest: positions, speeds, grabs, the controllers (the driven set is kept). */
  reset() {
    this._live();
    if (this._mn._x.mnw_soft_reset(this._p) !== 0) throw this._mn._error('body');
  }
  dispose() {
    if (!this._p) return;
    this._mn._x.mnw_soft_destroy(this._p);
    this._mn._x.mnw_free(this._out);
    this._p = 0;
  }
}

export { SoftBody };
