#!/usr/bin/env bash
# Runs the given test programs one after another with TMPDIR pointing at a fresh folder, and
# fails if any leaves something in it: tests clean up their temporary files (tests/support:
# mn_test_temp_dir). The first program must be one that writes files (see the end).
set -uo pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 TEST_PROGRAM..." >&2
    exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mn_leave_nothing.XXXXXX")
trap 'rm -rf "$tmp" "$tmp.log"' EXIT

failed=0
for prog in "$@"; do
    if ! TMPDIR=$tmp "$prog" >/dev/null 2>"$tmp.log"; then
        echo "FAIL $(basename "$prog"): the test itself failed" >&2
        cat "$tmp.log" >&2
        failed=$((failed + 1))
    fi
    rm -f "$tmp.log"
    left=$(find "$tmp" -mindepth 1 | head -20)
    if [[ -n $left ]]; then
        echo "FAIL $(basename "$prog") left files behind:" >&2
        echo "$left" >&2
        find "$tmp" -mindepth 1 -delete
        failed=$((failed + 1))
    else
        echo "ok   $(basename "$prog") left nothing behind"
    fi
done
# The check above only means something if the tests write where TMPDIR says: with TMPDIR
# naming a folder that does not exist, the first program cannot make its files and fails.
if TMPDIR=$tmp/missing "$1" >/dev/null 2>&1; then
    echo "FAIL $(basename "$1") passed with TMPDIR=$tmp/missing: the tests do not write to TMPDIR" >&2
    failed=$((failed + 1))
else
    echo "ok   $(basename "$1") writes its files in TMPDIR"
fi
exit $((failed > 0))
