#!/usr/bin/env bash
# Include guard of the layering (docs/architecture.md, "Include rules"). Fails, naming the
# file, the line and the rule, when:
#   1. a file of src/A includes a private header of src/B (any header under src/B/) with
#      B != A, except the private headers of src/core: core is the bottom layer, every layer
#      already depends on it, so its inline helpers (core/sincos_inline.h) may be shared;
#      and io may include those of src/doc: io is the file half of the documents whose
#      memory half is doc (the path forms share doc's reader helpers);
#   2. a file of src/A, or a public header of layer A, includes the public header of a
#      layer that A may not use: dependencies point downward only,
#        core <- model <- {ik, constrain, skin} <- anim <- doc <- io <- cli
#      (ik, constrain and skin do not use each other);
#   3. a file under cli/, bench/, examples/, fuzz/ or editor/, a public header, or a test of
#      tests/integration or tests/peer includes any header under src/ (public headers only);
#      a test of tests/A may include the private headers of src/A (and src/core) to test
#      its own layer from inside;
#   4. a file of src/doc includes <unistd.h> or <fcntl.h>: the doc layer works on memory
#      only (the WebAssembly module builds it without a file system); io opens the files.
#
# Usage: scripts/check-includes.sh [ROOT]   (ROOT: the source tree, default: this one)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"

# Public header -> its layer.
declare -A header_layer=(
    [base]=core [math]=core [linalg]=core
    [model]=model
    [ik]=ik [constrain]=constrain [skin]=skin
    [anim]=anim [retarget]=anim [clip]=anim [layers]=anim [takes]=anim
    [io]=doc [gltf]=doc [meshio]=doc [scene]=doc [sequence]=doc
    [simscene]=io
)
# Layer -> the layers whose public headers it may include.
declare -A may_use=(
    [core]="core"
    [model]="core model"
    [ik]="core model ik"
    [constrain]="core model constrain"
    [skin]="core model skin"
    [anim]="core model ik constrain skin anim"
    [doc]="core model ik constrain skin anim doc"
    [io]="core model ik constrain skin anim doc io"
)

failures=0
fail() {
    echo "$1: $2" >&2
    failures=$((failures + 1))
}

contains() { # contains "list of words" word
    local w
    for w in $1; do [[ $w == "$2" ]] && return 0; done
    return 1
}

# Normalises a path made of a directory and a relative include (removes ./ and dir/../).
normalise() {
    local IFS=/ part out=()
    for part in $1; do
        case $part in
        '' | .) ;;
        ..) [[ ${#out[@]} -gt 0 ]] && unset 'out[${#out[@]}-1]' ;;
        *) out+=("$part") ;;
        esac
    done
    echo "${out[*]}"
}

check_file() {
    local f=$1 kind=$2 layer=$3 n=0 line path target
    while IFS= read -r line || [[ -n $line ]]; do
        n=$((n + 1))
        [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*[\<\"]([^\>\"]+)[\>\"] ]] || continue
        path=${BASH_REMATCH[1]}
        # rule 4: the doc layer opens no file
        if [[ $kind == src && $layer == doc && ($path == unistd.h || $path == fcntl.h) ]]; then
            fail "$f:$n" "layer doc may not include <$path> (rule 4: doc works on memory; io opens files)"
            continue
        fi
        # a public header: rule 2
        if [[ $path =~ ^marionette/([a-z_]+)\.h$ ]]; then
            local h=${BASH_REMATCH[1]}
            if [[ -z ${header_layer[$h]+x} ]]; then
                fail "$f:$n" "public header marionette/$h.h has no layer: add it to scripts/check-includes.sh and docs/architecture.md"
                continue
            fi
            if [[ $kind == src || $kind == public ]] && ! contains "${may_use[$layer]}" "${header_layer[$h]}"; then
                fail "$f:$n" "layer $layer may not use layer ${header_layer[$h]} (includes marionette/$h.h)"
            fi
            continue
        fi
        # otherwise: which file does it name? (relative to the includer, then to src/)
        target=""
        if [[ -f $(dirname "$f")/$path ]]; then
            target=$(normalise "$(dirname "$f")/$path")
        elif [[ -f src/$path ]]; then
            target=$(normalise "src/$path")
        fi
        [[ $target == src/*/* ]] || continue
        local owner=${target#src/}
        owner=${owner%%/*}
        case $kind in
        src)
            if [[ $owner != "$layer" && $owner != core && !($layer == io && $owner == doc) ]]; then
                fail "$f:$n" "includes $target, a private header of src/$owner (rule 1: only src/core's private headers are shared, and src/doc's with io)"
            fi
            ;;
        test)
            if [[ -z $layer || ($owner != "$layer" && $owner != core) ]]; then
                fail "$f:$n" "includes $target, a private header of src/$owner (a test may only look inside its own layer)"
            fi
            ;;
        *)
            fail "$f:$n" "includes $target, a private header of src/$owner ($kind files use public headers only)"
            ;;
        esac
    done <"$f"
}

shopt -s nullglob globstar
nfiles=0
for f in src/**/*.[ch]; do
    layer=${f#src/}
    layer=${layer%%/*}
    if [[ -z ${may_use[$layer]+x} ]]; then
        fail "$f" "src/$layer is not a known layer: add it to scripts/check-includes.sh and docs/architecture.md"
        continue
    fi
    check_file "$f" src "$layer"
    nfiles=$((nfiles + 1))
done
for f in include/marionette/*.h; do
    h=$(basename "$f" .h)
    if [[ -z ${header_layer[$h]+x} ]]; then
        fail "$f" "public header has no layer: add it to scripts/check-includes.sh and docs/architecture.md"
        continue
    fi
    check_file "$f" public "${header_layer[$h]}"
    nfiles=$((nfiles + 1))
done
for dir in cli bench examples fuzz editor; do
    for f in "$dir"/**/*.[ch] "$dir"/**/*.cpp; do
        check_file "$f" "$dir" ""
        nfiles=$((nfiles + 1))
    done
done
for f in tests/**/*.[ch]; do
    layer=${f#tests/}
    layer=${layer%%/*}
    [[ -n ${may_use[$layer]+x} ]] || layer="" # integration, peer, support: public headers only
    check_file "$f" test "$layer"
    nfiles=$((nfiles + 1))
done

if ((failures)); then
    echo "check-includes: $failures violation(s) in $nfiles files (rules: docs/architecture.md)" >&2
    exit 1
fi
echo "check-includes: $nfiles files follow the include rules"
