#!/usr/bin/env bash
# Fails when the files of the library depend on each other in a circle: file a.c uses a
# symbol defined in b.c and b.c (directly or through others) uses one defined in a.c. Reads
# the symbol tables of the layers' static libraries (nm), so it sees calls, not includes;
# prints each circle found. docs/architecture.md describes the file graph of each layer.
#
# Usage: scripts/check-cycles.sh LIB.a...   (e.g. build/libmn_model.a build/libmn_constrain.a)
set -euo pipefail

if (($# == 0)); then
    echo "usage: $0 LIB.a..." >&2
    exit 2
fi

# "layer/file.c symbol D|U" for every external symbol of every object file.
symbols() {
    local lib layer
    for lib in "$@"; do
        layer=$(basename "$lib" .a)
        layer=${layer#lib}
        layer=${layer#mn_}
        nm -A -g "$lib" | awk -v layer="$layer" '{
            # "LIB:MEMBER.o: U sym" or "LIB:MEMBER.o:ADDR T sym"
            n = split($1, part, ":"); member = part[n - 1]; sub(/\.o$/, "", member)
            if ($2 == "U") print layer "/" member, $3, "U"
            else if ($3 != "" && $2 ~ /^[TDBRCVW]$/) print layer "/" member, $3, "D"
        }'
    done
}

edges=$(symbols "$@" | awk '
    $3 == "D" { owner[$2] = $1; next }
    { use[NR] = $1 " " $2 }
    END {
        for (i in use) {
            split(use[i], u, " ")
            if ((u[2] in owner) && owner[u[2]] != u[1]) print u[1], owner[u[2]]
        }
    }' | sort -u)

nfiles=$(symbols "$@" | awk '{ print $1 }' | sort -u | wc -l)
# tsort reports every circle it meets on stderr ("input contains a loop") and exits 1.
if ! out=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null); then
    echo "check-cycles: files of the library depend on each other in a circle:" >&2
    echo "$out" | sed -e 's/^tsort: //' >&2
    exit 1
fi
echo "check-cycles: $nfiles files, $(printf '%s\n' "$edges" | grep -c . || true) dependencies, no circle"
