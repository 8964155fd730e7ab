#!/usr/bin/env bash
# Checks that the C sources follow the repository's .clang-format: runs
# `clang-format --dry-run --Werror` on every .c and .h file under src, include, cli, tests,
# bench, fuzz, examples, editor and web/src (or on the files given as arguments; third_party/ is
# not ours and stays as shipped) and fails listing
# the files that differ.
# Nothing is rewritten; to fix a file, run `clang-format -i FILE`.
#
# Usage: scripts/check-format.sh [FILE...]
#   CLANG_FORMAT=clang-format-14 picks the binary (default: clang-format-14 when
#   installed, else clang-format).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ -z ${CLANG_FORMAT:-} ]]; then
    if command -v clang-format-14 >/dev/null; then
        CLANG_FORMAT=clang-format-14
    else
        CLANG_FORMAT=clang-format
    fi
fi
if ! command -v "$CLANG_FORMAT" >/dev/null; then
    echo "check-format: $CLANG_FORMAT not found (install clang-format-14)" >&2
    exit 2
fi

files=()
if (($#)); then
    files=("$@")
else
    while IFS= read -r -d '' f; do files+=("$f"); done < <(
        find src include cli tests bench fuzz examples editor web/src -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
fi

bad=()
for f in "${files[@]}"; do
    if ! "$CLANG_FORMAT" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
        bad+=("$f")
    fi
done

if ((${#bad[@]})); then
    printf '%s\n' "${bad[@]}" >&2
    echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format" \
        "(see the differences with: $CLANG_FORMAT --dry-run FILE)" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
