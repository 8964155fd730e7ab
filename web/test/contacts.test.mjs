// Figure.footContacts in the module against the command line: the heel and toe tracks the
// module finds on each shipped CMU take are those `marionette anim import` writes into the
// sequence document (the same detector, docs/retarget.md "Contacts"); a figure no rig table
// knows has none; bad motions are refused naming the argument.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { load } from '../marionette.mjs';
import { native, tempDir, join, data } from './helpers.mjs';

const mn = await load();

test('footContacts: the tracks anim import writes, on every shipped CMU take', () => {
  const tmp = tempDir();
  for (const take of [
    'cmu_motionbuilder/cmu_02_01_walk.bvh',
    'cmu_3dsmax/cmu_131_01_start_walk_stop.bvh',
    'cmu_3dsmax/cmu_131_03_start_hop_stop.bvh',
  ]) {
    const path = join(data, 'mocap', take);
    const fig = mn.figureFromBVH(readFileSync(path, 'utf8'));
    try {
      const tracks = fig.footContacts();
      assert.equal(tracks.length, 2, take);
      for (const t of tracks) {
        assert.ok(t.heel.length >= 2 && t.toe.length >= 2, `${take} ${t.joint}: stances`);
        for (const list of [t.heel, t.toe])
          for (let i = 0; i < list.length; i++) {
            assert.ok(list[i][0] <= list[i][1]);
            if (i) assert.ok(list[i][0] > list[i - 1][1] + 1, 'apart and in order');
          }
      }
      const out = join(tmp.dir, 'imp.json');
      native(['anim', 'import', path, '--out', out]);
      assert.deepEqual(tracks, JSON.parse(readFileSync(out, 'utf8')).contacts, take);
    } finally {
      fig.dispose();
    }
  }
  tmp.cleanup();
});

test('footContacts: none for a figure no rig table knows; bad motions refused', () => {
  const stick = mn.stickman();
  try {
    // the stick figure standing still for a second: both heels and toes down throughout
    const frames = new Float64Array(30 * stick.nq);
    for (let f = 0; f < 30; f++) frames.set(stick.q, f * stick.nq);
    const t = stick.footContacts({ frames, nframes: 30, frameTime: 1 / 30 });
    assert.deepEqual(
      t.map((x) => [x.joint, x.heel]),
      [
        ['left foot', [[0, 29]]],
        ['right foot', [[0, 29]]],
      ],
    );
    assert.throws(() => stick.footContacts(), /no motion/);
    assert.throws(() => stick.footContacts({ frames: new Float64Array(5), nframes: 30, frameTime: 1 / 30 }), /^Error: motion.frames: /);
    assert.throws(() => stick.footContacts({ frames, nframes: 30, frameTime: NaN }), /^Error: motion.frameTime: /);
  } finally {
    stick.dispose();
  }
  const bvh = [
    'HIERARCHY',
    'ROOT base',
    '{',
    ' OFFSET 0 0 0',
    ' CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation',
    ' JOINT link',
    ' {',
    '  OFFSET 0 1 0',
    '  CHANNELS 3 Zrotation Xrotation Yrotation',
    '  End Site',
    '  {',
    '   OFFSET 0 1 0',
    '  }',
    ' }',
    '}',
    'MOTION',
    'Frames: 3',
    'Frame Time: 0.1',
    ...Array(3).fill('0 0 0 0 0 0 0 0 0'),
    '',
  ].join('\n');
  const arm = mn.figureFromBVH(bvh);
  try {
    assert.deepEqual(arm.footContacts(), []);
  } finally {
    arm.dispose();
  }
});
