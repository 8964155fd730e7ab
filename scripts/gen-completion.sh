#!/usr/bin/env bash
# Writes the bash completion of marionette: the commands and each command's options as
# `marionette --help` and `marionette CMD --help` list them (every --option in the usage
# lines and in the indented option lists), the anim subcommands, the benchmarks and their
# options, the choices an option spells out (--solver lagrange|ccd|dls), file names for the
# options that take a file and for the other arguments, and, after
# --base or --tip, the joint names of the figure file already on the command line (asked of
# `marionette info --json FILE` when completing). Run by the build.
#
#   gen-completion.sh MARIONETTE OUT
set -euo pipefail
bin=$1 out=$2
tmp=$(mktemp "${TMPDIR:-/tmp}/mn-completion.XXXXXX")
trap 'rm -f "$tmp"' EXIT

help_of() { # ARGS...: `marionette ARGS --help`, which must start with usage
  local text
  text=$("$bin" "$@" --help)
  case "$text" in
    usage:*) printf '%s\n' "$text" ;;
    *) echo "gen-completion.sh: 'marionette $* --help' does not print a usage" >&2; exit 1 ;;
  esac
}
list_names() { awk -v label="$1" '$0 == label { on = 1; next } on && /^  [^ ]/ { print $1; next } on { on = 0 }'; }
# The options of a help text: the usage block (up to the first empty line) and the lines
# that start with an indented --option. One "--option" per line, sorted.
options_of() {
  awk 'NR == 1 || (!done && !/^$/) { print; next } { done = 1 } /^ +--[a-z]/ { print }' |
    { grep -o -- '--[a-z][a-z0-9-]*' || true; } | sort -u
}
# The options whose argument is one of words spelt out as a|b|c in the usage: "opt a b c".
choices_of() {
  { grep -o -- '--[a-z][a-z0-9-]* [a-z][a-z0-9_]*\(|[a-z][a-z0-9_]*\)\+' || true; } | sort -u | sed 's/|/ /g'
}
# The options that take an argument: written "--opt ARG" (not "[--opt]" or "--opt]").
with_arg_of() {
  awk 'NR == 1 || (!done && !/^$/) { print; next } { done = 1 } /^ +--[a-z]/ { print }' |
    { grep -o -- '--[a-z][a-z0-9-]* [^] .[]' || true; } | cut -d' ' -f1 | sort -u
}
# The options whose argument is a file or folder, by the name the help gives it (FILE, OUT,
# DIR, SCENE.json, F1.obj, ...): completed with file names; other arguments (numbers,
# names) get no completion.
files_of() {
  awk 'NR == 1 || (!done && !/^$/) { print; next } { done = 1 } /^ +--[a-z]/ { print }' |
    { grep -o -- '--[a-z][a-z0-9-]* [^] .[][^] []*' || true; } |
    awk '$2 ~ /FILE|DIR|OUT|RIG|MAP|SCENE|SCRIPT|TARGET|FIGURE|SEQ|TAKE|\.[a-z]/ { print $1 }' | sort -u
}
words() { tr '\n' ' ' | sed 's/ *$//'; }
var() { printf '%s' "$1" | tr -c 'a-z0-9\n' '_'; }

main=$(help_of)
commands=$(printf '%s\n' "$main" | list_names "commands:")
benches=$(help_of bench | list_names "benchmarks:")
{
  echo "# bash completion for marionette, generated from its --help texts by scripts/gen-completion.sh"
  echo "_marionette_commands='$(printf '%s\n' "$commands" | words)'"
  echo "_marionette_benches='$(printf '%s\n' "$benches" | words)'"
  echo "_marionette_anim_subcommands='$(help_of anim | sed -n 's/^ *\(usage: \)\{0,1\}marionette anim \([a-z][a-z-]*\).*/\2/p' | sort -u | words)'"
  for c in $commands; do
    h=$(help_of "$c")
    echo "_marionette_opts_$(var "$c")='$(printf '%s\n' "$h" | options_of | words)'"
    echo "_marionette_args_$(var "$c")='$(printf '%s\n' "$h" | with_arg_of | words)'"
    echo "_marionette_files_$(var "$c")='$(printf '%s\n' "$h" | files_of | words)'"
    printf '%s\n' "$h" | choices_of | while read -r opt values; do
      echo "_marionette_choices_$(var "$c")_$(var "${opt#--}")='$values'"
    done
  done
  for b in $benches; do
    h=$(help_of bench "$b")
    echo "_marionette_opts_bench_$(var "$b")='$(printf '%s\n' "$h" | options_of | words)'"
    echo "_marionette_args_bench_$(var "$b")='$(printf '%s\n' "$h" | with_arg_of | words)'"
    echo "_marionette_files_bench_$(var "$b")='$(printf '%s\n' "$h" | files_of | words)'"
    printf '%s\n' "$h" | choices_of | while read -r opt values; do
      echo "_marionette_choices_bench_$(var "$b")_$(var "${opt#--}")='$values'"
    done
  done
  cat << 'FUNCTION'

# The joint names of the figure FILE, one a line (marionette info --json FILE: the
# "name" of every entry of "tree").
_marionette_joints() {
  local json
  json=$("$1" info --json "$2" 2> /dev/null) || return
  json=${json#*\"tree\":}
  printf '%s\n' "$json" | grep -o '"name":"[^"]*"' | sed 's/^"name":"//; s/"$//'
}

_marionette() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local prog=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]:-} key i w
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ]; then
    mapfile -t COMPREPLY < <(compgen -W "$_marionette_commands --help" -- "$cur")
    return
  fi
  key=${cmd//[^a-z0-9]/_}
  if [ "$cmd" = bench ]; then
    if [ "$COMP_CWORD" -eq 2 ]; then
      mapfile -t COMPREPLY < <(compgen -W "$_marionette_benches --help" -- "$cur")
      return
    fi
    key=bench_${COMP_WORDS[2]//[^a-z0-9]/_}
  elif [ "$cmd" = anim ] && [ "$COMP_CWORD" -eq 2 ]; then
    mapfile -t COMPREPLY < <(compgen -W "$_marionette_anim_subcommands --help" -- "$cur")
    return
  fi
  local opts_var=_marionette_opts_$key args_var=_marionette_args_$key files_var=_marionette_files_$key
  local choices_var=_marionette_choices_${key}_${prev#--}
  choices_var=${choices_var//-/_}
  # the argument of an option
  if [[ $prev == --* ]] && [[ " ${!args_var:-} " == *" $prev "* ]]; then
    case $prev in
      --base | --tip)
        # the joints of the figure named on the command line: the first word after the
        # command that is a file (or the built-in stick figure)
        local figure="" joints=() j
        for ((i = 2; i < ${#COMP_WORDS[@]}; i++)); do
          [ "$i" -eq "$COMP_CWORD" ] && continue
          w=${COMP_WORDS[i]}
          if [[ $w != -* ]] && { [ -f "$w" ] || [ "$w" = stickman ]; }; then figure=$w; break; fi
        done
        [ -n "$figure" ] || return
        command -v "$prog" > /dev/null 2>&1 || prog=marionette
        mapfile -t joints < <(_marionette_joints "$prog" "$figure")
        [ "$prev" = --base ] && joints+=(world)
        for j in "${joints[@]}"; do
          [[ $j == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$j")")
        done
        return
        ;;
    esac
    if [ -n "${!choices_var:-}" ]; then
      mapfile -t COMPREPLY < <(compgen -W "${!choices_var}" -- "$cur")
      return
    fi
    if [[ " ${!files_var:-} " == *" $prev "* ]]; then
      compopt -o filenames 2> /dev/null || true
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${!opts_var:-} --help" -- "$cur")
    return
  fi
  compopt -o filenames 2> /dev/null || true
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -F _marionette marionette
FUNCTION
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
