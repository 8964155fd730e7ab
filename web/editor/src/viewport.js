// The views (Welman 6.1.3): three orthographic views (front, side, top) and one perspective
// view in a 2x2 layout, any of which can take the whole work area. One WebGL canvas, one
// scene, four cameras drawn with the scissor. The figure is drawn as bones and joint spheres
// (its skinned mesh too when the figure document has a skin), locks as markers.
import * as THREE from 'three';
import { feetPolygon } from './anim/animate.js';
import { mirrorName } from './anim/mirror.js';

export const VIEW_NAMES = ['front', 'side', 'top', 'perspective'];
export const RING_PX = 46; // the rotate handle's radius on screen
const LABELS = { front: 'Front', side: 'Side', top: 'Top', perspective: 'Perspective' };

const COLORS = {
  background: 0x1d2126,
  backgroundPersp: 0x23282e,
  bone: 0xc9ced6,
  joint: 0x8fa3b8,
  selected: 0xffb02e,
  chain: 0x5fb3ff,
  locked: 0xe0566b,
  grid: 0x3a4048,
  gridCenter: 0x56606b,
  pin: 0xe0566b,
  plane: 0x4fc08d,
  orient: 0xc678dd,
  goal: 0xffe066,
};

/**
 * Joints at one place that make one compound joint (a chain of frames with zero offsets, each
 * the only child of the one before: the stick figure's three-hinge shoulder) drawn and picked
 * as one "site". Body parts that merely start at their parent's place (a CMU skeleton's
 * LHipJoint, RHipJoint and LowerBack at the Hips, LThumb at the hand) are sites of their own,
 * marked `samePlace`: picking prefers the parent among them and lists them by name.
 */
export function jointSites(figure) {
  const pos = figure.positions,
    joints = figure.joints;
  const siteOf = new Int32Array(joints.length);
  const childCount = new Int32Array(joints.length);
  for (const jt of joints) if (jt.parent >= 0) childCount[jt.parent]++;
  const sites = [];
  for (let j = 0; j < joints.length; j++) {
    const p = joints[j].parent;
    const here =
      p >= 0 &&
      Math.hypot(pos[3 * j] - pos[3 * p], pos[3 * j + 1] - pos[3 * p + 1], pos[3 * j + 2] - pos[3 * p + 2]) < 1e-9 &&
      figureOffsetZero(figure, j);
    const sp = here ? sites[siteOf[p]] : null;
    if (here && childCount[p] === 1 && sp.joints[sp.joints.length - 1] === p) {
      siteOf[j] = siteOf[p];
      sp.joints.push(j);
    } else {
      siteOf[j] = sites.length;
      sites.push({ joints: [j], parent: p >= 0 ? siteOf[p] : -1, children: [], samePlace: here });
    }
  }
  for (let s = 0; s < sites.length; s++) if (sites[s].parent >= 0) sites[sites[s].parent].children.push(s);
  for (const s of sites) s.depth = s.parent >= 0 ? sites[s.parent].depth + 1 : 0;
  // the site's name and joint: its last joint (the one carrying the body part)
  for (const s of sites) s.joint = s.joints[s.joints.length - 1];
  return { sites, siteOf };
}

/**
 * The rest rotations' transposes of the joints a skin's controllers follow, and the rotation
 * B taking the rig's bind space to the world: the frame of three far apart pivots matched to
 * the frame of their joints' rest places (exact when the mesh has one bind transform).
 */
export function skinBind(figure, controllers, ctrlJoint) {
  const keep = Float64Array.from(figure.q);
  figure.setQ(figure.restQ).fk();
  const f = figure.frames,
    p = figure.positions;
  const restRot = ctrlJoint.map((j) => {
    if (j < 0) return new THREE.Matrix3();
    const b = 12 * j;
    return new THREE.Matrix3().set(f[b], f[b + 1], f[b + 2], f[b + 3], f[b + 4], f[b + 5], f[b + 6], f[b + 7], f[b + 8]).transpose();
  });
  const pairs = controllers
    .map((c, i) =>
      ctrlJoint[i] < 0
        ? null
        : [new THREE.Vector3(...c.pivot), new THREE.Vector3(p[3 * ctrlJoint[i]], p[3 * ctrlJoint[i] + 1], p[3 * ctrlJoint[i] + 2])],
    )
    .filter(Boolean);
  figure.setQ(keep).fk();
  const bind = new THREE.Matrix3();
  if (pairs.length < 3) return { restRot, bind };
  // three pivots spanning the largest triangle
  let best = null,
    area = 0;
  const n = pairs.length,
    e1 = new THREE.Vector3(),
    e2 = new THREE.Vector3();
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      for (let c = b + 1; c < n; c++) {
        e1.subVectors(pairs[b][0], pairs[a][0]);
        e2.subVectors(pairs[c][0], pairs[a][0]);
        const s = e1.cross(e2).length();
        if (s > area) {
          area = s;
          best = [a, b, c];
        }
      }
    }
  }
  if (!best) return { restRot, bind };
  const frameOf = (k) => {
    const [a, b, c] = best.map((i) => pairs[i][k]);
    const x = b.clone().sub(a).normalize(),
      z = x.clone().cross(c.clone().sub(a)).normalize(),
      y = z.clone().cross(x);
    return new THREE.Matrix3().set(x.x, y.x, z.x, x.y, y.y, z.y, x.z, y.z, z.z);
  };
  bind.multiplyMatrices(frameOf(1), frameOf(0).transpose());
  return { restRot, bind };
}

// the offset is zero in every pose (the rest pose tells, independently of q)
function figureOffsetZero(figure, j) {
  return figure._zeroOffset ? figure._zeroOffset[j] : true;
}

export class Viewport {
  constructor(container, store) {
    this.store = store;
    this.container = container;
    this.layout = store.settings.layout ?? 'quad'; // 'quad' or a view name
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(window.devicePixelRatio || 1);
    this.renderer.setScissorTest(true);
    this.canvas = this.renderer.domElement;
    this.canvas.id = 'view-canvas';
    container.appendChild(this.canvas);
    this.overlay = document.createElement('div');
    this.overlay.id = 'view-overlay';
    container.appendChild(this.overlay);
    this.scene = new THREE.Scene();
    this._dirty = true;
    this._ghosts = [];
    this.highlight = { selected: null, chain: new Set(), locked: new Set(), multi: new Set() };
    this._buildLights();
    this._buildGrid();
    this._buildCameras();
    this._buildCells();
    this.figureGroup = new THREE.Group();
    this.scene.add(this.figureGroup);
    this.lockGroup = new THREE.Group();
    this.scene.add(this.lockGroup);
    this.goalMarker = new THREE.Mesh(
      new THREE.SphereGeometry(1, 16, 12),
      new THREE.MeshBasicMaterial({ color: COLORS.goal, transparent: true, opacity: 0.85, depthTest: false }),
    );
    this.goalMarker.renderOrder = 10;
    this.goalMarker.visible = false;
    this.scene.add(this.goalMarker);
    this.balanceGroup = new THREE.Group();
    this.scene.add(this.balanceGroup);
    this.balance = null; // { com, polygon, inside } while the overlay is shown
    this.setFigure(store.figure);
    store.on('pose', () => {
      this.updatePose();
    });
    store.on('settings', () => {
      this.updateBalance();
      if (!!this.store.settings.alignViews !== this._aligned) this.frameAll();
    });
    store.on('doc', () => {
      this.updateLocks();
    });
    new ResizeObserver(() => this.resize()).observe(container);
    this.resize();
    // a lost WebGL context (the GPU reset, too many contexts): three.js rebuilds its state
    // when the browser gives it back; until then nothing is drawn and a notice says why, and
    // then every view is drawn again (nothing else would ask for a frame)
    this.contextLost = false;
    this.canvas.addEventListener('webglcontextlost', (e) => {
      e.preventDefault();
      this.contextLost = true;
      this.overlay.classList.add('context-lost');
      this.store.emit('context', { lost: true });
    });
    this.canvas.addEventListener('webglcontextrestored', () => {
      this.contextLost = false;
      this.overlay.classList.remove('context-lost');
      this.renderer.setScissorTest(true); // three.js starts the new context's state afresh
      this.resize();
      this.store.emit('context', { lost: false });
    });
    const loop = () => {
      if (this._dirty && !this.contextLost) this.render();
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  }

  // ---- scene set-up ----
  _buildLights() {
    this.scene.add(new THREE.HemisphereLight(0xdde6f0, 0x2a2f36, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.4);
    sun.position.set(2, 4, 3);
    this.scene.add(sun);
  }
  _buildGrid() {
    this.grid = new THREE.GridHelper(4, 40, COLORS.gridCenter, COLORS.grid);
    this.grid.material.transparent = true;
    this.grid.material.opacity = 0.9;
    this.scene.add(this.grid);
    const axes = new THREE.AxesHelper(0.25);
    axes.material.depthTest = false;
    axes.renderOrder = 1;
    this.scene.add(axes);
  }
  _buildCameras() {
    const ortho = () => new THREE.OrthographicCamera(-1, 1, 1, -1, -100, 100);
    this.cameras = { front: ortho(), side: ortho(), top: ortho(), perspective: new THREE.PerspectiveCamera(40, 1, 0.01, 200) };
    this.orbit = { target: new THREE.Vector3(0, 0.9, 0), yaw: 0.6, pitch: 0.25, dist: 4.2 };
    this.orthoState = {
      front: { center: new THREE.Vector3(0, 0.9, 0), size: 2.2 },
      side: { center: new THREE.Vector3(0, 0.9, 0), size: 2.2 },
      top: { center: new THREE.Vector3(0, 0, 0), size: 2.2 },
    };
  }
  _buildCells() {
    this.cells = {};
    for (const name of VIEW_NAMES) {
      const cell = document.createElement('div');
      cell.className = 'view-cell';
      cell.dataset.view = name;
      const bar = document.createElement('div');
      bar.className = 'view-bar';
      const label = document.createElement('span');
      label.className = 'view-label';
      label.textContent = LABELS[name];
      label.title = 'Double-click: this view takes the work area (keys 1-4, 0 for all four)';
      label.addEventListener('dblclick', () => this.toggleMaximize(name));
      const max = document.createElement('button');
      max.className = 'view-max';
      max.title = 'Maximise / restore (keys 1-4, 0)';
      max.textContent = '\u2922';
      max.addEventListener('click', () => this.toggleMaximize(name));
      bar.append(label, max);
      cell.append(bar);
      this.overlay.append(cell);
      this.cells[name] = cell;
    }
  }

  /** The figure's meshes: a bone per segment, a sphere per site, the skin if any. */
  setFigure(figure) {
    this.figure = figure;
    this.figureGroup.clear();
    const q = Float64Array.from(figure.q);
    figure.reset().fk();
    // zero offsets: the joint's origin coincides with its parent's at rest
    const pos = figure.positions;
    figure._zeroOffset = figure.joints.map(
      (j, i) =>
        j.parent >= 0 &&
        Math.hypot(pos[3 * i] - pos[3 * j.parent], pos[3 * i + 1] - pos[3 * j.parent + 1], pos[3 * i + 2] - pos[3 * j.parent + 2]) < 1e-9,
    );
    const { sites, siteOf } = jointSites(figure);
    figure.setQ(q).fk();
    this.sites = sites;
    this.siteOf = siteOf;
    // the figure's size now (a capture skeleton in centimetres is a hundred times the stick
    // figure): joints and markers are drawn, and the views framed, in proportion
    const box = this.figureBounds(),
      ext = box.getSize(new THREE.Vector3());
    const size = Math.max(ext.x, ext.y, ext.z) || 1;
    this.size = size;
    this.jointRadius = size * 0.02;
    this.grid.scale.setScalar(size / 1.8);
    this.grid.position.set(0, Math.min(0, box.min.y), 0);
    this.boneMat = new THREE.MeshStandardMaterial({ color: COLORS.bone, roughness: 0.55, metalness: 0.05 });
    const boneGeo = new THREE.CylinderGeometry(1, 1, 1, 10, 1);
    boneGeo.translate(0, 0.5, 0);
    this.bones = [];
    for (const s of sites) {
      if (s.parent < 0) continue;
      const mesh = new THREE.Mesh(boneGeo, this.boneMat.clone());
      mesh.userData = { site: s, kind: 'bone' };
      this.bones.push(mesh);
      this.figureGroup.add(mesh);
    }
    const sphere = new THREE.SphereGeometry(1, 20, 14);
    this.spheres = sites.map((s, i) => {
      const mesh = new THREE.Mesh(sphere, new THREE.MeshStandardMaterial({ color: COLORS.joint, roughness: 0.4 }));
      mesh.userData = { site: i, joint: s.joint, kind: 'joint' };
      mesh.scale.setScalar(this.jointRadius);
      this.figureGroup.add(mesh);
      return mesh;
    });
    this._buildSkin();
    this.updatePose();
    this.updateLocks();
    this._navigated = false;
    this.frameAll();
  }

  /**
   * The figure's forward direction as an angle about the vertical (0: facing +z): the
   * horizontal vector from its right joints to their left partners (paired by name, as the
   * mirror pairs them), turned a quarter about the vertical. 0 without such pairs.
   */
  figureYaw() {
    const fig = this.figure,
      names = fig.jointNames,
      p = fig.positions;
    let lx = 0,
      lz = 0;
    names.forEach((n, j) => {
      const partner = mirrorName(n),
        k = partner ? names.indexOf(partner) : -1;
      if (k < 0 || !(/left/i.test(n) || /^[Ll][A-Z_.\- ]/.test(n) || /[_.\- ][Ll]$/.test(n))) return;
      lx += p[3 * j] - p[3 * k];
      lz += p[3 * j + 2] - p[3 * k + 2];
    });
    return Math.hypot(lx, lz) < 1e-9 * this.size ? 0 : Math.atan2(-lz, lx);
  }

  /** The box holding the figure now: its joints, and its skin when it has one. */
  figureBounds() {
    const box = new THREE.Box3(),
      p = this.figure.positions,
      v = new THREE.Vector3();
    for (let j = 0; j < this.figure.jointCount; j++) box.expandByPoint(v.set(p[3 * j], p[3 * j + 1], p[3 * j + 2]));
    if (this.skin) {
      this.skin.geo.computeBoundingBox();
      if (!this.skin.geo.boundingBox.isEmpty()) box.union(this.skin.geo.boundingBox);
    }
    if (box.isEmpty()) box.set(new THREE.Vector3(-0.5, 0, -0.5), new THREE.Vector3(0.5, 1, 0.5));
    return box;
  }

  /**
   * Every view fits the figure (on open, and the F or Home key): each orthographic view
   * centred on the figure's box, all at one scale, the box filling 80 % of the view that
   * needs the most room (unless that leaves the front or side view mostly empty); the
   * perspective camera looking at the box's centre from as far as holds its bounding sphere.
   */
  frameAll(box = this.figureBounds()) {
    this._fitBox = box.clone(); // a change of the views' shapes frames this box again
    // the views turned to face the figure (editor.json `alignViews`), else the world's axes
    this._aligned = !!this.store.settings.alignViews;
    this.viewYaw = this._aligned ? this.figureYaw() : 0;
    const c = box.getCenter(new THREE.Vector3()),
      e = box.getSize(new THREE.Vector3());
    if (this.viewYaw) {
      // the extents across and along the figure's own forward axis
      const f = new THREE.Vector3(Math.sin(this.viewYaw), 0, Math.cos(this.viewYaw)),
        l = new THREE.Vector3(f.z, 0, -f.x);
      let x0 = Infinity,
        x1 = -Infinity,
        z0 = Infinity,
        z1 = -Infinity;
      const p = this.figure.positions,
        v = new THREE.Vector3();
      for (let j = 0; j < this.figure.jointCount; j++) {
        v.set(p[3 * j], p[3 * j + 1], p[3 * j + 2]);
        x0 = Math.min(x0, v.dot(l));
        x1 = Math.max(x1, v.dot(l));
        z0 = Math.min(z0, v.dot(f));
        z1 = Math.max(z1, v.dot(f));
      }
      e.x = x1 - x0;
      e.z = z1 - z0;
    }
    const pad = 4 * this.jointRadius,
      rects = this.rects();
    const aspect = (n) => {
      const r = rects[n];
      return r && r.w > 1 && r.h > 1 ? r.w / r.h : 1;
    };
    const across = { front: [e.x, e.y], side: [e.z, e.y], top: [e.x, e.z] };
    // every orthographic view at one scale, the one the view that needs the most room
    // needs: a length measures the same on screen in each, and a figure's footprint seen
    // from the top is not blown up. A figure that would then fill less than five eighths of
    // the front or side view's room (a robot arm along x, seen end-on from the side) has
    // each view fit what it sees instead, never more than three times closer than the view
    // that needs the most room
    const need = {};
    for (const n of ['front', 'side', 'top']) {
      const [w, h] = across[n];
      need[n] = Math.max(h + pad, (w + pad) / aspect(n)) / 0.8;
    }
    const size = Math.max(need.front, need.side, need.top);
    const oneScale = Math.min(need.front, need.side) >= 0.625 * size;
    for (const n of ['front', 'side', 'top'])
      this.orthoState[n] = { center: c.clone(), size: oneScale ? size : Math.max(need[n], size / 3) };
    const cam = this.cameras.perspective,
      radius = Math.max(0.5 * e.length(), this.jointRadius * 5);
    const half = (cam.fov * Math.PI) / 360,
      halfH = Math.atan(Math.tan(half) * aspect('perspective'));
    const dist = (radius / Math.sin(Math.min(half, halfH))) * 1.05;
    this.orbit = { target: c.clone(), yaw: this.orbit?.yaw ?? 0.6, pitch: this.orbit?.pitch ?? 0.22, dist };
    this._navigated = false;
    this.requestRender();
  }

  /**
   * The skinned mesh (a glTF figure). The rig's vertices and pivots are in the mesh's bind
   * space (glTF POSITION, and each joint's place from its inverse bind matrix), which is not
   * the figure's world when the file turns its scene (a Z-up file under a Y-up root); the
   * rig's pose of a controller is its rotation from the bind pose and its pivot's place.
   * So, with the bind pose the figure's rest pose (as the glTF reader builds the figure), a
   * controller following joint j is posed at R_j(q) R_j(rest)^T B and the joint's place,
   * B the rotation taking bind space to the world, fitted from the pivots and the joints'
   * rest places (glTF 3.7.3: joint world x inverse bind).
   */
  _buildSkin() {
    this.skin = null;
    const doc = this.store.figureDoc;
    if (!doc || !doc.skin || !this.store.m.createRig) return;
    try {
      const rig = this.store.m.createRig(doc.skin);
      const geo = new THREE.BufferGeometry();
      const verts = rig.deform(rig.restPose());
      geo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(verts.length), 3));
      if (doc.skin.triangles) geo.setIndex(Array.from(doc.skin.triangles));
      const mesh = new THREE.Mesh(
        geo,
        new THREE.MeshStandardMaterial({
          color: 0xb9a58f,
          roughness: 0.7,
          transparent: true,
          opacity: 0.55,
          side: THREE.DoubleSide,
          depthWrite: false,
        }),
      );
      mesh.name = 'skin';
      this.figureGroup.add(mesh);
      const ctrlJoint = doc.skin.controllers.map((c) => c.joint ?? -1);
      const { restRot, bind } = skinBind(this.figure, doc.skin.controllers, ctrlJoint);
      this.skin = { rig, mesh, geo, ctrlJoint, rest: rig.restPose(), restRot, bind };
    } catch (e) {
      console.warn(`skin: ${e.message}`);
    }
  }

  /** The rig's pose of the figure's pose (see _buildSkin): controllerCount x 12. */
  skinPose() {
    const sk = this.skin;
    if (!sk) return null;
    const f = this.figure.frames,
      p = this.figure.positions,
      pose = new Float64Array(sk.rest);
    const R = new THREE.Matrix3(),
      M = new THREE.Matrix3();
    sk.ctrlJoint.forEach((j, c) => {
      if (j < 0) return;
      const b = 12 * j;
      R.set(f[b], f[b + 1], f[b + 2], f[b + 3], f[b + 4], f[b + 5], f[b + 6], f[b + 7], f[b + 8]);
      M.multiplyMatrices(R, sk.restRot[c]).multiply(sk.bind); // row-major out of column-major
      const e = M.elements;
      pose.set([e[0], e[3], e[6], e[1], e[4], e[7], e[2], e[5], e[8], p[3 * j], p[3 * j + 1], p[3 * j + 2]], 12 * c);
    });
    return pose;
  }

  _updateSkin() {
    const sk = this.skin;
    if (!sk) return;
    const v = sk.rig.deform(this.skinPose()),
      attr = sk.geo.getAttribute('position');
    for (let i = 0; i < v.length; i++) attr.array[i] = v[i];
    attr.needsUpdate = true;
    sk.geo.computeVertexNormals();
    sk.geo.computeBoundingSphere();
  }

  /**
   * Polygon objects on joints (objects.js; Welman 6.1.1): a mesh each, in its joint's frame,
   * placed on the joint's world frame at every pose.
   */
  setObjects(objects) {
    for (const o of this.objects ?? []) {
      this.figureGroup.remove(o.mesh);
      o.mesh.geometry.dispose();
    }
    // translucent, as the skin: the joints and bones inside stay in sight
    this.objectMat ??= new THREE.MeshStandardMaterial({
      color: 0x9db4c8,
      roughness: 0.6,
      metalness: 0.05,
      side: THREE.DoubleSide,
      transparent: true,
      opacity: 0.6,
      depthWrite: false,
    });
    this.objects = objects.map((o) => {
      const geo = new THREE.BufferGeometry();
      geo.setAttribute('position', new THREE.BufferAttribute(Float32Array.from(o.positions), 3));
      geo.setIndex(Array.from(o.triangles));
      geo.computeVertexNormals();
      const mesh = new THREE.Mesh(geo, this.objectMat);
      mesh.name = `object ${o.path}`;
      mesh.matrixAutoUpdate = false;
      mesh.userData = { kind: 'object', joint: o.joint };
      this.figureGroup.add(mesh);
      return { ...o, mesh };
    });
    this._updateObjects();
    this.requestRender();
  }

  _updateObjects() {
    const f = this.figure.frames;
    for (const o of this.objects ?? []) {
      const b = 12 * o.joint; // rotation row-major, then the origin
      o.mesh.matrix.set(
        f[b],
        f[b + 1],
        f[b + 2],
        f[b + 9],
        f[b + 3],
        f[b + 4],
        f[b + 5],
        f[b + 10],
        f[b + 6],
        f[b + 7],
        f[b + 8],
        f[b + 11],
        0,
        0,
        0,
        1,
      );
      o.mesh.matrixWorldNeedsUpdate = true;
    }
  }

  /** The world positions of the drawn vertices of joint j's object (null when it has none). */
  objectVertices(j) {
    const o = (this.objects ?? []).find((x) => x.joint === j);
    if (!o) return null;
    o.mesh.updateMatrixWorld(true);
    const a = o.mesh.geometry.getAttribute('position'),
      v = new THREE.Vector3(),
      out = [];
    for (let i = 0; i < a.count; i++) out.push(v.fromBufferAttribute(a, i).applyMatrix4(o.mesh.matrixWorld).toArray());
    return out;
  }

  jointPosition(j) {
    const p = this.figure.positions;
    return new THREE.Vector3(p[3 * j], p[3 * j + 1], p[3 * j + 2]);
  }

  updatePose() {
    // every mouse event of a drag comes here: the positions read once, no new objects
    const p = this.figure.positions.subarray(0, 3 * this.figure.jointCount),
      up = UP,
      d = _d;
    for (const mesh of this.bones) {
      const s = mesh.userData.site;
      const a = 3 * this.sites[s.parent].joint,
        b = 3 * s.joints[0];
      d.set(p[b] - p[a], p[b + 1] - p[a + 1], p[b + 2] - p[a + 2]);
      const len = d.length();
      mesh.position.set(p[a], p[a + 1], p[a + 2]);
      mesh.quaternion.setFromUnitVectors(up, len > 1e-12 ? d.divideScalar(len) : up);
      const r = this.jointRadius * 0.62;
      mesh.scale.set(r, Math.max(len, 1e-6), r);
    }
    this.spheres.forEach((m, i) => {
      const j = 3 * this.sites[i].joint;
      m.position.set(p[j], p[j + 1], p[j + 2]);
    });
    this._updateObjects();
    this._updateSkin();
    this.updateBalance();
    this._applyColors();
    this.requestRender();
  }

  /**
   * The balance overlay (Welman 7.2.1; editor.json `balanceOverlay`, on by default for a
   * figure with feet and masses): the centre of mass (the module's com handle) as a dot with a line down
   * to the ground, and the support polygon of the feet (the convex hull on the ground of
   * discs around the foot and toe joints, as the Animate menu's balance uses): green while
   * the centre of mass is over it, red when not.
   */
  updateBalance() {
    this.balance = null;
    const fig = this.figure,
      on = this.store.settings.balanceOverlay;
    const poly = on === false ? null : feetPolygon(fig);
    if (!poly || poly.length < 3) {
      this.balanceGroup.clear();
      return;
    }
    if (this._comFig !== fig) {
      this._comSys?.dispose();
      this._comSys = null;
      this._comFig = fig;
      try {
        this._comSys = this.store.m.createConstraintSystem([fig], { maxHandles: 1, maxConstraints: 1 });
        this._comHandle = this._comSys.addHandle({ type: 'com', joint: -1 });
      } catch {
        // a figure without masses (a BVH skeleton) has no centre of mass: no overlay
        this._comSys?.dispose();
        this._comSys = null;
      }
    }
    if (!this._comSys) {
      this.balanceGroup.clear();
      return;
    }
    this._comSys.invalidate();
    const com = new THREE.Vector3(...this._comSys.handleValue(this._comHandle).position);
    const inside = insidePolygon(poly, com);
    const color = inside ? COLORS.plane : COLORS.locked,
      ground = poly[0][1];
    // the overlay's objects are made once and moved every pose (a drag redraws it at every
    // mouse event: new geometry each time was half the page's work per event, and garbage)
    const o = this._balanceObjects ?? (this._balanceObjects = this._makeBalanceObjects());
    if (!this.balanceGroup.children.length) this.balanceGroup.add(o.loop, o.drop, o.dot, o.foot);
    const lp = o.loop.geometry.getAttribute('position');
    poly.forEach((p, i) => lp.setXYZ(i, p[0], p[1], p[2]));
    lp.setXYZ(poly.length, poly[0][0], poly[0][1], poly[0][2]);
    lp.needsUpdate = true;
    o.loop.geometry.setDrawRange(0, poly.length + 1);
    const dp = o.drop.geometry.getAttribute('position');
    dp.setXYZ(0, com.x, com.y, com.z);
    dp.setXYZ(1, com.x, ground, com.z);
    dp.needsUpdate = true;
    o.dot.position.copy(com);
    o.dot.scale.setScalar(this.jointRadius * 0.9);
    o.foot.position.set(com.x, ground, com.z);
    o.foot.scale.setScalar(this.jointRadius * 0.9 * 0.6);
    o.lineMat.color.setHex(color);
    o.dotMat.color.setHex(color);
    this.balance = { com: com.toArray(), polygon: poly, inside };
  }
  // the balance overlay's objects: the polygon's loop (room for 16 corners and the closing
  // one), the line down to the ground, the dot and its foot (a unit sphere, scaled)
  _makeBalanceObjects() {
    const lineMat = new THREE.LineBasicMaterial({ depthTest: false, transparent: true, opacity: 0.9 }),
      dotMat = new THREE.MeshBasicMaterial({ depthTest: false });
    const line = (n) => {
      const geo = new THREE.BufferGeometry();
      geo.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * n), 3).setUsage(THREE.DynamicDrawUsage));
      const l = new THREE.Line(geo, lineMat);
      l.frustumCulled = false; // its bounds change every pose
      return l;
    };
    const sphere = new THREE.SphereGeometry(1, 12, 8);
    const o = { lineMat, dotMat, loop: line(17), drop: line(2), dot: new THREE.Mesh(sphere, dotMat), foot: new THREE.Mesh(sphere, dotMat) };
    for (const x of [o.loop, o.drop, o.dot, o.foot]) x.renderOrder = 7;
    return o;
  }

  /** Colours: the selected site, the chain a drag moves, locked parts. */
  setHighlight({ selected = null, chain = new Set(), locked = new Set(), multi = this.highlight?.multi ?? new Set() } = {}) {
    this.highlight = { selected, chain, locked, multi };
    this._applyColors();
    this.requestRender();
  }
  _applyColors() {
    const { selected, chain, locked, multi } = this.highlight;
    this.spheres.forEach((m, i) => {
      const j = this.sites[i].joint;
      const c =
        j === selected || multi.has(j) ? COLORS.selected : locked.has(j) ? COLORS.locked : chain.has(j) ? COLORS.chain : COLORS.joint;
      m.material.color.setHex(c);
      m.scale.setScalar(this.jointRadius * (j === selected || multi.has(j) ? 1.45 : 1));
    });
    for (const b of this.bones) {
      const s = b.userData.site;
      const moving = s.joints.some((j) => chain.has(j)) || this.sites[s.parent].joints.some((j) => chain.has(j));
      b.material.color.setHex(moving ? 0xa9cdf0 : COLORS.bone);
    }
  }

  /** Lock markers: pins (a diamond and a ring), planes (a translucent square), orientations (axes). */
  updateLocks(liveTargets) {
    this.lockGroup.clear();
    this.lockMarkers = []; // {name, point}: what a press on a marker picks
    const doc = this.store.doc;
    if (!doc) return;
    const handles = new Map((doc.handles ?? []).map((h) => [h.name, h]));
    const r = this.jointRadius;
    for (const c of doc.constraints ?? []) {
      const h = handles.get(c.handle);
      if (!h) continue;
      const j = h.joint !== undefined ? this.figure.joints.findIndex((x) => x.name === h.joint) : -1;
      const at =
        liveTargets?.get(c.name) ??
        (c.target && c.type === 'pin' ? new THREE.Vector3(...c.target) : j >= 0 ? this.jointPosition(j) : new THREE.Vector3());
      if (c.type === 'pin') {
        const m = new THREE.Mesh(
          new THREE.OctahedronGeometry(r * 1.6),
          new THREE.MeshBasicMaterial({ color: COLORS.pin, wireframe: false, transparent: true, opacity: 0.9, depthTest: false }),
        );
        m.position.copy(at);
        m.renderOrder = 5;
        m.userData = { lock: c.name, kind: 'lock' };
        this.lockGroup.add(m);
        this.lockMarkers.push({ name: c.name, point: at.clone() });
        const ring = new THREE.Mesh(
          new THREE.TorusGeometry(r * 2.6, r * 0.25, 8, 32),
          new THREE.MeshBasicMaterial({ color: COLORS.pin, depthTest: false }),
        );
        ring.rotation.x = Math.PI / 2;
        ring.position.copy(at);
        ring.renderOrder = 5;
        this.lockGroup.add(ring);
      } else if (c.type === 'plane') {
        const n = new THREE.Vector3(...(c.normal ?? [0, 1, 0])).normalize();
        const m = new THREE.Mesh(
          new THREE.PlaneGeometry(this.size * 0.35, this.size * 0.35),
          new THREE.MeshBasicMaterial({ color: COLORS.plane, transparent: true, opacity: 0.28, side: THREE.DoubleSide, depthWrite: false }),
        );
        m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 0, 1), n);
        m.position.copy(c.origin ? new THREE.Vector3(...c.origin) : at);
        this.lockGroup.add(m);
        const edge = new THREE.LineSegments(new THREE.EdgesGeometry(m.geometry), new THREE.LineBasicMaterial({ color: COLORS.plane }));
        edge.quaternion.copy(m.quaternion);
        edge.position.copy(m.position);
        this.lockGroup.add(edge);
        this.lockMarkers.push({ name: c.name, point: m.position.clone() });
      } else if (c.type === 'equal' && j >= 0) {
        // two parts held together (two figures' hands): a line between them and a ring at each
        const h2 = handles.get(c.handle2);
        const j2 = h2?.joint !== undefined ? this.figure.joints.findIndex((x) => x.name === h2.joint) : -1;
        if (j2 < 0) continue;
        const a = this.jointPosition(j),
          b = this.jointPosition(j2);
        const line = new THREE.Line(
          new THREE.BufferGeometry().setFromPoints([a, b]),
          new THREE.LineBasicMaterial({ color: COLORS.pin, depthTest: false }),
        );
        line.renderOrder = 5;
        line.userData = { lock: c.name, kind: 'lock', joints: [j, j2] };
        this.lockGroup.add(line);
        for (const p of [a, b]) {
          const ring = new THREE.Mesh(
            new THREE.TorusGeometry(r * 2, r * 0.25, 8, 32),
            new THREE.MeshBasicMaterial({ color: COLORS.pin, depthTest: false }),
          );
          ring.position.copy(p);
          ring.renderOrder = 5;
          this.lockGroup.add(ring);
        }
      } else if (c.type === 'orient' && j >= 0) {
        // the target's axes (the frame the lock holds), at the part
        const f = this.figure.frames,
          p = this.jointPosition(j);
        const t = c.target ? new THREE.Quaternion(c.target[1], c.target[2], c.target[3], c.target[0]).normalize() : null;
        const len = r * 5;
        for (let k = 0; k < 3; k++) {
          if (c.axis && 'xyz'[k] !== c.axis) continue;
          const dir = t
            ? new THREE.Vector3(k === 0 ? 1 : 0, k === 1 ? 1 : 0, k === 2 ? 1 : 0).applyQuaternion(t)
            : new THREE.Vector3(f[12 * j + k], f[12 * j + 3 + k], f[12 * j + 6 + k]);
          const arrow = new THREE.ArrowHelper(dir, p, len, [0xff5f56, 0x4fc08d, 0x5fa8ff][k], r * 1.4, r * 0.9);
          arrow.traverse((o) => {
            if (o.material) {
              o.material.depthTest = false;
            }
            o.renderOrder = 6;
          });
          this.lockGroup.add(arrow);
        }
      }
    }
    this.requestRender();
  }

  /** Onion skin (used by the animation UI): translucent figures at the given states. */
  setGhosts(qs, opacity = 0.25) {
    for (const g of this._ghosts) this.scene.remove(g);
    this._ghosts = [];
    if (!qs || !qs.length) {
      this.requestRender();
      return;
    }
    const fig = this.figure,
      keep = Float64Array.from(fig.q);
    const mat = new THREE.LineBasicMaterial({ color: 0x9ab8d8, transparent: true, opacity });
    for (const q of qs) {
      fig.setQ(q).fk();
      const pts = [];
      for (const s of this.sites) {
        if (s.parent < 0) continue;
        pts.push(this.jointPosition(this.sites[s.parent].joint), this.jointPosition(s.joints[0]));
      }
      const g = new THREE.LineSegments(new THREE.BufferGeometry().setFromPoints(pts), mat);
      this._ghosts.push(g);
      this.scene.add(g);
    }
    fig.setQ(keep).fk();
    this.requestRender();
  }

  showGoal(p) {
    if (!p) this.goalMarker.visible = false;
    else {
      this.goalMarker.visible = true;
      this.goalMarker.position.copy(p);
      this.goalMarker.scale.setScalar(this.jointRadius * 0.7);
    }
    this.requestRender();
  }

  // ---- layout and cameras ----
  toggleMaximize(name) {
    this.setLayout(this.layout === name ? 'quad' : name);
  }
  setLayout(layout) {
    this.layout = layout;
    this.store.setSettings({ layout });
    this.resize();
  }
  /** Each view's rectangle in CSS pixels relative to the container. */
  rects() {
    const w = this.container.clientWidth,
      h = this.container.clientHeight,
      out = {};
    if (this.layout !== 'quad') {
      for (const n of VIEW_NAMES) out[n] = n === this.layout ? { x: 0, y: 0, w, h } : null;
      return out;
    }
    const hw = Math.floor(w / 2),
      hh = Math.floor(h / 2);
    out.front = { x: 0, y: 0, w: hw - 1, h: hh - 1 };
    out.side = { x: hw + 1, y: 0, w: w - hw - 1, h: hh - 1 };
    out.top = { x: 0, y: hh + 1, w: hw - 1, h: h - hh - 1 };
    out.perspective = { x: hw + 1, y: hh + 1, w: w - hw - 1, h: h - hh - 1 };
    return out;
  }
  resize() {
    const w = this.container.clientWidth,
      h = this.container.clientHeight;
    if (!w || !h) return;
    this.renderer.setSize(w, h, false);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${h}px`;
    const rects = this.rects();
    for (const n of VIEW_NAMES) {
      const r = rects[n],
        cell = this.cells[n];
      cell.hidden = !r;
      if (r) Object.assign(cell.style, { left: `${r.x}px`, top: `${r.y}px`, width: `${r.w}px`, height: `${r.h}px` });
      cell.classList.toggle('maximized', this.layout === n);
    }
    if (!this._navigated && this._fitBox) this.frameAll(this._fitBox); // the views' shapes changed
    this.requestRender();
  }
  _updateCamera(name, r) {
    const cam = this.cameras[name],
      aspect = r.w / r.h;
    if (name === 'perspective') {
      const o = this.orbit;
      cam.aspect = aspect;
      cam.near = o.dist / 200;
      cam.far = o.dist * 200;
      cam.position.set(
        o.target.x + o.dist * Math.cos(o.pitch) * Math.sin(o.yaw),
        o.target.y + o.dist * Math.sin(o.pitch),
        o.target.z + o.dist * Math.cos(o.pitch) * Math.cos(o.yaw),
      );
      cam.up.set(0, 1, 0);
      cam.lookAt(o.target);
    } else {
      const st = this.orthoState[name],
        half = st.size / 2;
      cam.left = -half * aspect;
      cam.right = half * aspect;
      cam.top = half;
      cam.bottom = -half;
      const c = st.center,
        back = 50 * this.size; // the whole figure between near and far
      cam.near = -back;
      cam.far = 3 * back;
      // front looks at the figure's front (+z, or its own forward axis when the views face
      // it), side at its left, top down with its front at the bottom
      const sy = Math.sin(this.viewYaw ?? 0),
        cy = Math.cos(this.viewYaw ?? 0);
      if (name === 'front') {
        cam.position.set(c.x + back * sy, c.y, c.z + back * cy);
        cam.up.set(0, 1, 0);
      }
      if (name === 'side') {
        cam.position.set(c.x + back * cy, c.y, c.z - back * sy);
        cam.up.set(0, 1, 0);
      }
      if (name === 'top') {
        cam.position.set(c.x, c.y + back, c.z);
        cam.up.set(-sy, 0, -cy);
      }
      cam.lookAt(c);
    }
    cam.updateProjectionMatrix();
    cam.updateMatrixWorld();
  }
  requestRender() {
    this._dirty = true;
  }
  render() {
    this._dirty = false;
    const rects = this.rects(),
      H = this.container.clientHeight;
    for (const n of VIEW_NAMES) {
      const r = rects[n];
      if (!r || r.w < 2 || r.h < 2) continue;
      this._updateCamera(n, r);
      const y = H - r.y - r.h;
      this.renderer.setViewport(r.x, y, r.w, r.h);
      this.renderer.setScissor(r.x, y, r.w, r.h);
      this.renderer.setClearColor(n === 'perspective' ? COLORS.backgroundPersp : COLORS.background);
      this.renderer.clear();
      this.grid.visible = true;
      this.renderer.render(this.scene, this.cameras[n]);
    }
    this.updateRings();
  }

  /**
   * The rotate handle: a ring of RING_PX pixels around the selected joint in every view (a
   * circle on the page, over the canvas); pressing on it and dragging turns the part about
   * the view's axis (main.js, Poser.beginRotate).
   */
  updateRings() {
    this._rings ??= {};
    const j = this.highlight.selected,
      rects = this.rects(),
      box = this.container.getBoundingClientRect();
    for (const n of VIEW_NAMES) {
      let ring = this._rings[n];
      if (!ring) {
        ring = this._rings[n] = document.createElement('div');
        ring.className = 'rotate-ring';
        ring.dataset.view = n;
        this.overlay.append(ring);
      }
      const p = j === null || j === undefined || !rects[n] ? null : this.screen(j, n);
      const r = rects[n];
      const inside = p && r && p.x - box.left >= r.x && p.x - box.left <= r.x + r.w && p.y - box.top >= r.y && p.y - box.top <= r.y + r.h;
      ring.hidden = !inside;
      if (inside) {
        Object.assign(ring.style, {
          left: `${p.x - box.left - RING_PX}px`,
          top: `${p.y - box.top - RING_PX}px`,
          width: `${2 * RING_PX}px`,
          height: `${2 * RING_PX}px`,
        });
      }
    }
  }
  /** Is a page point on the selected joint's ring in a view? Returns its centre or null. */
  onRing(clientX, clientY, view) {
    const j = this.highlight.selected;
    if (j === null || j === undefined) return null;
    const p = this.screen(j, view);
    if (!p) return null;
    return Math.abs(Math.hypot(clientX - p.x, clientY - p.y) - RING_PX) <= 6 ? p : null;
  }
  /** The direction a view looks along (world), for a turn about it. */
  viewAxis(view) {
    const r = this.rects()[view];
    if (r) this._updateCamera(view, r);
    return new THREE.Vector3(0, 0, -1).applyQuaternion(this.cameras[view].quaternion).normalize();
  }

  // ---- picking and projection ----
  /** The view under a page point, with normalised device coordinates. */
  viewAt(clientX, clientY) {
    const box = this.container.getBoundingClientRect(),
      rects = this.rects();
    const x = clientX - box.left,
      y = clientY - box.top;
    for (const n of VIEW_NAMES) {
      const r = rects[n];
      if (r && x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h) {
        this._updateCamera(n, r);
        return { view: n, ndc: new THREE.Vector2(((x - r.x) / r.w) * 2 - 1, -((y - r.y) / r.h) * 2 + 1), rect: r };
      }
    }
    return null;
  }
  /** The ray through a page point in a view (Welman Fig. 6.3). */
  rayAt(view, ndc) {
    const ray = new THREE.Raycaster();
    ray.setFromCamera(ndc, this.cameras[view]);
    return ray;
  }
  /**
   * The joint (site) under a page point. A site whose own sphere holds the point comes before
   * one merely within a few pixels of it; then the nearest; among sites at one place (within
   * half a pixel on screen) the parent before its child. `others`: every site at the picked
   * place in the world (the joints sharing it, parent first), for the picker among them.
   */
  pick(clientX, clientY) {
    const v = this.viewAt(clientX, clientY);
    if (!v) return null;
    const r = this.rects()[v.view],
      cam = this.cameras[v.view];
    // a sphere's radius in pixels: the orthographic scale, or the perspective at its depth
    const radiusPx = (p) => {
      if (v.view !== 'perspective') return (this.jointRadius / this.orthoState[v.view].size) * r.h;
      const d = Math.max(1e-9, p.distanceTo(cam.position));
      return (this.jointRadius / (2 * d * Math.tan((cam.fov * Math.PI) / 360))) * r.h;
    };
    const found = [];
    for (let i = 0; i < this.sites.length; i++) {
      const p = this.jointPosition(this.sites[i].joint),
        s = this.project(p, v.view);
      if (!s) continue;
      const d = Math.hypot(s.x - clientX, s.y - clientY);
      if (d < 14) found.push({ i, d, x: s.x, y: s.y, hit: d <= Math.max(3, radiusPx(p) * 1.45) });
    }
    if (!found.length) return { view: v.view, joint: null, ndc: v.ndc, others: [] };
    const depth = (f) => this.sites[f.i].depth;
    found.sort((a, b) => b.hit - a.hit || (Math.abs(a.d - b.d) > 0.5 ? a.d - b.d : depth(a) - depth(b)));
    const top = found[0];
    const at = this.jointPosition(this.sites[top.i].joint),
      eps = 1e-6 * this.size;
    const others = found
      .filter((f) => this.jointPosition(this.sites[f.i].joint).distanceTo(at) <= eps)
      .sort((a, b) => depth(a) - depth(b))
      .map((f) => this.sites[f.i].joint);
    return { view: v.view, joint: this.sites[top.i].joint, ndc: v.ndc, others, sphere: top.hit };
  }
  /** Page pixels of a world point in a view, or null when the view is hidden. */
  project(p, view) {
    const r = this.rects()[view];
    if (!r) return null;
    this._updateCamera(view, r);
    const v = p.clone().project(this.cameras[view]);
    const box = this.container.getBoundingClientRect();
    return { x: box.left + r.x + ((v.x + 1) / 2) * r.w, y: box.top + r.y + ((1 - v.y) / 2) * r.h };
  }
  screen(joint, view) {
    return this.project(this.jointPosition(joint), view);
  }
  /** Page pixels of a lock's marker (a pin's target, a plane's origin) in a view. */
  lockScreen(name, view) {
    const m = (this.lockMarkers ?? []).find((x) => x.name === name);
    return m ? this.project(m.point, view) : null;
  }
  /** The lock markers within a few pixels of a page point, nearest first: [{name, d}]. */
  pickLocks(clientX, clientY) {
    const v = this.viewAt(clientX, clientY);
    if (!v) return [];
    const out = [];
    for (const m of this.lockMarkers ?? []) {
      const s = this.project(m.point, v.view);
      const d = s ? Math.hypot(s.x - clientX, s.y - clientY) : Infinity;
      if (d < 14) out.push({ name: m.name, d });
    }
    return out.sort((a, b) => a.d - b.d);
  }

  // ---- navigation: the perspective view orbits, every view pans and zooms ----
  orbitBy(dx, dy) {
    this._navigated = true;
    this.orbit.yaw -= dx * 0.008;
    this.orbit.pitch = Math.max(-1.45, Math.min(1.45, this.orbit.pitch + dy * 0.008));
    this.requestRender();
  }
  zoom(view, factor) {
    this._navigated = true;
    if (view === 'perspective') this.orbit.dist = Math.max(0.05, this.orbit.dist * factor);
    else this.orthoState[view].size = Math.max(0.01, this.orthoState[view].size * factor);
    this.requestRender();
  }
  pan(view, dxPix, dyPix) {
    const r = this.rects()[view];
    if (!r) return;
    this._navigated = true;
    const cam = this.cameras[view];
    const right = new THREE.Vector3().setFromMatrixColumn(cam.matrixWorld, 0);
    const up = new THREE.Vector3().setFromMatrixColumn(cam.matrixWorld, 1);
    const scale =
      view === 'perspective' ? (2 * this.orbit.dist * Math.tan((cam.fov * Math.PI) / 360)) / r.h : this.orthoState[view].size / r.h;
    const d = right.multiplyScalar(-dxPix * scale).add(up.multiplyScalar(dyPix * scale));
    (view === 'perspective' ? this.orbit.target : this.orthoState[view].center).add(d);
    this.requestRender();
  }
}

// is the point's ground projection (x, z) inside the convex polygon?
// scratch for updatePose
const UP = new THREE.Vector3(0, 1, 0),
  _d = new THREE.Vector3();

function insidePolygon(poly, p) {
  let sign = 0;
  for (let i = 0; i < poly.length; i++) {
    const a = poly[i],
      b = poly[(i + 1) % poly.length];
    const c = (b[0] - a[0]) * (p.z - a[2]) - (b[2] - a[2]) * (p.x - a[0]);
    if (c !== 0) {
      if (sign && Math.sign(c) !== sign) return false;
      sign = Math.sign(c);
    }
  }
  return true;
}
