#!/usr/bin/env bash
# Runs kdl_peer (BUILD/bench/peers/kdl/kdl_peer) on the six arms of the robot-arm IK
# benchmark with the protocol's settings: n 10000, tol 1e-5, timeout 5 ms. Extra
# arguments go to every run (--cpu-time, --kdl-iters 1, --n 1000 ...). Prints key=value
# lines; a benchmark never fails on a time. Figures: docs/ik-peers.md.
set -uo pipefail
build=${1:-build}
shift || true
extra=("$@")
top=$(cd "$(dirname "$0")/../../.." && pwd)
peer="$build/bench/peers/kdl/kdl_peer"
if [ ! -x "$peer" ]; then
  echo "# $peer not built: run scripts/deps-bench.sh, re-run cmake, build the kdl_peer target" >&2
  exit 1
fi
data="$top/data/robots"
for spec in "franka_panda/panda.urdf panda_link0 panda_link8" \
            "kuka_iiwa/model.urdf lbr_iiwa_link_0 lbr_iiwa_link_7" \
            "ur5/ur5_robot.urdf base_link tool0" \
            "xarm6/xarm6_robot.urdf link_base link6" \
            "kinova_j2s6s200/j2s6s200.urdf j2s6s200_link_base j2s6s200_end_effector" \
            "xarm7/xarm7.urdf link_base link7"; do
  set -- $spec
  echo "# kdl_peer --urdf data/robots/$1 --base $2 --tip $3 --n 10000 --tol 1e-5 --timeout-ms 5 ${extra[*]}"
  "$peer" --urdf "$data/$1" --base "$2" --tip "$3" --n 10000 --tol 1e-5 --timeout-ms 5 "${extra[@]}" || echo "# (exit $?)"
done
