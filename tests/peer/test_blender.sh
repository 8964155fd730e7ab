#!/usr/bin/env bash
# Round trips through Blender (docs/blender.md): Blender imports the BVH files marionette
# writes from the stick figure (a baked sequence: compound joints, names with spaces), the
# UR5 arm (a baked sequence on the URDF) and a CMU take, and every joint lands within 1e-6
# of the figure's size of marionette's forward kinematics at every frame; Blender exports
# each armature again as BVH, and marionette reads that file to the same agreement; Blender's
# glTF importer opens the stick figure's sequence baked as .glb and the skinned Fox as
# marionette writes it, to the same agreement.
# Skipped (exit 77) where Blender is not installed (Debian: apt-get install blender).
# usage: test_blender.sh MARIONETTE SOURCE_DIR
set -euo pipefail
cli=$1
src=$2
blender=${MN_BLENDER:-blender}
if ! command -v "$blender" > /dev/null; then
    echo "SKIPPED: Blender is not installed (apt-get install blender runs this test)"
    exit 77
fi
here="$src/tests/peer"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# in Blender: import, compare, export (bvh); import, compare (glb)
in_blender() {
    "$blender" --background --factory-startup --python-exit-code 1 \
        --python "$here/blender_check.py" -- "$@" > "$tmp/blender.log" 2>&1 || {
        cat "$tmp/blender.log"
        exit 1
    }
    grep -E '^(Blender imports|exported)' "$tmp/blender.log"
}
bvh_round_trip() { # NAME [TOL]: $tmp/NAME.bvh written by marionette
    local n=$1 tol=${2:-1e-6}
    "$cli" fk "$tmp/$n.bvh" --every-frame --json > "$tmp/$n.json"
    in_blender bvh "$tmp/$n.bvh" "$tmp/$n.json" "$tmp/$n.blender.bvh"
    "$cli" fk "$tmp/$n.blender.bvh" --every-frame --json > "$tmp/$n.blender.json"
    python3 "$here/blender_check.py" compare "$tmp/$n.json" "$tmp/$n.blender.json" "$tol"
}
# the stick figure: compound joints as one BVH joint each, names with spaces
"$cli" anim bake "$src/docs/examples/crouch_sequence.json" --out "$tmp/stick.bvh" > /dev/null
grep -q 'JOINT right_arm$' "$tmp/stick.bvh"
bvh_round_trip stick
# the UR5 arm, every joint swung through a baked sequence
cat > "$tmp/ur5_seq.json" << JSON
{"figure": "$src/data/robots/ur5/ur5_robot.urdf", "fps": 30, "keys": [
 {"frame": 0, "pose": {}},
 {"frame": 20, "pose": {"shoulder_link": 0.8, "upper_arm_link": -0.6, "forearm_link": 1.2,
   "wrist_1_link": -0.5, "wrist_2_link": 0.7, "wrist_3_link": 1.0}},
 {"frame": 40, "pose": {"shoulder_link": -1.5, "upper_arm_link": -1.9, "forearm_link": 2.0,
   "wrist_1_link": 0.9, "wrist_2_link": -1.2, "wrist_3_link": -2.5}}]}
JSON
"$cli" anim bake "$tmp/ur5_seq.json" --out "$tmp/ur5.bvh" > /dev/null
bvh_round_trip ur5
# a CMU take, as marionette writes it back. Blender's export of it agrees to 6e-6 only:
# Blender takes the Euler angles from single-precision matrices, and the LeftArm passes
# 90.46 degrees about its middle axis (near gimbal lock); Blender's import still agrees to 1e-6.
"$cli" convert "$src/data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh" "$tmp/walk.bvh"
bvh_round_trip walk 1e-5
# glTF: the stick figure's sequence baked as a glTF binary, through Blender's importer
"$cli" anim bake "$src/docs/examples/crouch_sequence.json" --out "$tmp/stick.glb" > /dev/null
"$cli" fk "$tmp/stick.glb" --every-frame --json > "$tmp/stick.glb.json"
in_blender glb "$tmp/stick.glb" "$tmp/stick.glb.json"
# a skinned glTF binary: the Fox's Walk as marionette writes it, mesh and skin, through the
# importer (which needs numpy.bool back on Debian: blender_check.py, docs/blender.md)
"$cli" convert "$src/data/skinned/Fox.glb" "$tmp/fox.glb" --anim Walk 2> /dev/null
"$cli" fk "$tmp/fox.glb" --every-frame --json > "$tmp/fox.glb.json"
in_blender glb "$tmp/fox.glb" "$tmp/fox.glb.json"
echo "blender round trips: ok"
