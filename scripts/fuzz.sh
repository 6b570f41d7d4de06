#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets (fuzz/fuzz_*.c) with clang, ASan and UBSan, and runs
# each for FUZZ_SECONDS (default 60), one at a time, over its kept corpus fuzz/corpus/<target>/.
#
# New inputs go to a scratch corpus under the build dir, so the kept corpus stays small and
# hand-curated; FUZZ_MERGE=1 afterwards merges only the inputs that add coverage into it
# (libFuzzer -merge=1). Crash reproducers land in $build/crashes/; the script goes on with the
# next target and exits 1 at the end if any target crashed. FUZZ_TARGETS="fuzz_json fuzz_wal"
# restricts the run; FUZZ_FORK=1 keeps fuzzing past crashes (-fork=1 -ignore_crashes=1).
# The last lines of each run (libFuzzer's final stats: executions, cov:) are printed.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-build-fuzz}

# clang and its libFuzzer runtime are only needed here, not by `make test`.
if ! command -v clang >/dev/null 2>&1 ||
   ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    echo "fuzz: needs clang and libFuzzer: apt-get install -y clang libclang-rt-14-dev" >&2
    exit 1
fi

CC=clang cmake -S . -B "$build" -DOCT_FUZZ=ON -DOCT_SANITIZE='address;undefined' \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
targets=${FUZZ_TARGETS:-$(cd fuzz && ls fuzz_*.c | sed 's/\.c$//')}
# shellcheck disable=SC2086
cmake --build "$build" -j "$(nproc)" --target $targets >/dev/null || exit 1

failed=0
mkdir -p "$build/crashes"
for name in $targets; do
    f="$build/$name"
    [ -x "$f" ] || continue
    mkdir -p "fuzz/corpus/$name" "$build/corpus/$name"
    extra=()
    [ "${FUZZ_FORK:-0}" = 1 ] && extra=(-fork=1 -ignore_crashes=1)
    echo "== $name (${secs}s)"
    "$f" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$build/crashes/$name-" "${extra[@]}" \
        "$build/corpus/$name" "fuzz/corpus/$name" >"$build/$name.log" 2>&1
    rc=$?
    grep -E '^#[0-9]+[[:space:]].*cov: ' "$build/$name.log" | tail -1
    grep -E '^Done |stat::(number_of_executed_units|peak_rss_mb)|ERROR:|SUMMARY' "$build/$name.log"
    if [ $rc -ne 0 ]; then
        echo "   $name: CRASH (rc $rc), see $build/$name.log and $build/crashes/" >&2
        failed=1
    fi
    if [ "${FUZZ_MERGE:-0}" = 1 ]; then
        "$f" -merge=1 "fuzz/corpus/$name" "$build/corpus/$name" >/dev/null 2>&1
    fi
done
exit $failed
