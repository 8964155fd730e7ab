#!/usr/bin/env bash
# `make uninstall`: removes what `make install` wrote, from the install manifest
# (BUILD/install_manifest.txt, every file, DESTDIR included), then the folders that install
# created (BUILD/install_dirs.txt, scripts/install.sh), deepest first, when they are empty:
# a folder that was there before, or that holds anything else, stays.
#
#   uninstall.sh BUILD_DIR
set -euo pipefail
build=$1
manifest=$build/install_manifest.txt
dirs=$build/install_dirs.txt
if [ ! -f "$manifest" ]; then
  echo "marionette uninstall: $manifest not found: nothing was installed from $build (make install)" >&2
  exit 1
fi
n=0
while IFS= read -r f || [ -n "$f" ]; do
  [ -n "$f" ] || continue
  if [ -e "$f" ] || [ -L "$f" ]; then
    rm -f -- "$f"
    n=$((n + 1))
  fi
done < "$manifest"
m=0
if [ -f "$dirs" ]; then
  while IFS= read -r d; do
    if [ -d "$d" ] && rmdir -- "$d" 2> /dev/null; then m=$((m + 1)); fi
  done < <(awk '{ print length($0) "\t" $0 }' "$dirs" | sort -rn | cut -f2-)
  rm -f -- "$dirs"
fi
rm -f -- "$manifest"
echo "marionette uninstall: removed $n files and $m folders"
