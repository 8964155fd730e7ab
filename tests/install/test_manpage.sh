#!/usr/bin/env bash
# The man page the build writes (scripts/gen-manpage.sh): it has the sections of a man
# page, a part for every command `marionette --help` lists and for every benchmark, and
# says what --help says: every option of every command's usage and the words of its text
# are in the page as groff renders it (with no warning), or, where groff is missing, in
# its source.
#
#   test_manpage.sh MAN_PAGE MARIONETTE
set -uo pipefail
page=$1 bin=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mn-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# text with every run of blanks one space, on one line
flat() { tr -s ' \t\n' '   '; }

head -n 3 "$page" | grep -q '^\.TH MARIONETTE 1 ' || fail ".TH MARIONETTE 1 missing"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS "EXIT STATUS"; do
  grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}$" "$page" || fail "section $s missing"
done
grep -A1 '^\.SH NAME' "$page" | grep -q '^marionette \\- ' || fail "NAME is not 'marionette \\- ...'"

if command -v groff > /dev/null; then
  # no warning (-ww), one long line per paragraph, no hyphenation: words survive intact
  groff -man -Tascii -ww -rLL=2000n -rHY=0 -P-cbou "$page" > "$tmp/page.txt" 2> "$tmp/warnings"
  [ -s "$tmp/warnings" ] && { cat "$tmp/warnings"; fail "groff warns"; }
  rendered=1
else
  echo "groff not found: checking the page's source only"
  sed 's/\\-/-/g; s/\\f[BIRP]//g; s/\\e/\\/g; s/^\\&//' "$page" > "$tmp/page.txt"
  rendered=0
fi
flat < "$tmp/page.txt" > "$tmp/page.flat"
contains() { grep -qF -- "$1" "$tmp/page.flat"; }

commands=$("$bin" --help | awk '$0 == "commands:" { on = 1; next } on && /^  [^ ]/ { print $1 }')
[ "$(printf '%s\n' "$commands" | grep -c .)" -ge 10 ] || fail "marionette --help lists fewer than 10 commands"
benches=$("$bin" bench --help | awk '$0 == "benchmarks:" { on = 1; next } on && /^  [^ ]/ { print $1 }')
check_help() { # ARGS...: the part for `marionette ARGS`
  local h
  h=$("$bin" "$@" --help)
  grep -q "^\.SS \"marionette $*\"$" "$page" || fail "no part for 'marionette $*'"
  for o in $(printf '%s\n' "$h" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    contains "$o" || fail "marionette $*: $o is not in the page"
  done
  # the prose: every paragraph of unindented lines after the usage, flattened, is in the
  # rendered page word for word
  if [ "$rendered" = 1 ]; then
    printf '%s\n' "$h" | awk 'BEGIN { RS = "" } NR > 1' | awk 'BEGIN { RS = "" } { n = split($0, l, "\n"); p = ""; ok = 1; for (i = 1; i <= n; i++) { if (l[i] ~ /^ /) { ok = 0; break } p = p " " l[i] } if (ok) print p }' |
      while IFS= read -r para; do
        para=$(printf '%s' "$para" | flat | sed 's/^ //')
        grep -qF -- "$para" "$tmp/page.flat" || echo "marionette $*: paragraph not in the page: $para"
      done > "$tmp/missing"
    [ -s "$tmp/missing" ] && { cat "$tmp/missing"; fail "marionette $*: text missing"; }
  fi
  return 0
}
for c in $commands; do check_help "$c"; done
for b in $benches; do check_help bench "$b"; done
# the one-line summary of each command
while read -r c summary; do
  contains "$(printf '%s' "$summary" | flat)" || fail "summary of $c not in the page"
done < <("$bin" --help | awk '$0 == "commands:" { on = 1; next } on && /^  [^ ]/ { print } on && !/^  / { on = 0 }')

if [ "$failures" -ne 0 ]; then echo "man page: $failures failed"; exit 1; fi
echo "man page: ok ($(printf '%s\n' "$commands" | wc -l) commands, $(printf '%s\n' "$benches" | wc -l) benchmarks)"
