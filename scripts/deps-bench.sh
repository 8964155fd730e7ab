#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages the optional peer benchmarks need and
# that are not installed yet: Orocos KDL and Eigen for bench/peers/kdl (kdl_peer, see
# docs/ik-peers.md). The library, the command line and the tests never need them;
# scripts/deps.sh installs what those need. Safe to run again: it only installs what is
# missing. After installing, re-run cmake: the kdl_peer target appears by itself.
set -euo pipefail

pkgs=(
  g++ pkg-config               # kdl_peer is C++
  liborocos-kdl-dev            # KDL: ChainIkSolverPos_NR_JL, ChainIkSolverPos_LMA
  libeigen3-dev                # KDL's headers include Eigen
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
