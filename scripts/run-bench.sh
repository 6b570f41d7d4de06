#!/usr/bin/env bash
# Runs every micro-benchmark program built from bench/bench_*.c and prints its
# figures. Benchmarks are programs, not tests: they print, they do not assert.
set -euo pipefail
build=${1:-build}
status=0
for b in "$build"/bench_*; do
    [ -x "$b" ] || continue
    echo "== $(basename "$b")"
    "$b" || status=1
    echo
done
exit $status
