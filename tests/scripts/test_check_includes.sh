#!/usr/bin/env bash
# Tests scripts/check-includes.sh on small trees: a clean one passes, and each kind of
# violation fails with a message naming the file and line. The trees live in a temporary
# folder removed on exit, whatever happens.
set -uo pipefail

script=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/check-includes.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mn_check_includes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

failed=0
# make_tree DIR: a small tree that follows every rule.
make_tree() {
    mkdir -p "$1"/src/core "$1"/src/model "$1"/src/constrain "$1"/include/marionette "$1"/cli \
        "$1"/tests/model "$1"/tests/integration
    printf '#include <math.h>\n' >"$1"/src/core/fast.h
    printf '#include "core/fast.h"\n#include <marionette/math.h>\n' >"$1"/src/core/math.c
    printf '#include <marionette/model.h>\n#include "core/fast.h"\n' >"$1"/src/model/model_internal.h
    printf '#include "model/model_internal.h"\n' >"$1"/src/model/fk.c
    printf '#include "constrain/csys_internal.h"\n#include <marionette/linalg.h>\n' >"$1"/src/constrain/solve.c
    printf '#include <marionette/constrain.h>\n' >"$1"/src/constrain/csys_internal.h
    printf '#include "base.h"\n' >"$1"/include/marionette/math.h
    printf '\n' >"$1"/include/marionette/base.h
    printf '\n' >"$1"/include/marionette/linalg.h
    printf '#include "math.h"\n' >"$1"/include/marionette/model.h
    printf '#include "model.h"\n' >"$1"/include/marionette/constrain.h
    printf '#include "cli.h"\n#include <marionette/constrain.h>\n#include <stdio.h>\n' >"$1"/cli/main.c
    printf '\n' >"$1"/cli/cli.h
    printf '#include "model/model_internal.h"\n' >"$1"/tests/model/test_model.c
    printf '#include <marionette/model.h>\n' >"$1"/tests/integration/test_cli.c
}

# expect NAME STATUS PATTERN DIR: runs the check on DIR, wants that exit status and (when
# failing) PATTERN in its messages.
expect() {
    local out rc
    out=$("$script" "$4" 2>&1)
    rc=$?
    if [[ $rc -ne $2 ]] || ! grep -q -- "$3" <<<"$out"; then
        echo "FAIL $1: exit $rc (want $2), output:" >&2
        echo "$out" >&2
        failed=$((failed + 1))
    else
        echo "ok   $1"
    fi
}

make_tree "$tmp/clean"
expect "clean tree passes" 0 "follow the include rules" "$tmp/clean"

make_tree "$tmp/cross"
printf '#include "model/model_internal.h"\n' >>"$tmp/cross/src/constrain/solve.c"
expect "src/constrain including a model private header" 1 "src/constrain/solve.c:3: includes src/model/model_internal.h" "$tmp/cross"

make_tree "$tmp/relative"
printf '#include "../model/model_internal.h"\n' >"$tmp/relative/src/constrain/blocks.c"
expect "a relative include of another layer" 1 "src/constrain/blocks.c:1: includes src/model/model_internal.h" "$tmp/relative"

make_tree "$tmp/cli"
printf '#include "core/fast.h"\n' >>"$tmp/cli/cli/main.c"
expect "cli including a private header (even core's)" 1 "cli/main.c:4: includes src/core/fast.h" "$tmp/cli"

make_tree "$tmp/upward"
printf '#include <marionette/constrain.h>\n' >>"$tmp/upward/src/model/fk.c"
expect "model using the constrain layer" 1 "src/model/fk.c:2: layer model may not use layer constrain" "$tmp/upward"

make_tree "$tmp/sideways"
printf '\n' >"$tmp/sideways/include/marionette/ik.h"
printf '#include <marionette/ik.h>\n' >>"$tmp/sideways/src/constrain/solve.c"
expect "constrain using ik" 1 "src/constrain/solve.c:3: layer constrain may not use layer ik" "$tmp/sideways"

make_tree "$tmp/test"
printf '#include "model/model_internal.h"\n' >>"$tmp/test/tests/integration/test_cli.c"
expect "an integration test looking inside a layer" 1 "tests/integration/test_cli.c:2" "$tmp/test"

make_tree "$tmp/unknown"
printf '\n' >"$tmp/unknown/include/marionette/widget.h"
expect "a public header with no layer" 1 "widget.h" "$tmp/unknown"

make_tree "$tmp/docio"
mkdir -p "$tmp/docio/src/doc" "$tmp/docio/src/io"
printf '#include <stdio.h>\n' >"$tmp/docio/src/doc/doc_internal.h"
printf '#include "doc/doc_internal.h"\n#include <unistd.h>\n' >"$tmp/docio/src/io/file.c"
expect "io including a doc private header and <unistd.h>" 0 "follow the include rules" "$tmp/docio"

make_tree "$tmp/docfiles"
mkdir -p "$tmp/docfiles/src/doc"
printf '#include <stdio.h>\n#include <fcntl.h>\n' >"$tmp/docfiles/src/doc/read.c"
expect "doc including <fcntl.h>" 1 "src/doc/read.c:2: layer doc may not include <fcntl.h>" "$tmp/docfiles"

make_tree "$tmp/docunistd"
mkdir -p "$tmp/docunistd/src/doc"
printf '#include <unistd.h>\n' >"$tmp/docunistd/src/doc/read.c"
expect "doc including <unistd.h>" 1 "src/doc/read.c:1: layer doc may not include <unistd.h>" "$tmp/docunistd"

make_tree "$tmp/docup"
mkdir -p "$tmp/docup/src/doc" "$tmp/docup/src/io"
printf '\n' >"$tmp/docup/src/io/io_internal.h"
printf '#include "io/io_internal.h"\n' >"$tmp/docup/src/doc/read.c"
expect "doc including an io private header" 1 "src/doc/read.c:1: includes src/io/io_internal.h" "$tmp/docup"

if ((failed)); then
    echo "$failed failed" >&2
    exit 1
fi
echo "all passed"
