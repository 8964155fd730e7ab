#!/usr/bin/env bash
# `make install` then `make uninstall` (scripts/install.sh, scripts/uninstall.sh) leave a
# prefix as it was: into a prefix that already holds folders and files of its own (bin/
# with another program, an empty share/man/man1, lib/ with another library), and into one
# that does not exist yet (and again with DESTDIR staging). The install puts the LICENSE in
# share/doc/marionette; the uninstall removes every file of the manifest and the folders the
# install created, and nothing else.
#
#   test_uninstall.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mn-uninstall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
tree() { (cd "$1" && find . -printf '%y %p\n' | sort); }

# 1. a prefix with things of its own
prefix=$tmp/usr
mkdir -p "$prefix/bin" "$prefix/share/man/man1" "$prefix/lib"
echo 'another program' > "$prefix/bin/other"
echo 'another library' > "$prefix/lib/libother.so"
tree "$prefix" > "$tmp/before"
bash "$src/scripts/install.sh" "$build" "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "install.sh"; }
[ -x "$prefix/bin/marionette" ] || fail "bin/marionette not installed"
cmp -s "$src/LICENSE" "$prefix/share/doc/marionette/LICENSE" || fail "share/doc/marionette/LICENSE not installed"
[ -f "$build/install_manifest.txt" ] || fail "no install manifest"
# installing again (an upgrade in place) keeps the record of the folders the first made
bash "$src/scripts/install.sh" "$build" "$prefix" > "$tmp/install.log" || fail "install.sh, again"
grep -qx "$prefix/share/doc" "$build/install_dirs.txt" || fail "a second install forgot share/doc"
! grep -qx "$prefix/share/man/man1" "$build/install_dirs.txt" || fail "share/man/man1 was there before"
bash "$src/scripts/uninstall.sh" "$build" > "$tmp/uninstall.log" || { cat "$tmp/uninstall.log"; fail "uninstall.sh"; }
grep -q '^marionette uninstall: removed [1-9][0-9]* files and [1-9][0-9]* folders$' "$tmp/uninstall.log" ||
  fail "uninstall.sh says: $(cat "$tmp/uninstall.log")"
tree "$prefix" > "$tmp/after"
diff "$tmp/before" "$tmp/after" >&2 || fail "the prefix is not as it was"
[ ! -e "$build/install_manifest.txt" ] || fail "the manifest is left behind"
echo "ok: a prefix with things of its own"

# 2. a prefix that does not exist: it is gone again
prefix=$tmp/new/opt
bash "$src/scripts/install.sh" "$build" "$prefix" > /dev/null || fail "install.sh into a new prefix"
[ -x "$prefix/bin/marionette" ] || fail "bin/marionette not installed into a new prefix"
bash "$src/scripts/uninstall.sh" "$build" > /dev/null || fail "uninstall.sh of a new prefix"
[ ! -e "$prefix" ] || { find "$prefix" >&2; fail "the new prefix is left"; }
echo "ok: a new prefix"

# 3. DESTDIR staging: the files land under DESTDIR and go again
DESTDIR=$tmp/stage bash "$src/scripts/install.sh" "$build" /usr/local > /dev/null || fail "install.sh with DESTDIR"
[ -x "$tmp/stage/usr/local/bin/marionette" ] || fail "DESTDIR not honoured"
bash "$src/scripts/uninstall.sh" "$build" > /dev/null || fail "uninstall.sh after DESTDIR"
[ ! -e "$tmp/stage/usr/local" ] || { find "$tmp/stage" >&2; fail "DESTDIR staging is left"; }
echo "ok: DESTDIR"

# 4. nothing installed: a clear error
! bash "$src/scripts/uninstall.sh" "$build" 2> "$tmp/err" || fail "uninstall.sh without a manifest succeeded"
grep -q 'install_manifest.txt not found' "$tmp/err" || fail "uninstall.sh without a manifest says: $(cat "$tmp/err")"
echo "uninstall: ok"
