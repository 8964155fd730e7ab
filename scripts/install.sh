#!/usr/bin/env bash
# `make install`: cmake --install BUILD --prefix PREFIX (DESTDIR honoured), and beside the
# install manifest CMake writes (BUILD/install_manifest.txt, the files, with DESTDIR put in
# front of them here: CMake leaves it out) the folders this install created
# (BUILD/install_dirs.txt), so that `make uninstall` (scripts/uninstall.sh)
# can leave the prefix as it was: it removes those files, then those folders when empty.
#
#   install.sh BUILD_DIR PREFIX
set -euo pipefail
build=$1 prefix=$2
root=${DESTDIR:-}$prefix
stage=$(mktemp -d "${TMPDIR:-/tmp}/mn-stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# the folders the install writes into, learnt from an install into a staging folder; those
# that are not there yet are the ones it creates
DESTDIR=$stage cmake --install "$build" --prefix "$prefix" > /dev/null
dirs=$build/install_dirs.txt
{
  # a folder recorded by an earlier install into the same place is still one it created
  if [ -f "$dirs" ]; then
    while IFS= read -r d; do
      [ -d "$d" ] && printf '%s\n' "$d"
    done < "$dirs"
  fi
  [ -d "$root" ] || printf '%s\n' "$root"
  (cd "$stage$prefix" && find . -mindepth 1 -type d) | while IFS= read -r d; do
    d=$root/${d#./}
    [ -d "$d" ] || printf '%s\n' "$d"
  done
} | sort -u > "$dirs.new"
cmake --install "$build" --prefix "$prefix"
if [ -n "${DESTDIR:-}" ]; then
  sed "s|^/|${DESTDIR%/}/|" "$build/install_manifest.txt" > "$build/install_manifest.txt.new"
  mv "$build/install_manifest.txt.new" "$build/install_manifest.txt"
fi
mv "$dirs.new" "$dirs"
