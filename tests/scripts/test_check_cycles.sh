#!/usr/bin/env bash
# Tests scripts/check-cycles.sh on small libraries compiled here: files that call each
# other in a circle (within a library and across two) fail, naming the files; a chain
# passes. Everything is built in a temporary folder removed on exit.
set -uo pipefail

script=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/check-cycles.sh
cc=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mn_check_cycles.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# lib NAME FILE:BODY...: compiles each file and archives them as libmn_NAME.a.
lib() {
    local name=$1 spec file objs=()
    shift
    mkdir -p "$tmp/$name"
    for spec in "$@"; do
        file=${spec%%:*}
        printf '%s\n' "${spec#*:}" >"$tmp/$name/$file.c"
        "$cc" -c -o "$tmp/$name/$file.c.o" "$tmp/$name/$file.c" || exit 1
        objs+=("$tmp/$name/$file.c.o")
    done
    rm -f "$tmp/libmn_$name.a"
    ar rcs "$tmp/libmn_$name.a" "${objs[@]}"
}

expect() { # NAME STATUS PATTERN LIB...
    local name=$1 want=$2 pattern=$3 out rc
    shift 3
    out=$("$script" "$@" 2>&1)
    rc=$?
    if [[ $rc -ne $want ]] || ! grep -q -- "$pattern" <<<"$out"; then
        echo "FAIL $name: exit $rc (want $want), output:" >&2
        echo "$out" >&2
        failed=$((failed + 1))
    else
        echo "ok   $name"
    fi
}

lib chain 'a:int b(void); int a(void) { return b(); }' 'b:int c(void); int b(void) { return c(); }' \
    'c:int c(void) { return 1; }'
expect "a chain passes" 0 "no circle" "$tmp/libmn_chain.a"

lib circle 'a:int b(void); int a(void) { return b(); }' 'b:int c(void); int b(void) { return c(); }' \
    'c:int a(void); int c(void) { return a(); }'
expect "a circle of three files fails" 1 "circle/c.c" "$tmp/libmn_circle.a"

lib low 'x:int top(void); int x(void) { return top(); }'
lib high 'top:int x(void); int top(void) { return 0; } int y(void) { return x(); }'
expect "a circle across two libraries fails" 1 "low/x.c" "$tmp/libmn_low.a" "$tmp/libmn_high.a"

if ((failed)); then
    echo "$failed failed" >&2
    exit 1
fi
echo "all passed"
