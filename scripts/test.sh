#!/usr/bin/env bash
# `make test`: three ctest runs, each in its own build dir.
#
#   normal  the whole suite of the normal build (unit, contract, e2e, corpus replay)
#   asan    the whole suite again, built with -fsanitize=address,undefined (Debug)
#   tsan    the concurrent tests (UID races, the write path, the UID cache, the
#           daemon's e2e tests with their many connections) built with
#           -fsanitize=thread; tests/tsan.supp silences RocksDB's own
#           (uninstrumented) frames and nothing else
#
# Every run goes on even if an earlier one failed; the script then prints a
# summary per run and, as its very last line, one overall ctest-style line
# ("100% tests passed, 0 tests failed out of N") summed over the three runs,
# because CI reads the closing line. Exit status is non-zero on any failure.
#
# In the sanitizer runs OCT_SANITIZED=asan|tsan is set, so a test can relax a
# bound the sanitizer itself breaks (peak RSS, wall-clock limits), never a
# functional assertion.
#
# The rados store backend's tests (contract/*@rados, unit/test_store_rados,
# e2e/test_tsd_rados: names ending in @rados or _rados) need a Ceph
# cluster: when the normal run selects one, a throw-away one is started
# first (scripts/ceph-cluster.sh, about 15 s; 1 monitor, 1 manager, 3 OSDs on
# 127.0.0.1) and its config exported as OCTSDB_TEST_STORE_RADOS; it is
# stopped, by pid, as soon as the normal run ends, and by a trap on any exit.
# A cluster that does not start is one failed test ("ceph"), never a silent
# skip. A caller that exports OCTSDB_TEST_STORE_RADOS brings its own cluster.
# The sanitizer runs leave the rados tests out (ctest reports them
# skipped): the cluster would have to live through both builds, the suite's
# ~30 s of cluster round trips grows with ASan/TSan's slowdown, and the code
# on the far side of each call is librados, which is not instrumented; the
# backend's own code is plain single-call logic that the normal run covers.
#
# OCT_TEST_SANITIZERS=0 skips the sanitizer runs (a quick local loop);
# OCT_TEST_TSAN_REGEX / OCT_TEST_TSAN_EXCLUDE override which tests run under TSan;
# OCT_TEST_REGEX limits the normal and ASan runs (local use; CI sets neither).
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

# The sanitizer build dirs sit next to the normal one.
asan_dir="${build%/}-asan"
tsan_dir="${build%/}-tsan"

# Concurrent tests for TSan: threads in the test itself (uid, tsdb, the UID
# cache) or in the daemon it drives (every e2e test starts the real TSD with
# its worker threads, WAL syncer and flusher).
only=${OCT_TEST_REGEX:-}
tsan_regex=${OCT_TEST_TSAN_REGEX:-'^(uid/|tsdb/|unit/test_uid_cache$|e2e/)'}
# Not under TSan: e2e/test_malformed talks to the daemon one connection at a
# time (nothing concurrent to check; ASan covers it) and its 10,000-tag rows
# are slow there (tag validation is quadratic, reported to the owner).
# Not under TSan either: e2e/test_resource_limits asserts latency and peak-RSS
# bounds of the production daemon (3,000 connections, never-reading clients),
# which TSan's 5-15x slowdown and memory overhead make meaningless; it runs in
# the normal and ASan suites.
tsan_exclude=${OCT_TEST_TSAN_EXCLUDE:-'^e2e/test_(malformed|resource_limits)$'}

# halt_on_error makes a sanitizer report fatal in the daemon too: the e2e test
# driving it then fails instead of the report sitting unread in a log.
export ASAN_OPTIONS="abort_on_error=0:halt_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
tsan_options="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"

declare -A total failed secs
runs=()
rc=0

# run_ctest NAME DIR [ctest args...]: runs ctest, records its counts.
run_ctest() {
    local name=$1 dir=$2
    shift 2
    local log="$dir/ctest-$name.log" t0 t1 line
    runs+=("$name")
    t0=$(date +%s)
    (cd "$dir" && ctest --output-on-failure -j "$jobs" "$@") 2>&1 | tee "$log"
    local st=${PIPESTATUS[0]}
    t1=$(date +%s)
    secs[$name]=$((t1 - t0))
    line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
    if [ -n "$line" ]; then
        failed[$name]=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
        total[$name]=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    else
        # ctest did not get to its summary (no tests, or it crashed): one failure.
        failed[$name]=1
        total[$name]=1
    fi
    [ "$st" -ne 0 ] && [ "${failed[$name]}" -eq 0 ] && failed[$name]=1
    [ "${failed[$name]}" -ne 0 ] && rc=1
}

# build_dir NAME DIR CMAKE-ARGS... -- TARGETS...: configures and builds;
# a build failure counts as one failed test of that run.
build_dir() {
    local name=$1 dir=$2
    shift 2
    local cfg=() tgt=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do cfg+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    tgt=("$@")
    local t0
    t0=$(date +%s)
    echo "== $name: building in $dir"
    mkdir -p "$dir"
    if ! cmake -S . -B "$dir" "${cfg[@]}" >"$dir/oct-cmake.log" 2>&1 ||
        ! cmake --build "$dir" -j "$jobs" ${tgt[@]+--target "${tgt[@]}"} >"$dir/oct-build.log" 2>&1; then
        cat "$dir/oct-cmake.log" "$dir/oct-build.log" 2>/dev/null | tail -40
        echo "== $name: BUILD FAILED (full log: $dir/oct-build.log)"
        runs+=("$name")
        failed[$name]=1
        total[$name]=1
        secs[$name]=$(($(date +%s) - t0))
        rc=1
        return 1
    fi
    echo "== $name: built in $(($(date +%s) - t0)) s"
    return 0
}

t_start=$(date +%s)

# Every temp dir of the run (the tests' data dirs, the Ceph cluster, the
# browser's profile) goes under one dir: removed when the run ends, unless a
# test failed, when it is kept and named for the reading. Before, each test
# removed its own dir only when it passed, and failed or killed runs left
# hundreds behind in /tmp.
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/octsdb-make-test.XXXXXX")
export TMPDIR=$run_tmp

# The Ceph cluster for the rados tests, if the normal run selects one.
ceph_dir=
stop_ceph() {
    if [ -n "$ceph_dir" ]; then
        "$root/scripts/ceph-cluster.sh" stop "$ceph_dir/cluster"
        rm -rf "$ceph_dir"
        ceph_dir=
    fi
}
finish() {
    stop_ceph
    if [ "$rc" -eq 0 ]; then rm -rf "$run_tmp"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM
if [ -z "${OCTSDB_TEST_STORE_RADOS:-}" ] &&
    (cd "$build" && ctest -N ${only:+-R "$only"}) |
    grep -E '@rados$|/test_[a-z_]*_rados$' >/dev/null; then
    ceph_dir=$(mktemp -d "${TMPDIR:-/tmp}/octsdb-ceph.XXXXXX")
    t0=$(date +%s)
    echo "== ceph: starting a test cluster in $ceph_dir"
    if conf=$("$root/scripts/ceph-cluster.sh" start "$ceph_dir/cluster"); then
        export OCTSDB_TEST_STORE_RADOS=$conf
        echo "== ceph: up in $(($(date +%s) - t0)) s"
    else
        echo "== ceph: the cluster did not start: the rados tests cannot run"
        runs+=(ceph)
        failed[ceph]=1
        total[ceph]=1
        secs[ceph]=$(($(date +%s) - t0))
        rc=1
    fi
fi

echo "== normal: ctest in $build"
run_ctest normal "$build" ${only:+-R "$only"}
if [ -n "$ceph_dir" ]; then
    t0=$(date +%s)
    stop_ceph
    echo "== ceph: stopped in $(($(date +%s) - t0)) s"
fi
unset OCTSDB_TEST_STORE_RADOS # not in the sanitizer runs (see the top)

if [ "${OCT_TEST_SANITIZERS:-1}" != 0 ]; then
    if build_dir asan "$asan_dir" -DOCT_SANITIZE='address;undefined' -DCMAKE_BUILD_TYPE=Debug; then
        echo "== asan: ctest (ASan+UBSan, whole suite)"
        OCT_SANITIZED=asan run_ctest asan "$asan_dir" ${only:+-R "$only"}
    fi

    # TSan only needs the daemon and the selected tests; -O1 keeps it fast
    # enough without losing the stacks.
    if build_dir tsan "$tsan_dir" -DOCT_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO='-O1 -g' -- octsdb; then
        # Build just the test programs the regex selects (ctest -N lists them).
        mapfile -t tsan_tests < <(cd "$tsan_dir" && ctest -N -R "$tsan_regex" -E "$tsan_exclude" |
            sed -nE 's/^ *Test +#[0-9]+: [^/]+\/(.*)$/\1/p')
        if [ ${#tsan_tests[@]} -gt 0 ] &&
            build_dir tsan "$tsan_dir" -- "${tsan_tests[@]}"; then
            echo "== tsan: ctest (ThreadSanitizer, ${#tsan_tests[@]} concurrent tests)"
            TSAN_OPTIONS="$tsan_options" OCT_SANITIZED=tsan run_ctest tsan "$tsan_dir" -R "$tsan_regex" -E "$tsan_exclude"
        fi
    fi
fi

# Summary, then the overall line last.
echo
echo "== summary (wall time $(($(date +%s) - t_start)) s)"
all=0
bad=0
for r in "${runs[@]}"; do
    printf '   %-7s %4d tests, %3d failed, %5d s\n' "$r" "${total[$r]}" "${failed[$r]}" "${secs[$r]}"
    all=$((all + total[$r]))
    bad=$((bad + failed[$r]))
done
[ "$bad" -ne 0 ] && echo "   the run's temp files are kept in $run_tmp"
pct=0
[ "$all" -gt 0 ] && pct=$(((all - bad) * 100 / all))
[ "$bad" -gt 0 ] && [ "$pct" -eq 100 ] && pct=99
echo
echo "${pct}% tests passed, ${bad} tests failed out of ${all}"
[ "$bad" -ne 0 ] && rc=1
exit $rc
