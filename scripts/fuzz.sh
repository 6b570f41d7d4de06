#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets with clang and runs each for
# FUZZ_SECONDS (default 60) over its kept corpus (fuzz/corpus/<target>/).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
build=build-fuzz
CC=clang cmake -S . -B "$build" -DOCT_FUZZ=ON -DOCT_SANITIZE='address;undefined' \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
for f in "$build"/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    mkdir -p "fuzz/corpus/$name"
    echo "== $name (${secs}s)"
    "$f" -max_total_time="$secs" -print_final_stats=1 "fuzz/corpus/$name" 2>&1 | tail -5
done
