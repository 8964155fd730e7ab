#!/usr/bin/env bash
# The glTF writer against independent consumers (tests/peer/js/check_glb.mjs): the Khronos
# validator and three.js. Writes, with `marionette convert`, the CMU walk (bones) and Fox's
# Walk (skinned) as .glb into a temporary folder, removed on exit.
# usage: test_gltf_three.sh MARIONETTE DATA_DIR
set -euo pipefail
cli=$1
data=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
walk="$data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"
"$cli" convert "$walk" "$tmp/walk.glb"
node "$here/js/check_glb.mjs" "$cli" "$tmp/walk.glb" 344 0 "$walk" -- 0 57 100 200 343
"$cli" convert "$data/skinned/Fox.glb" "$tmp/fox.glb" --anim Walk 2> /dev/null
node "$here/js/check_glb.mjs" "$cli" "$tmp/fox.glb" 18 1 "$data/skinned/Fox.glb" --anim Walk -- 0 5 9 17
