// A .glb written by marionette, checked by two independent consumers:
//  - the Khronos glTF validator: no errors and no warnings;
//  - three.js: GLTFLoader loads it, an AnimationMixer plays its animation (once, clamped),
//    and every named node's world position at the given frames must match
//    `marionette fk SRC [ARGS] --frame F` to 1e-6 of the figure's size; NFRAMES 0: a file
//    with no animation, compared at rest (`marionette fk SRC [ARGS]`).
// Options, before MARIONETTE: --ref-scale S: the file's lengths are S times SRC's;
// --ref-z-up: SRC is +Z up and the file +Y up, (x, y, z) in SRC is (x, z, -y) in the file;
// --height LO:HI: the figure at the first frame is between LO and HI tall along +Y, and
// +Y is its largest extent (it stands up in three.js); --attributes normal,uv: the skinned
// mesh's geometry has those attributes (and no others of those names without it);
// --map SRC.glb: the skinned mesh's material has a map (base colour texture) whose image has
// the same bytes as the one three.js loads for SRC.glb's skinned mesh; --map none: no map.
// Node has no image decoder: createImageBitmap hands three.js the image's bytes instead.
// usage: node check_glb.mjs [OPTIONS] MARIONETTE FILE.glb NFRAMES SKINNED SRC [ARGS...] -- FRAME...
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import validator from 'gltf-validator';
import { execFileSync } from 'child_process';
import fs from 'fs';

globalThis.self = globalThis;
globalThis.createImageBitmap = async (blob) => ({ width: 1, height: 1, bytes: Buffer.from(await blob.arrayBuffer()), close() {} });

const argv = process.argv.slice(2);
let refScale = 1, refZUp = false, height = null, attributes = null, mapOf = null;
for (;;) {
  if (argv[0] === '--ref-scale') refScale = Number(argv.splice(0, 2)[1]);
  else if (argv[0] === '--ref-z-up') refZUp = Boolean(argv.shift());
  else if (argv[0] === '--height') height = argv.splice(0, 2)[1].split(':').map(Number);
  else if (argv[0] === '--attributes') attributes = argv.splice(0, 2)[1].split(',');
  else if (argv[0] === '--map') mapOf = argv.splice(0, 2)[1];
  else break;
}
const sep = argv.indexOf('--');
const [cli, file, nframesText, skinnedText, src, ...srcArgs] = argv.slice(0, sep);
const frames = argv.slice(sep + 1).map(Number);
const nframes = Number(nframesText);
const bytes = fs.readFileSync(file);
let failed = 0;

const report = await validator.validateBytes(new Uint8Array(bytes));
console.log(`${file}: validator errors=${report.issues.numErrors} warnings=${report.issues.numWarnings}`);
for (const m of report.issues.messages.filter((m) => m.severity < 2)) console.log(`  ${m.code} ${m.pointer || ''} ${m.message}`);
if (report.issues.numErrors || report.issues.numWarnings) failed++;

const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const gltf = await new GLTFLoader().parseAsync(ab, '');
const clip = gltf.animations[0];
// the image bytes of the first skinned mesh's base colour map (null: none)
async function mapBytes(g) {
  let found = null;
  g.scene.traverse((o) => {
    if (o.isSkinnedMesh && found === null) found = o.material.map ? o.material.map.image.bytes : undefined;
  });
  return found || null;
}
if (mapOf) {
  const got = await mapBytes(gltf);
  let want = null;
  if (mapOf !== 'none') {
    const sb = fs.readFileSync(mapOf);
    want = await mapBytes(await new GLTFLoader().parseAsync(sb.buffer.slice(sb.byteOffset, sb.byteOffset + sb.byteLength), ''));
  }
  const same = got === want || (got && want && Buffer.compare(got, want) === 0);
  console.log(`${file}: material map ${got ? `${got.length} bytes` : 'none'}${mapOf !== 'none' ? `, ${mapOf.split('/').pop()}'s ${want ? `${want.length} bytes` : 'none'}: ${same ? 'the same' : 'DIFFERENT'}` : ''}`);
  if (!same || (mapOf !== 'none' && !got)) failed++;
}
let skinned = 0;
gltf.scene.traverse((o) => {
  if (!o.isSkinnedMesh) return;
  skinned++;
  const has = ['normal', 'uv'].filter((a) => o.geometry.attributes[a]);
  console.log(`${file}: skinned mesh, ${o.geometry.attributes.position.count} vertices, attributes ${Object.keys(o.geometry.attributes).join(' ')}`);
  if (attributes && has.join(',') !== attributes.filter((a) => a).join(',')) failed++;
});
if (Boolean(clip) !== nframes > 0 || skinned !== Number(skinnedText)) {
  console.log(`${file}: clip ${clip ? clip.name : 'none'}, ${skinned} skinned meshes (expected ${skinnedText})`);
  failed++;
}
const mixer = new THREE.AnimationMixer(gltf.scene);
if (clip) {
  const action = mixer.clipAction(clip);
  action.setLoop(THREE.LoopOnce);
  action.clampWhenFinished = true;
  action.play();
}
let worst = 0, size = 0, compared = 0;
const v = new THREE.Vector3();
for (const f of frames) {
  const ref = new Map();
  const out = execFileSync(cli, ['fk', src, ...srcArgs, ...(clip ? ['--frame', String(f)] : [])],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  for (const line of out.trim().split('\n')) {
    const p = line.trim().split(/\s+/);
    if (p.length !== 4) continue;
    const [x, y, z] = p.slice(1).map((c) => Number(c) * refScale);
    ref.set(p[0], refZUp ? [x, z, -y] : [x, y, z]);
  }
  if (size === 0) {
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const p of ref.values()) for (let k = 0; k < 3; k++) lo[k] = Math.min(lo[k], p[k]), hi[k] = Math.max(hi[k], p[k]);
    size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  }
  if (clip) mixer.setTime((f * clip.duration) / (nframes - 1));
  gltf.scene.updateMatrixWorld(true);
  let seen = 0;
  const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  gltf.scene.traverse((o) => {
    const p = ref.get(o.name);
    if (!p || o.isMesh) return;
    o.getWorldPosition(v);
    worst = Math.max(worst, Math.abs(v.x - p[0]), Math.abs(v.y - p[1]), Math.abs(v.z - p[2]));
    [v.x, v.y, v.z].forEach((c, k) => { lo[k] = Math.min(lo[k], c); hi[k] = Math.max(hi[k], c); });
    seen++;
  });
  if (height && compared === 0) {
    const ext = hi.map((h, k) => h - lo[k]);
    console.log(`${file}: three.js, frame ${f}: ${ext[1].toPrecision(4)} tall along +Y (extents x ${ext[0].toPrecision(3)}, y ${ext[1].toPrecision(3)}, z ${ext[2].toPrecision(3)})`);
    if (!(ext[1] >= height[0] && ext[1] <= height[1] && ext[1] >= Math.max(...ext))) failed++;
  }
  if (seen !== ref.size) {
    console.log(`${file}: frame ${f}: ${seen} of ${ref.size} joints found`);
    failed++;
  }
  compared++;
}
console.log(`${file}: three.js, ${compared} frames: worst joint position error ${(worst / size).toExponential(2)} of the figure size ${size.toPrecision(3)}`);
if (!(worst <= 1e-6 * size)) failed++;
process.exit(failed ? 1 : 0);
