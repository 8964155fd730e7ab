#!/usr/bin/env bash
# Writes the man page marionette.1 from the command's own help: `marionette --help`, then
# `marionette CMD --help` for every command, `marionette bench NAME --help` for every
# benchmark and `marionette bench NAME --MODE --help` for the modes its usage lists on lines
# of their own, so that the page says what --help says. Run by the build.
#
#   gen-manpage.sh MARIONETTE VERSION OUT
#
# The help texts' layout becomes man macros: the usage lines a no-fill block, paragraphs
# filled text, indented "NAME  description" lines (options, commands, formats) tagged
# paragraphs (.TP), with their indented continuation lines.
set -euo pipefail
bin=$1 version=$2 out=$3
tmp=$(mktemp "${TMPDIR:-/tmp}/mn-man.XXXXXX")
trap 'rm -f "$tmp"' EXIT

help_of() { # ARGS...: the help text of `marionette ARGS --help`, which must start with usage
  local text
  text=$("$bin" "$@" --help)
  case "$text" in
    usage:*) printf '%s\n' "$text" ;;
    *) echo "gen-manpage.sh: 'marionette $* --help' does not print a usage" >&2; exit 1 ;;
  esac
}
# The names of an indented list ("  NAME   description") after the line LABEL: in TEXT.
list_names() { awk -v label="$1" '$0 == label { on = 1; next } on && /^  [^ ]/ { print $1; next } on { on = 0 }'; }

format() { # the help text on stdin, as man macros
  awk '
    function esc(s) {
      gsub(/\\/, "\\e", s)
      gsub(/-/, "\\-", s)
      return s
    }
    function line_out(s) { s = esc(s); if (s ~ /^[.\047]/) s = "\\&" s; print s }
    function close_block() { if (mode == "usage") print ".fi"; mode = "" }
    BEGIN { mode = ""; first = 1 }
    /^$/ { close_block(); pending_pp = 1; next }
    first && /^usage: / {
      first = 0; mode = "usage"; print ".PP"; print ".nf"; line_out(substr($0, 8)); next
    }
    { first = 0 }
    mode == "usage" {
      s = $0; if (substr(s, 1, 7) == "       ") s = substr(s, 8); line_out(s); next
    }
    /^ +[^ ]/ {
      match($0, /^ +/); ind = RLENGTH
      if (mode == "item" && ind > item_ind) { line_out(substr($0, ind + 1)); next }
      rest = substr($0, ind + 1)
      if (match(rest, /   *[^ ]/) && RSTART > 1) {
        tag = substr(rest, 1, RSTART - 1); desc = substr(rest, RSTART + RLENGTH - 1)
      } else if (rest ~ /^-/ && match(rest, / /)) {
        tag = substr(rest, 1, RSTART - 1); desc = substr(rest, RSTART + 1)
      } else { tag = rest; desc = "" }
      mode = "item"; item_ind = ind; pending_pp = 0
      print ".TP"; print "\\fB" esc(tag) "\\fR"; if (desc != "") line_out(desc)
      next
    }
    {
      if (mode == "item" || pending_pp) { print ".PP"; pending_pp = 0 }
      mode = "text"
      if ($0 ~ /:$/ && $0 !~ / .* .* /) { print ".B " esc($0); next }
      line_out($0)
    }
    END { close_block() }
  '
}

main=$(help_of)
commands=$(printf '%s\n' "$main" | list_names "commands:")
{
  echo '.\" The manual page of marionette, generated from the --help texts by scripts/gen-manpage.sh.'
  echo ".TH MARIONETTE 1 \"\" \"marionette $version\" \"User Commands\""
  echo '.SH NAME'
  echo 'marionette \- pose and animate articulated figures: kinematics, inverse kinematics, constraints, skinning, animation and their file formats'
  echo '.SH SYNOPSIS'
  echo '.B marionette'
  echo '.I COMMAND'
  echo '.RI [ ARGS ]'
  echo '.br'
  echo '.B marionette'
  echo '.I COMMAND'
  echo '.B \-\-help'
  echo '.SH DESCRIPTION'
  echo 'marionette reads figures (skeleton text, BVH, URDF, glTF), poses them with forward and'
  echo 'inverse kinematics and constraints, fits and samples skinning and animation, and writes'
  echo 'them back. Each command prints its own help with'
  printf '%s\n' '.BR "marionette \fICOMMAND\fP \-\-help" ;'
  echo 'this page gathers those texts.'
  printf '%s\n' "$main" | sed 1d | format
  echo '.SH COMMANDS'
  for c in $commands; do
    echo ".SS \"marionette $c\""
    help_of "$c" | format
    if [ "$c" = bench ]; then
      for b in $(help_of bench | list_names "benchmarks:"); do
        echo ".SS \"marionette bench $b\""
        help_of bench "$b" | format
        # the modes its usage lists on lines of their own ("marionette bench ik --compare
        # ..."), each with its own --help
        for m in $(help_of bench "$b" | awk '/^$/ { exit } { print }' |
                     { grep -o -- "^       marionette bench $b --[a-z][a-z0-9-]*" || true; } |
                     awk '{ print $4 }' | sort -u); do
          echo ".SS \"marionette bench $b $m\""
          help_of bench "$b" "$m" | format
        done
      done
    fi
  done
  echo '.SH EXIT STATUS'
  echo '0 on success, 1 when an input is bad or a goal is not met (with a one-line message on'
  echo 'standard error naming the file, line and field at fault), 2 for a usage error.'
  echo '.SH SEE ALSO'
  echo 'The documentation in the docs/ folder of the source distribution; the library:'
  echo '.BR "pkg-config \-\-cflags \-\-libs marionette" .'
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
