#!/usr/bin/env bash
# `make bench`: builds in release mode and runs every micro-benchmark program
# (bench/bench_*.c); each prints its own figures. The peer comparison harness
# (issue 5) extends this script.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BENCH_BUILD:-build-release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
status=0
for b in "$build"/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" || status=1
    echo
done
exit $status
