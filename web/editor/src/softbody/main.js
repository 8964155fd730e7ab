// The soft-body page (docs/softbody-browser.md): a character (CesiumMan, its skin read with
// three.js's GLTFLoader) embedded in a lattice of tetrahedra, or a 2D shape triangulated in
// the plane, coupled both ways to its controllers in the WebAssembly module (Wu & Umetani
// 2023, "Two-Way Coupling of Skinning Transformations and Position Based Dynamics"; the
// seed's IK for linear blend skinning fits the free controllers every substep). Drag a
// controller (driven while dragged, or kept driven by Pin), grab the body (its nearest
// vertices pulled by zero-length springs), play the character's walk driving its bones,
// pause, reset, export the take. One step of 1/60 s (5 substeps) per displayed frame.
// Exposes window.marionette for the tests.
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { GLTFExporter } from 'three/examples/jsm/exporters/GLTFExporter.js';
import { load } from '../../../marionette.mjs';
import { gingerbread } from './shapes.js';

const DT = 1 / 60;
const TAKE_MAX = 7200; // frames kept for the export (two minutes)
const SCENES = {
  // kg/m^3 (3D) or kg/m^2 (2D), m/N; damping per second
  cesiumman: { dim: 3, density: 1000, edgeCompliance: 2e-6, damping: 1, grabCompliance: 1e-6, grabCount: 8 },
  gingerbread: { dim: 2, density: 10, edgeCompliance: 1e-4, damping: 1, grabCompliance: 1e-6, grabCount: 6 },
};
const COLORS = { free: 0x5fb3ff, driven: 0xffb02e, pinned: 0xe0566b, bone: 0x8fa3b8 };

const params = new URLSearchParams(location.search);
const SUBSTEPS = Math.min(100, Math.max(1, Math.round(Number(params.get('substeps') ?? 5)) || 5));
const $ = (id) => document.getElementById(id);
const view = $('sb-view');

// ---- three.js: one canvas, a perspective camera (3D) or an orthographic one (2D)
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
view.prepend(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0x1d2126);
scene.add(new THREE.HemisphereLight(0xffffff, 0x30343a, 1.4));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(2, 4, 3);
scene.add(sun);
const persp = new THREE.PerspectiveCamera(35, 1, 0.01, 100);
const ortho = new THREE.OrthographicCamera(-1, 1, 1, -1, -10, 10);
let camera = persp;
const orbit = new OrbitControls(persp, renderer.domElement);
orbit.enableDamping = false;
const grid = new THREE.GridHelper(4, 20, 0x56606b, 0x3a4048);
scene.add(grid);
// the grab's spring: from the grabbed nodes' centre to where the mouse holds them
const spring = new THREE.Line(
  new THREE.BufferGeometry().setAttribute('position', new THREE.BufferAttribute(new Float32Array(6), 3)),
  new THREE.LineBasicMaterial({ color: 0xffe066, depthTest: false }),
);
spring.renderOrder = 3;
spring.frustumCulled = false;
spring.visible = false;
scene.add(spring);

const st = {
  mn: null,
  kind: null,
  sb: null,
  cfg: null,
  names: [],
  parents: [],
  pinned: new Set(),
  selected: -1,
  running: true,
  walking: false,
  walkTime: 0,
  frame: 0,
  times: [],
  take: [],
  last: null,
  drag: null,
  display: null,
  outline: null,
  spheres: [],
  bones: null,
  char: null,
  shape: null,
  resolution: 24,
  grabbed: [],
};

function resize() {
  const w = view.clientWidth,
    h = view.clientHeight;
  renderer.setSize(w, h, false);
  persp.aspect = w / h;
  persp.updateProjectionMatrix();
  const half = 0.62,
    a = w / h;
  ortho.left = -half * a;
  ortho.right = half * a;
  ortho.top = half;
  ortho.bottom = -half;
  ortho.position.set(0, 0.45, 5);
  ortho.updateProjectionMatrix();
}
window.addEventListener('resize', resize);

// ---- the character: CesiumMan's skin as three.js reads it
async function loadCharacter() {
  const gltf = await new GLTFLoader().loadAsync(params.get('glb') ?? 'CesiumMan.glb');
  const root = gltf.scene;
  root.updateMatrixWorld(true);
  let skinned = null;
  root.traverse((o) => {
    if (o.isSkinnedMesh && !skinned) skinned = o;
  });
  if (!skinned) throw new Error('CesiumMan.glb: no skinned mesh');
  const geo = skinned.geometry,
    pos = geo.attributes.position,
    n = pos.count;
  // the rest surface: the bind mesh skinned at the nodes' rest pose, in the world (y up)
  const vertices = new Float64Array(3 * n),
    v = new THREE.Vector3();
  for (let i = 0; i < n; i++) {
    v.fromBufferAttribute(pos, i);
    skinned.applyBoneTransform(i, v);
    v.applyMatrix4(skinned.matrixWorld);
    vertices[3 * i] = v.x;
    vertices[3 * i + 1] = v.y;
    vertices[3 * i + 2] = v.z;
  }
  const triangles = Array.from(geo.index.array);
  const bones = skinned.skeleton.bones,
    used = new Set();
  const controllers = bones.map((b, j) => {
    let name = b.name || `bone${j}`;
    while (used.has(name)) name += '_';
    used.add(name);
    const p = new THREE.Vector3().setFromMatrixPosition(b.matrixWorld);
    return { name, kind: 'point', pivot: [p.x, p.y, p.z] };
  });
  // JOINTS_0 / WEIGHTS_0: four influences a vertex (index 0 with weight 0: an empty slot)
  const si = geo.attributes.skinIndex,
    sw = geo.attributes.skinWeight;
  const weightIndex = new Array(4 * n),
    weight = new Array(4 * n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 4; k++) {
      weightIndex[4 * i + k] = si.getComponent(i, k);
      weight[4 * i + k] = Math.max(0, sw.getComponent(i, k));
    }
  }
  const W0 = bones.map((b) => b.matrixWorld.clone()),
    W0inv = W0.map((m) => m.clone().invert());
  const rest = bones.map((b) => [b.position.clone(), b.quaternion.clone(), b.scale.clone()]);
  const parents = bones.map((b) => bones.indexOf(b.parent));
  const mixer = new THREE.AnimationMixer(root);
  const clip = gltf.animations[0] ?? null;
  if (clip) mixer.clipAction(clip).play();
  return {
    vertices,
    triangles,
    bones,
    W0,
    W0inv,
    rest,
    parents,
    mixer,
    clip,
    root,
    material: skinned.material,
    uv: geo.attributes.uv,
    skin: { dim: 3, vertices, controllers, influences: 4, weightIndex, weight },
  };
}

// The bones' poses at walk time t as controller poses: A_j = W_j(t) W_j(rest)^-1 takes the
// rest to the animated bone (the inverse bind matrices cancel), R its rotation, d = A_j(pivot).
const A = new THREE.Matrix4(),
  P = new THREE.Vector3();
function walkPose(t, j) {
  const c = st.char;
  A.multiplyMatrices(c.bones[j].matrixWorld, c.W0inv[j]);
  const e = A.elements,
    pv = c.skin.controllers[j].pivot;
  P.set(pv[0], pv[1], pv[2]).applyMatrix4(A);
  return [e[0], e[4], e[8], e[1], e[5], e[9], e[2], e[6], e[10], P.x, P.y, P.z];
}
function sampleWalk(t) {
  const c = st.char;
  c.mixer.setTime(t % c.clip.duration);
  c.root.updateMatrixWorld(true);
}

// ---- building a scene
function clearScene() {
  if (st.display) {
    scene.remove(st.display);
    st.display.geometry.dispose();
    st.display = null;
  }
  if (st.outline) {
    scene.remove(st.outline);
    st.outline.geometry.dispose();
    st.outline = null;
  }
  if (st.bones) {
    scene.remove(st.bones);
    st.bones.geometry.dispose();
    st.bones = null;
  }
  for (const s of st.spheres) scene.remove(s);
  st.spheres = [];
  st.sb?.dispose();
  st.sb = null;
}

async function setScene(kind, resolution = st.resolution) {
  if (!SCENES[kind]) throw new Error(`no scene ${kind}`);
  clearScene();
  st.kind = kind;
  st.cfg = SCENES[kind];
  st.resolution = resolution;
  st.walking = false;
  st.drag = null;
  st.selected = -1;
  const mn = st.mn,
    cfg = { ...st.cfg };
  if (params.has('compliance')) cfg.edgeCompliance = Number(params.get('compliance'));
  let skin, geometry, sphereR;
  if (kind === 'cesiumman') {
    st.char ??= await loadCharacter();
    const c = st.char;
    let ymin = Infinity;
    for (let i = 1; i < c.vertices.length; i += 3) ymin = Math.min(ymin, c.vertices[i]);
    st.sb = mn.createSoftBody({
      vertices: c.vertices,
      triangles: c.triangles,
      resolution,
      density: cfg.density,
      edgeCompliance: cfg.edgeCompliance,
      damping: cfg.damping,
      substeps: SUBSTEPS,
      ground: params.get('ground') === 'none' ? -Infinity : ymin - 0.01,
    });
    skin = c.skin;
    st.parents = c.parents;
    geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array(c.vertices), 3));
    if (c.uv) geometry.setAttribute('uv', c.uv);
    geometry.setIndex(c.triangles);
    st.display = new THREE.Mesh(geometry, c.material);
    grid.position.y = ymin - 0.01;
    camera = persp;
    orbit.enabled = true;
    persp.position.set(3.1, 1.35, 1.5);
    orbit.target.set(0, 0.75, 0);
    orbit.update();
    sphereR = 0.022;
    st.pinned = new Set([0]); // the skeleton's root: the body hangs from it
  } else {
    st.shape ??= gingerbread();
    const g = st.shape;
    st.sb = mn.createSoftBody({
      dim: 2,
      vertices: g.vertices,
      triangles: g.triangles,
      density: cfg.density,
      edgeCompliance: cfg.edgeCompliance,
      damping: cfg.damping,
      substeps: SUBSTEPS,
      ground: 0,
    });
    skin = g.skin;
    st.parents = skin.controllers.map(() => -1);
    geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array((3 * g.vertices.length) / 2), 3));
    geometry.setIndex(g.triangles);
    st.display = new THREE.Mesh(geometry, new THREE.MeshBasicMaterial({ color: 0xc07a3c, side: THREE.DoubleSide }));
    const og = new THREE.BufferGeometry();
    og.setAttribute('position', new THREE.BufferAttribute(new Float32Array((3 * g.vertices.length) / 2), 3));
    og.setIndex(g.outline);
    st.outline = new THREE.LineSegments(og, new THREE.LineBasicMaterial({ color: 0xfff4e0 }));
    scene.add(st.outline);
    grid.position.y = 0;
    camera = ortho;
    orbit.enabled = false;
    sphereR = 0.018;
    st.pinned = new Set([0]); // the head
  }
  st.display.frustumCulled = false;
  scene.add(st.display);
  const rig = mn.createRig(skin);
  try {
    st.sb.couple(rig, { driven: [...st.pinned], drivenRotation: params.get('drivenRotation') !== '0' });
  } finally {
    rig.dispose();
  }
  st.names = st.sb.controllerNames;
  const sg = new THREE.SphereGeometry(sphereR, 16, 12);
  for (let j = 0; j < st.names.length; j++) {
    const s = new THREE.Mesh(sg, new THREE.MeshBasicMaterial({ color: COLORS.free, depthTest: false }));
    s.renderOrder = 2;
    st.spheres.push(s);
    scene.add(s);
  }
  const pairs = [];
  st.parents.forEach((p, j) => {
    if (p >= 0) pairs.push(p, j);
  });
  const bg = new THREE.BufferGeometry();
  bg.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * st.names.length), 3));
  bg.setIndex(pairs);
  st.bones = new THREE.LineSegments(
    bg,
    new THREE.LineBasicMaterial({ color: COLORS.bone, depthTest: false, transparent: true, opacity: 0.7 }),
  );
  st.bones.renderOrder = 1;
  scene.add(st.bones);
  $('sb-scene').value = kind;
  $('sb-res').disabled = kind !== 'cesiumman';
  $('sb-walk').disabled = kind !== 'cesiumman' || !st.char?.clip;
  $('sb-export-glb').disabled = kind !== 'cesiumman';
  $('sb-credit').hidden = kind !== 'cesiumman';
  $('sb-nodes').textContent = st.sb.vertexCount.toLocaleString('en');
  $('sb-elems').textContent = `${st.sb.elementCount.toLocaleString('en')} ${st.sb.corners === 4 ? 'tets' : 'triangles'}`;
  resetTake();
  buildList();
  resize();
  updateDisplay();
}

function resetTake() {
  st.frame = 0;
  st.times = [];
  st.take = [];
  st.walkTime = 0;
  st.last = null;
}

// ---- the controllers' list and colours
function buildList() {
  const ul = $('sb-ctrls');
  ul.textContent = '';
  st.names.forEach((name, j) => {
    const li = document.createElement('li');
    li.dataset.j = j;
    li.innerHTML = '<span class="dot"></span><span></span>';
    li.lastChild.textContent = name;
    li.addEventListener('click', () => select(j));
    ul.append(li);
  });
  refreshList();
}
function refreshList() {
  const driven = st.sb.driven;
  [...$('sb-ctrls').children].forEach((li, j) => {
    li.classList.toggle('selected', j === st.selected);
    li.classList.toggle('driven', driven[j]);
    li.classList.toggle('pinned', st.pinned.has(j));
  });
  $('sb-pin').classList.toggle('on', st.selected >= 0 && st.pinned.has(st.selected));
  $('sb-pin').disabled = st.selected < 0;
  $('sb-run').textContent = st.running ? 'Pause' : 'Run';
  $('sb-walk').classList.toggle('on', st.walking);
}
function select(j) {
  st.selected = j;
  refreshList();
}
/** The driven set: pinned, dragged, or every bone while the walk plays. */
function syncDriven() {
  const sb = st.sb,
    want = st.names.map((_, j) => st.walking || st.pinned.has(j) || (st.drag?.kind === 'ctrl' && st.drag.j === j));
  const now = sb.driven;
  want.forEach((w, j) => {
    if (w !== now[j]) sb.setDriven(j, w);
  });
  refreshList();
}
function pin(j, on) {
  if (on) st.pinned.add(j);
  else st.pinned.delete(j);
  syncDriven();
}

// ---- stepping and drawing
function ctrlPos(j) {
  const P = st.sb.poses();
  return [P[12 * j + 9], P[12 * j + 10], P[12 * j + 11]];
}

function stepOnce() {
  const sb = st.sb,
    t0 = performance.now();
  if (st.walking) {
    st.walkTime += DT;
    sampleWalk(st.walkTime);
    for (let j = 0; j < st.names.length; j++) if (!(st.drag?.kind === 'ctrl' && st.drag.j === j)) sb.drive(j, walkPose(st.walkTime, j));
  }
  const d = st.drag;
  if (d?.kind === 'ctrl' && d.target) {
    const P = sb.poses();
    sb.drive(d.j, [...(d.R ?? P.subarray(12 * d.j, 12 * d.j + 9)), ...d.target]);
  } else if (d?.kind === 'mesh' && d.target) {
    d.idx.forEach((i, k) =>
      sb.grab(i, [d.target[0] + d.off[3 * k], d.target[1] + d.off[3 * k + 1], d.target[2] + d.off[3 * k + 2]], st.cfg.grabCompliance),
    );
  }
  const r = sb.step(DT);
  const ms = performance.now() - t0;
  st.last = { ...r, ms };
  st.times.push(ms);
  if (st.times.length > 600) st.times.shift();
  if (st.take.length < TAKE_MAX) st.take.push(sb.posesCopy());
  st.frame++;
  return r;
}

function updateDisplay() {
  const sb = st.sb,
    geo = st.display.geometry,
    a = geo.attributes.position.array;
  const s = sb.surface();
  a.set(s);
  geo.attributes.position.needsUpdate = true;
  if (sb.dim === 3) geo.computeVertexNormals();
  geo.computeBoundingSphere();
  if (st.outline) {
    st.outline.geometry.attributes.position.array.set(s);
    st.outline.geometry.attributes.position.needsUpdate = true;
  }
  const driven = sb.driven,
    bp = st.bones.geometry.attributes.position.array;
  st.spheres.forEach((m, j) => {
    const p = ctrlPos(j);
    m.position.set(p[0], p[1], p[2]);
    bp.set(p, 3 * j);
    m.material.color.setHex(st.pinned.has(j) ? COLORS.pinned : driven[j] ? COLORS.driven : COLORS.free);
    m.scale.setScalar(j === st.selected ? 1.5 : 1);
  });
  st.bones.geometry.attributes.position.needsUpdate = true;
  const d = st.drag;
  spring.visible = d?.kind === 'mesh' && !!d.target;
  if (spring.visible) {
    const x = sb.positions(),
      c = [0, 0, 0],
      sp = spring.geometry.attributes.position;
    for (const i of d.idx) for (let k = 0; k < 3; k++) c[k] += x[3 * i + k] / d.idx.length;
    sp.setXYZ(0, c[0], c[1], c[2]);
    sp.setXYZ(1, d.target[0], d.target[1], d.target[2]);
    sp.needsUpdate = true;
  }
  const r = st.last;
  $('sb-frame').textContent = st.frame;
  if (r) {
    $('sb-ms').textContent = `${r.ms.toFixed(2)} ms`;
    $('sb-median').textContent = `${median(st.times.slice(-120)).toFixed(2)} ms`;
    $('sb-residual').textContent = r.residual.toExponential(1);
    $('sb-rms').textContent = `${(r.fitRms * 1000).toFixed(2)} mm`;
    $('sb-speed').textContent = `${r.maxSpeed.toFixed(2)} m/s`;
  }
}

function median(a) {
  if (!a.length) return NaN;
  const s = [...a].sort((x, y) => x - y),
    n = s.length;
  return n % 2 ? s[n >> 1] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

function loop() {
  requestAnimationFrame(loop);
  if (!st.sb) return;
  if (st.running) stepOnce();
  updateDisplay();
  renderer.render(scene, camera);
}

// ---- the mouse: a controller, the body, or the camera
const ray = new THREE.Raycaster();
function ndc(ev) {
  const r = renderer.domElement.getBoundingClientRect();
  return new THREE.Vector2(((ev.clientX - r.left) / r.width) * 2 - 1, -((ev.clientY - r.top) / r.height) * 2 + 1);
}
function screenOf(p) {
  const v = new THREE.Vector3(p[0], p[1], p[2]).project(camera),
    r = renderer.domElement.getBoundingClientRect();
  return { x: r.left + ((v.x + 1) / 2) * r.width, y: r.top + ((1 - v.y) / 2) * r.height };
}
function planeHit(ev, d) {
  ray.setFromCamera(ndc(ev), camera);
  const out = new THREE.Vector3();
  return ray.ray.intersectPlane(d.plane, out) ? [out.x, out.y, st.sb.dim === 2 ? 0 : out.z] : null;
}
function dragPlane(p) {
  const n = new THREE.Vector3();
  camera.getWorldDirection(n);
  return new THREE.Plane().setFromNormalAndCoplanarPoint(n.negate(), new THREE.Vector3(p[0], p[1], p[2]));
}

renderer.domElement.addEventListener('pointerdown', (ev) => {
  if (!st.sb || ev.button !== 0) return;
  // the nearest controller within 14 px
  let best = -1,
    bd = 14;
  for (let j = 0; j < st.names.length; j++) {
    const s = screenOf(ctrlPos(j)),
      dd = Math.hypot(s.x - ev.clientX, s.y - ev.clientY);
    if (dd < bd) {
      bd = dd;
      best = j;
    }
  }
  if (best >= 0) {
    st.drag = { kind: 'ctrl', j: best, plane: dragPlane(ctrlPos(best)), target: null };
    if (ev.shiftKey) {
      // Shift: turn it about the view's axis through its pivot (in the plane: about z) by the
      // angle the mouse sweeps around it on the screen
      const P = st.sb.poses(),
        o = screenOf(ctrlPos(best)),
        axis = new THREE.Vector3();
      camera.getWorldDirection(axis);
      Object.assign(st.drag, {
        rotate: true,
        axis,
        center: o,
        a0: null,
        R0: new THREE.Matrix4().set(
          P[12 * best],
          P[12 * best + 1],
          P[12 * best + 2],
          0,
          P[12 * best + 3],
          P[12 * best + 4],
          P[12 * best + 5],
          0,
          P[12 * best + 6],
          P[12 * best + 7],
          P[12 * best + 8],
          0,
          0,
          0,
          0,
          1,
        ),
        p0: ctrlPos(best),
        R: null,
      });
    }
    select(best);
    syncDriven();
  } else {
    ray.setFromCamera(ndc(ev), camera);
    const hit = ray.intersectObject(st.display, false)[0];
    if (!hit) return;
    const h = [hit.point.x, hit.point.y, st.sb.dim === 2 ? 0 : hit.point.z];
    const idx = st.sb.nearest(h, st.cfg.grabCount),
      x = st.sb.positions(),
      off = [];
    for (const i of idx) off.push(x[3 * i] - h[0], x[3 * i + 1] - h[1], x[3 * i + 2] - h[2]);
    st.drag = { kind: 'mesh', idx, off, plane: dragPlane(h), target: h };
    st.grabbed = idx;
  }
  orbit.enabled = false;
  renderer.domElement.setPointerCapture(ev.pointerId);
  ev.preventDefault();
});
renderer.domElement.addEventListener('pointermove', (ev) => {
  const d = st.drag;
  if (!d) return;
  if (d.rotate) {
    // the angle swept around the pivot from where the mouse first was 10 px away from it; a
    // clockwise sweep on the screen turns it clockwise as seen (about the view direction)
    const dx = ev.clientX - d.center.x,
      dy = ev.clientY - d.center.y;
    if (d.a0 === null) {
      if (Math.hypot(dx, dy) < 10) return;
      d.a0 = Math.atan2(dy, dx);
    }
    const a = Math.atan2(dy, dx) - d.a0;
    const e = new THREE.Matrix4().makeRotationAxis(d.axis, a).multiply(d.R0).elements;
    d.R = [e[0], e[4], e[8], e[1], e[5], e[9], e[2], e[6], e[10]];
    if (st.sb.dim === 2) d.R = [d.R[0], d.R[1], 0, d.R[3], d.R[4], 0, 0, 0, 1];
    d.target = d.p0;
    return;
  }
  const p = planeHit(ev, d);
  if (p) d.target = p;
});
function endDrag() {
  if (!st.drag) return;
  if (st.drag.kind === 'mesh') {
    st.sb.release();
    st.grabbed = [];
  }
  st.drag = null;
  syncDriven();
  orbit.enabled = st.sb.dim === 3;
}
renderer.domElement.addEventListener('pointerup', endDrag);
renderer.domElement.addEventListener('pointercancel', endDrag);

// ---- the toolbar and the keys
function setRunning(on) {
  st.running = on;
  refreshList();
}
function setWalking(on) {
  if (on && (st.kind !== 'cesiumman' || !st.char?.clip)) return;
  st.walking = on;
  syncDriven();
}
function reset() {
  st.walking = false;
  st.drag = null;
  st.sb.reset();
  syncDriven();
  resetTake();
  updateDisplay();
}
function exportTake() {
  const doc = {
    format: 'marionette-softbody-take',
    version: 1,
    scene: st.kind,
    fps: 60,
    substeps: SUBSTEPS,
    resolution: st.kind === 'cesiumman' ? st.resolution : null,
    dim: st.sb.dim,
    controllers: st.names.map((name, j) => ({ name, pinned: st.pinned.has(j) })),
    pose: 'per controller: the rotation (row-major 3x3) and the position of its pivot',
    frames: st.take.map((p) => Array.from(p, (v) => +v.toPrecision(9))),
  };
  return doc;
}
/** The take as a glTF binary: the character with its skeleton animated by the fitted
 * controllers, one key a frame (a technical artist's bone animation of the simulation).
 * Controller j's pose (R, d) is the map A_j: x -> R (x - pivot_j) + d from the rest, so the
 * bone's world matrix is A_j W_j(rest) and its local one W_parent^-1 A_j W_j(rest). */
async function exportGlb() {
  const c = st.char;
  if (st.kind !== 'cesiumman' || !c) throw new Error("the glTF export is the character's");
  const nb = c.bones.length,
    nf = st.take.length,
    times = new Float32Array(nf);
  const tr = c.bones.map(() => new Float32Array(3 * nf)),
    rot = c.bones.map(() => new Float32Array(4 * nf));
  const sc = c.bones.map(() => new Float32Array(3 * nf));
  const W = c.bones.map(() => new THREE.Matrix4()),
    Aj = new THREE.Matrix4(),
    loc = new THREE.Matrix4();
  const p = new THREE.Vector3(),
    q = new THREE.Quaternion(),
    s = new THREE.Vector3();
  for (let f = 0; f < nf; f++) {
    times[f] = f / 60;
    const P = st.take[f];
    for (let j = 0; j < nb; j++) {
      const o = 12 * j,
        pv = c.skin.controllers[j].pivot;
      const t = [0, 1, 2].map((k) => P[o + 9 + k] - (P[o + 3 * k] * pv[0] + P[o + 3 * k + 1] * pv[1] + P[o + 3 * k + 2] * pv[2]));
      Aj.set(P[o], P[o + 1], P[o + 2], t[0], P[o + 3], P[o + 4], P[o + 5], t[1], P[o + 6], P[o + 7], P[o + 8], t[2], 0, 0, 0, 1);
      W[j].multiplyMatrices(Aj, c.W0[j]);
    }
    for (let j = 0; j < nb; j++) {
      const pj = c.parents[j],
        parentWorld = pj >= 0 ? W[pj] : c.bones[j].parent.matrixWorld;
      loc.copy(parentWorld).invert().multiply(W[j]).decompose(p, q, s);
      p.toArray(tr[j], 3 * f);
      q.toArray(rot[j], 4 * f);
      s.toArray(sc[j], 3 * f);
    }
  }
  const tracks = [];
  c.bones.forEach((b, j) => {
    tracks.push(new THREE.VectorKeyframeTrack(`${b.uuid}.position`, times, tr[j]));
    tracks.push(new THREE.QuaternionKeyframeTrack(`${b.uuid}.quaternion`, times, rot[j]));
    tracks.push(new THREE.VectorKeyframeTrack(`${b.uuid}.scale`, times, sc[j]));
  });
  const clip = new THREE.AnimationClip('softbody', -1, tracks);
  // the nodes at rest (the walk may have moved them), as the glb's rest pose
  c.mixer.stopAllAction();
  c.bones.forEach((b, j) => {
    b.position.copy(c.rest[j][0]);
    b.quaternion.copy(c.rest[j][1]);
    b.scale.copy(c.rest[j][2]);
  });
  c.root.updateMatrixWorld(true);
  try {
    return await new GLTFExporter().parseAsync(c.root, { binary: true, animations: [clip] });
  } finally {
    if (c.clip) c.mixer.clipAction(c.clip).play();
  }
}
function save(data, type, name) {
  const blob = new Blob([data], { type });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
$('sb-run').addEventListener('click', () => setRunning(!st.running));
$('sb-walk').addEventListener('click', () => setWalking(!st.walking));
$('sb-reset').addEventListener('click', reset);
$('sb-pin').addEventListener('click', () => {
  if (st.selected >= 0) pin(st.selected, !st.pinned.has(st.selected));
});
$('sb-export').addEventListener('click', () => save(JSON.stringify(exportTake()), 'application/json', `${st.kind}-take.json`));
$('sb-export-glb').addEventListener('click', async () => save(await exportGlb(), 'model/gltf-binary', `${st.kind}-take.glb`));
for (const b of document.querySelectorAll('#toolbar button')) b.addEventListener('click', () => b.blur());
$('sb-scene').addEventListener('change', (e) => setScene(e.target.value));
$('sb-res').addEventListener('change', (e) => setScene('cesiumman', Number(e.target.value)));
window.addEventListener('keydown', (e) => {
  if (e.target.closest?.('select, input')) return;
  if (e.key === ' ') {
    setRunning(!st.running);
    e.preventDefault();
  } else if (e.key === 'w' || e.key === 'W') setWalking(!st.walking);
  else if (e.key === 'r' || e.key === 'R') reset();
  else if ((e.key === 'p' || e.key === 'P') && st.selected >= 0) pin(st.selected, !st.pinned.has(st.selected));
});

// ---- window.marionette: the page's state for the tests
const ready = (async () => {
  st.mn = await load({ wasm: new URL('marionette.wasm', document.baseURI) });
  resize();
  const res = Number(params.get('res') ?? 24);
  await setScene(params.get('scene') === 'gingerbread' ? 'gingerbread' : 'cesiumman', res);
  if (params.get('paused') === '1') st.running = false;
  refreshList();
  requestAnimationFrame(loop);
})();
ready.catch((e) => {
  $('sb-hint').textContent = `The soft body could not be made: ${e.message}`;
  $('sb-hint').style.color = 'var(--red)';
});

window.marionette = {
  ready,
  state() {
    const sb = st.sb;
    return {
      scene: st.kind,
      dim: sb?.dim,
      resolution: st.resolution,
      running: st.running,
      walking: st.walking,
      frame: st.frame,
      nodes: sb?.vertexCount,
      elements: sb?.elementCount,
      surfaceVertices: sb?.surfaceCount,
      controllers: st.names.map((name, j) => ({ name, driven: sb.driven[j], pinned: st.pinned.has(j), position: ctrlPos(j) })),
      selected: st.selected,
      dragging: st.drag?.kind ?? null,
      grabbed: [...st.grabbed],
      last: st.last && {
        ok: st.last.ok,
        residual: st.last.residual,
        maxSpeed: st.last.maxSpeed,
        ms: st.last.ms,
        fitRms: st.last.fitRms,
        us: st.last.us,
      },
      solverMedianMs: median(st.times.slice(-120)),
      takeFrames: st.take.length,
    };
  },
  /** Solver times (ms) of the last frames (up to 600). */
  solverTimes: () => [...st.times],
  /** The page coordinates of controller j, or of a point. */
  screen: (j) => screenOf(ctrlPos(j)),
  screenOfPoint: (p) => screenOf(p),
  surface: () => Array.from(st.sb.surface()),
  nodes: () => Array.from(st.sb.positions()),
  velocities: () => Array.from(st.sb.velocities()),
  setScene: (kind, res) => setScene(kind, res ?? st.resolution),
  run: setRunning,
  walk: setWalking,
  reset,
  pin,
  select,
  exportTake,
  /** The take as a glb (bytes, as an array for the tests). */
  exportGlb: async () => Array.from(new Uint8Array(await exportGlb())),
  /** n steps now (also when paused). */
  step(n = 1) {
    for (let i = 0; i < n; i++) stepOnce();
    updateDisplay();
    return st.last;
  },
};
