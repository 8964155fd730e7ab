#!/usr/bin/env bash
# The bash completion the build writes (scripts/gen-completion.sh): a command name, an
# option, an option's choices, a benchmark and the joint names of the Franka Panda's URDF
# after --base and --tip (compared with the links the URDF file declares), asked the way
# bash asks: COMP_WORDS and COMP_CWORD set, the function called, COMPREPLY read.
#
#   test_completion.sh COMPLETION_FILE MARIONETTE SOURCE_DIR
set -uo pipefail
completion=$1 bin=$2 src=$3
urdf=$src/data/robots/franka_panda/panda.urdf
failures=0
# shellcheck disable=SC1090
source "$completion" || { echo "FAIL: cannot source $completion"; exit 1; }
complete -p marionette | grep -q -- '-F _marionette' || { echo "FAIL: no completion registered"; exit 1; }

# expect "WANT WORDS..." WORD0 WORD1 ...: completes the last word; WANT is the sorted,
# space-separated COMPREPLY.
expect() {
  local want=$1 got
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _marionette
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ *$//')
  if [ "$got" = "$want" ]; then
    echo "ok: ${*:2} -> $got"
  else
    echo "FAIL: ${*:2}: got '$got', want '$want'"
    failures=$((failures + 1))
  fi
}

expect "solve" "$bin" so
expect "fit fk" "$bin" f
expect "--timeout-ms --tip" "$bin" solve "$urdf" --ti
expect "--base" "$bin" solve "$urdf" --ba
expect "--json" "$bin" info "$urdf" --j
expect "ccd" "$bin" pose stickman --scene s.json --solver c
expect "ik" "$bin" bench i
# an option's argument: file names where it is a file, nothing where it is a number
dir=$(mktemp -d "${TMPDIR:-/tmp}/mn-completion.XXXXXX")
trap 'rm -rf "$dir"' EXIT
touch "$dir/scene_a.json" "$dir/scene_b.json"
expect "$dir/scene_a.json $dir/scene_b.json" "$bin" pose stickman --scene "$dir/scene_"
expect "" "$bin" pose stickman --iters "$dir/scene_"
expect "" "$bin" solve "$urdf" --target "$dir/"
expect "--compare" "$bin" bench ik --com
expect "--help bake compress crossfade import info loop retime root-motion" "$bin" anim ""

# joints: the links of panda.urdf (the figure's joints are named by their child links)
links=$(grep -o '<link name="[^"]*"' "$urdf" | sed 's/<link name="//; s/"$//' | sort)
want=$(printf '%s\n' "$links" | grep '^panda_link' | tr '\n' ' ' | sed 's/ *$//')
[ "$(printf '%s\n' "$links" | grep -c '^panda_link')" -eq 9 ] || { echo "FAIL: panda.urdf: expected 9 panda_link links"; exit 1; }
expect "$want" "$bin" solve "$urdf" --base panda_link0 --tip panda_li
expect "panda_link8" "$bin" solve "$urdf" --base panda_link0 --tip panda_link8
expect "$(printf '%s\n' "$links" world | sort | tr '\n' ' ' | sed 's/ *$//')" "$bin" solve "$urdf" --target 0.3,0,0.5 --base ""
expect "panda_hand panda_hand_tcp" "$bin" bench ik --urdf "$urdf" --base panda_link0 --tip panda_ha
# the built-in stick figure, whose joint names have dots
expect "torso.1 torso.2" "$bin" solve stickman --base torso.
# no figure on the line yet: nothing to offer
expect "" "$bin" solve --base pa

if [ "$failures" -ne 0 ]; then echo "completion: $failures failed"; exit 1; fi
echo "completion: ok"
