#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD/fuzz for SECONDS each (three times as long for the
# editor's requests and the sequence documents, the untrusted inputs that were slow), seeded
# from fuzz/corpus/<target>/ (copied to a scratch folder so the tree stays clean). The seeds
# run first, so a seed that became slow again (over the 5 s -timeout) fails the run.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-15}
top=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
ran=0
for bin in "$build"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=$(mktemp -d)
  [ -d "$top/fuzz/corpus/$name" ] && cp -r "$top/fuzz/corpus/$name/." "$work/"
  secs=$seconds
  case "$name" in fuzz_editor_request | fuzz_sequence) secs=$((seconds * 3)) ;; esac
  echo "fuzz: $name for ${secs}s"
  "$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
         -artifact_prefix="$build/" -print_final_stats=0 "$work" 2> "$build/$name.log" || {
    tail -40 "$build/$name.log"; rm -rf "$work"; echo "fuzz: $name FAILED"; exit 1; }
  grep -E "^#[0-9]+.*DONE" "$build/$name.log" | tail -1 || true
  rm -rf "$work"
  ran=$((ran + 1))
done
echo "fuzz: $ran targets clean"
