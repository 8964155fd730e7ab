#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages the build and the tests need
# and that are not installed yet. Safe to run again: it only installs what is missing.
set -euo pipefail

pkgs=(
  make cmake gcc g++ pkg-config
  clang libclang-rt-14-dev     # libFuzzer targets and sanitizer runtimes
  libxml2-dev                  # URDF reader
  libcjson-dev                 # glTF and JSON documents
  libassimp-dev                # independent BVH importer the tests compare against
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
top=$(cd "$(dirname "$0")/.." && pwd)
# Independent glTF consumers for tests/peer/test_gltf_three.sh (the Khronos validator and
# three.js, pinned in tests/peer/js/package-lock.json), from npm when npm is installed; the
# test is skipped without them.
if command -v npm >/dev/null 2>&1 && [ ! -d "$top/tests/peer/js/node_modules/three" ]; then
  npm ci --prefix "$top/tests/peer/js" --no-audit --no-fund > /dev/null 2>&1 ||
    echo "note: npm ci in tests/peer/js failed: the three.js/validator test is skipped" >&2
fi

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
