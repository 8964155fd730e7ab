// A .glb written by marionette, checked by two independent consumers:
//  - the Khronos glTF validator: no errors and no warnings;
//  - three.js: GLTFLoader loads it, an AnimationMixer plays its animation (once, clamped),
//    and every named node's world position at the given frames must match
//    `marionette fk SRC [ARGS] --frame F` to 1e-6 of the figure's size.
// usage: node check_glb.mjs MARIONETTE FILE.glb NFRAMES SKINNED SRC [ARGS...] -- FRAME...
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import validator from 'gltf-validator';
import { execFileSync } from 'child_process';
import fs from 'fs';

const argv = process.argv.slice(2);
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
let skinned = 0;
gltf.scene.traverse((o) => { if (o.isSkinnedMesh) skinned++; });
if (!clip || skinned !== Number(skinnedText)) {
  console.log(`${file}: clip ${clip ? clip.name : 'none'}, ${skinned} skinned meshes (expected ${skinnedText})`);
  failed++;
}
const mixer = new THREE.AnimationMixer(gltf.scene);
const action = mixer.clipAction(clip);
action.setLoop(THREE.LoopOnce);
action.clampWhenFinished = true;
action.play();
let worst = 0, size = 0, compared = 0;
const v = new THREE.Vector3();
for (const f of frames) {
  const ref = new Map();
  const out = execFileSync(cli, ['fk', src, ...srcArgs, '--frame', String(f)], { encoding: 'utf8' });
  for (const line of out.trim().split('\n')) {
    const p = line.trim().split(/\s+/);
    if (p.length === 4) ref.set(p[0], p.slice(1).map(Number));
  }
  if (size === 0) {
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const p of ref.values()) for (let k = 0; k < 3; k++) lo[k] = Math.min(lo[k], p[k]), hi[k] = Math.max(hi[k], p[k]);
    size = Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  }
  mixer.setTime((f * clip.duration) / (nframes - 1));
  gltf.scene.updateMatrixWorld(true);
  let seen = 0;
  gltf.scene.traverse((o) => {
    const p = ref.get(o.name);
    if (!p || o.isMesh) return;
    o.getWorldPosition(v);
    worst = Math.max(worst, Math.abs(v.x - p[0]), Math.abs(v.y - p[1]), Math.abs(v.z - p[2]));
    seen++;
  });
  if (seen !== ref.size) {
    console.log(`${file}: frame ${f}: ${seen} of ${ref.size} joints found`);
    failed++;
  }
  compared++;
}
console.log(`${file}: three.js, ${compared} frames: worst joint position error ${(worst / size).toExponential(2)} of the figure size ${size.toPrecision(3)}`);
if (!(worst <= 1e-6 * size)) failed++;
process.exit(failed ? 1 : 0);
