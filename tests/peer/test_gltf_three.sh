#!/usr/bin/env bash
# The glTF writer against independent consumers (tests/peer/js/check_glb.mjs): the Khronos
# validator and three.js. Writes, with `marionette convert`, the CMU walk (bones) and Fox's
# Walk (skinned) as .glb, and a skeleton text with polygon objects on two joints; with `marionette retarget`, the CMU walk on the skinned CesiumMan;
# with `marionette anim bake`, the fox example sequence, and with `marionette pose`, the fox
# example scene (both skinned); with `marionette sim`, three soft-body scenes' baked controllers.
# The retargeted, baked and posed files are compared with the BVH the same command writes. All
# in a temporary folder, removed on exit.
# usage: test_gltf_three.sh MARIONETTE DATA_DIR
set -euo pipefail
cli=$1
data=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
walk="$data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"
"$cli" convert "$walk" "$tmp/walk.glb" --scale 1
node "$here/js/check_glb.mjs" "$cli" "$tmp/walk.glb" 344 0 "$walk" -- 0 57 100 200 343
# units: the CMU walk (25 units tall) and Boxing_Toes (173 cm) come out in metres, by their
# height, and stand 1.3-1.9 m tall along +Y in three.js
"$cli" convert "$walk" "$tmp/walk_m.glb" 2> /dev/null
node "$here/js/check_glb.mjs" --ref-scale 0.056444 --height 1.3:1.9 "$cli" "$tmp/walk_m.glb" 344 0 "$walk" -- 0 171 343
toes="$data/mocap/other_skeleton/Boxing_Toes.bvh"
"$cli" convert "$toes" "$tmp/toes.glb" 2> /dev/null
node "$here/js/check_glb.mjs" --ref-scale 0.01 --height 1.3:1.9 "$cli" "$tmp/toes.glb" 3070 0 "$toes" -- 0 1500
# up axis: the Panda (URDF, +Z up) stands along +Y, FK the URDF's turned (x, z, -y); with
# --z-up it keeps the URDF's axes
panda="$data/robots/franka_panda/panda.urdf"
"$cli" convert "$panda" "$tmp/panda.glb" 2> /dev/null
node "$here/js/check_glb.mjs" --ref-z-up --height 0.8:1.2 "$cli" "$tmp/panda.glb" 0 0 "$panda" -- 0
"$cli" convert "$panda" "$tmp/panda_z.glb" --z-up 2> /dev/null
node "$here/js/check_glb.mjs" "$cli" "$tmp/panda_z.glb" 0 0 "$panda" -- 0
# polygon objects on joints (Welman 6.1.1): a skeleton text naming an OBJ for two joints,
# converted with the objects as meshes on nodes under their joints
printf 'define skeleton "arm"\n joint "base"\n joint "upper"\n joint "lower"\nend skeleton\ndefine joint "upper"\n object "tri.obj"\n offset 0 1 0\n hinge z -180 180\nend joint\ndefine joint "lower"\n object "tri.obj"\n offset 1 0 0\n hinge z -180 180\nend joint\n' > "$tmp/arm.skel"
printf 'v 0 0 0\nv 0.5 0 0\nv 0 0.5 0\nf 1 2 3\n' > "$tmp/tri.obj"
"$cli" convert "$tmp/arm.skel" "$tmp/arm.glb"
node "$here/js/check_glb.mjs" "$cli" "$tmp/arm.glb" 0 0 "$tmp/arm.skel" -- 0
"$cli" convert "$data/skinned/Fox.glb" "$tmp/fox.glb" --anim Walk 2> /dev/null
node "$here/js/check_glb.mjs" "$cli" "$tmp/fox.glb" 18 1 "$data/skinned/Fox.glb" --anim Walk -- 0 5 9 17
# CesiumMan and the Fox with their normals, texture coordinates and material (its base colour
# texture the source's image) kept (--keep-attributes), and without
cesium="$data/skinned/CesiumMan.glb"
"$cli" convert "$cesium" "$tmp/cesium_attrs.glb" --keep-attributes 2> /dev/null
node "$here/js/check_glb.mjs" --attributes normal,uv --map "$cesium" "$cli" "$tmp/cesium_attrs.glb" 49 1 "$cesium" -- 0 24 48
"$cli" convert "$cesium" "$tmp/cesium.glb" 2> /dev/null
node "$here/js/check_glb.mjs" --attributes , --map none "$cli" "$tmp/cesium.glb" 49 1 "$cesium" -- 0 24 48
"$cli" convert "$data/skinned/Fox.glb" "$tmp/fox_attrs.glb" --anim Walk --keep-attributes 2> /dev/null
node "$here/js/check_glb.mjs" --attributes uv --map "$data/skinned/Fox.glb" "$cli" "$tmp/fox_attrs.glb" 18 1 "$data/skinned/Fox.glb" --anim Walk -- 0 9 17
# the CMU walk retargeted onto CesiumMan: skinned, every joint where the command's BVH has it
cesium="$data/skinned/CesiumMan.glb"
"$cli" retarget "$walk" --to "$cesium" --out "$tmp/walk_cesium.glb" > /dev/null 2>&1
"$cli" retarget "$walk" --to "$cesium" --out "$tmp/walk_cesium.bvh" > /dev/null 2>&1
node "$here/js/check_glb.mjs" "$cli" "$tmp/walk_cesium.glb" 344 1 "$tmp/walk_cesium.bvh" -- 0 57 171 250 343
# a sequence on the skinned fox, baked with its constraints
seq="$here/../../docs/examples/fox_sequence.json"
"$cli" anim bake "$seq" --out "$tmp/fox_seq.glb" > /dev/null 2>&1
"$cli" anim bake "$seq" --out "$tmp/fox_seq.bvh" > /dev/null 2>&1
node "$here/js/check_glb.mjs" "$cli" "$tmp/fox_seq.glb" 37 1 "$tmp/fox_seq.bvh" -- 0 7 12 18 30 36
# the fox posed by a scene (paws pinned, head dragged down), every frame
scene="$here/../../docs/examples/fox_sniff.json"
"$cli" pose "$data/skinned/Fox.glb" --scene "$scene" --out "$tmp/sniff.glb" > /dev/null 2>&1
"$cli" pose "$data/skinned/Fox.glb" --scene "$scene" --out "$tmp/sniff.bvh" > /dev/null 2>&1
node "$here/js/check_glb.mjs" "$cli" "$tmp/sniff.glb" 24 1 "$tmp/sniff.bvh" -- 0 5 11 23
# soft-body scenes: CesiumMan and the Fox walking through the coupling (hands and head, or the
# tail, free), and the tube's bone chain, each baked by `marionette sim` as anim.glb
"$cli" sim "$here/../../docs/examples/sim/cesiumman.json" --frames 24 --obj-every 0 --out "$tmp/sim_cesium" > /dev/null
node "$here/js/check_glb.mjs" "$cli" "$tmp/sim_cesium/anim.glb" 24 1 "$tmp/sim_cesium/anim.glb" -- 0 11 23
"$cli" sim "$here/../../docs/examples/sim/fox.json" --frames 24 --obj-every 0 --out "$tmp/sim_fox" > /dev/null
node "$here/js/check_glb.mjs" "$cli" "$tmp/sim_fox/anim.glb" 24 1 "$tmp/sim_fox/anim.glb" -- 0 11 23
"$cli" sim --scene tube --frames 30 --obj-every 0 --out "$tmp/sim_tube" > /dev/null
node "$here/js/check_glb.mjs" "$cli" "$tmp/sim_tube/anim.glb" 30 0 "$tmp/sim_tube/anim.glb" -- 0 14 29
