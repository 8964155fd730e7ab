#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages the build and the tests need
# and that are not installed yet. Safe to run again: it only installs what is missing.
set -euo pipefail

pkgs=(
  make cmake gcc g++ pkg-config
  clang libclang-rt-14-dev     # libFuzzer targets and sanitizer runtimes
  clang-format-14              # the format guard (scripts/check-format.sh, ctest guard.check_format)
  libxml2-dev                  # URDF reader
  libcjson-dev                 # glTF and JSON documents
  libmicrohttpd-dev            # the editor's local server (marionette editor)
  libassimp-dev                # independent BVH importer the tests compare against
  lld wasi-libc libclang-rt-14-dev-wasm32   # the WebAssembly module (make web)
  chromium                     # the module's browser test (headless, driven by playwright-core)
  groff-base                   # the install test renders the man page
  python3 python3-numpy python3-cffi python3-pytest   # the Python package (python/) and its tests
  python3-pip python3-venv                             # pip install ./python, offline
  python3-dask python3-distributed                     # the corpus example over a local cluster
)
# Node for the module's tests and npm for its package: Debian's, unless a node is there.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Optional: Debian's Blender, for the round trips of tests/peer/test_blender.sh (skipped with
# a message where Blender is missing). A large package that some machines cannot install (no
# room, an architecture without it, a mirror without it): a failure here is reported and
# the set-up goes on.
if ! command -v blender > /dev/null 2>&1 && [ "${MN_SKIP_BLENDER:-0}" != 1 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo > /dev/null 2>&1 && sudo="sudo"
  if [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; then
    echo "installing (optional): blender"
    # (once more after refreshing the package lists, which may be stale)
    export DEBIAN_FRONTEND=noninteractive
    { $sudo apt-get install -y -qq --no-install-recommends blender ||
      { $sudo apt-get update -qq &&
        $sudo apt-get install -y -qq --no-install-recommends blender; }; } > /dev/null 2>&1 ||
      echo "note: blender could not be installed; peer.test_blender will be skipped" >&2
  else
    echo "note: no root or sudo to install blender; peer.test_blender will be skipped" >&2
  fi
fi

top=$(cd "$(dirname "$0")/.." && pwd)
# Independent glTF consumers for tests/peer/test_gltf_three.sh (the Khronos validator and
# three.js, pinned in tests/peer/js/package-lock.json), from the npm registry with the
# lockfile, once npm is there.
if [ ! -d "$top/tests/peer/js/node_modules/three" ] || [ ! -d "$top/tests/peer/js/node_modules/gltf-validator" ]; then
  npm ci --prefix "$top/tests/peer/js" --no-audit --no-fund > /dev/null
fi
