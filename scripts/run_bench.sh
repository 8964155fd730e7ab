#!/usr/bin/env bash
# Runs every benchmark on the project's standard inputs; each prints key=value lines.
# Benchmarks report figures; they never fail on a time.
set -uo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
mn="$build/marionette"
data="$top/data"
run() { echo "# marionette $*"; "$mn" "$@" || echo "# (exit $?)"; }

run bench linalg
run bench fk "$data/robots/franka_panda/panda.urdf" --base panda_link0 --tip panda_link8
run bench fk "$data/robots/kuka_iiwa/model.urdf" --base lbr_iiwa_link_0 --tip lbr_iiwa_link_7
run bench fk "$data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"
run bench fk "$data/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh"
for spec in "franka_panda/panda.urdf panda_link0 panda_link8" \
            "kuka_iiwa/model.urdf lbr_iiwa_link_0 lbr_iiwa_link_7" \
            "ur5/ur5_robot.urdf base_link tool0" \
            "xarm6/xarm6_robot.urdf link_base link6"; do
  set -- $spec
  run bench ik --urdf "$data/robots/$1" --base "$2" --tip "$3" --n 10000 --tol 1e-5 --timeout-ms 5
  run bench ik --urdf "$data/robots/$1" --base "$2" --tip "$3" --n 10000 --near
done
run bench ik --compare --svg "$build/ik_compare.svg"
run bench drag
run bench fit
run bench sim
run bench anim --bvh "$data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"
run bench layers --walk "$data/mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh" --hop "$data/mocap/cmu_3dsmax/cmu_131_03_start_hop_stop.bvh" \
  --jumps "$data/mocap/cmu_motionbuilder/cmu_01_01_forward_jumps.bvh"
run bench convert --data "$data"
# The Python package's call overhead and batch (python/bench/bench_python.py), on this build's library.
echo "# python/bench/bench_python.py"
MARIONETTE_LIBRARY="$(cd "$build" && pwd)/lib/libmarionette.so.0" /usr/bin/python3 "$top/python/bench/bench_python.py" || echo "# (exit $?)"
