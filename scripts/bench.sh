#!/usr/bin/env bash
# `make bench`: octsdb side by side with VictoriaMetrics (InfluxDB on request),
# then the micro-benchmarks.
#
#   1. peers   installs Debian's victoria-metrics (and influxdb with
#              BENCH_INFLUX=1) when run as root (a peer that cannot be
#              installed is left out of the table), builds octsdb in release
#              mode and runs bench_peers (bench/bench_peers.c, bench/peers/):
#              every system on 127.0.0.1 with a fresh data dir, the same bytes
#              sent to each. It prints, and writes to bench/results/<date>.md
#              with the machine: the bar of issue 11 (figure | octsdb | VM |
#              ratio | bar | met), every figure of the main data set, then the
#              cost curve.
#   2. micro   every other bench/bench_* program; each prints its own figures.
#
# Arguments go to bench_peers. The main data set is issue 11's 2,000 series
# (1,000 hosts x 2 metrics, 8 tags, 1,000 points each = 2 M points per mode),
# every ingest mode run 3 times per system (--runs), figures the medians; the
# cost curve's largest point (1 M series) gives the bar's 1,000,000-series rows.
# The whole run is meant to take at most 30 minutes on an idle 2-core machine.
# Environment:
#   BENCH_BUILD   build dir (default build-release), e.g. a clean one:
#                 BENCH_BUILD=/tmp/bench-build scripts/bench.sh
#   BENCH_MICRO=0 skips the micro-benchmarks
#   BENCH_PEERS=0 skips the peers (octsdb alone; ratios n/a)
#   BENCH_INFLUX=1 adds InfluxDB to the main table (about 15,000 points/s here:
#                 minutes per mode, so it is off by default)
#   BENCH_CURVE   the cost curve's numbers of series (bench_peers --curve;
#                 default 10000,100000,1000000; 0 skips it and the bar's
#                 1,000,000-series rows; 10000,100000 is the cheap curve)
#   BENCH_RUNS    repetitions of each ingest mode for the medians (default 3)
#   TMPDIR        where the data dirs go (1 M series take about a gigabyte
#                 per system; default /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BENCH_BUILD:-build-release}

# ---- peers from Debian's packages -----------------------------------------
want_peers=${BENCH_PEERS:-1}
install_peer() { # package binary
    local pkg=$1 bin=$2
    [ -x "$bin" ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "bench: not root, cannot install $pkg; it is left out" >&2
        return 1
    fi
    echo "bench: installing $pkg" >&2
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" \
        >/dev/null 2>&1; then
        apt-get update -qq >/dev/null 2>&1 || true
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "$pkg" >/dev/null 2>&1; then
            echo "bench: $pkg could not be installed; left out" >&2
            return 1
        fi
    fi
    # The package starts its own service on a booted system; the benchmark runs
    # its own instance, so the one just installed is stopped and not enabled.
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
        systemctl disable --now "$pkg" >/dev/null 2>&1 || true
    fi
    [ -x "$bin" ]
}
vm= influx=
if [ "$want_peers" != 0 ]; then
    install_peer victoria-metrics /usr/bin/victoria-metrics && vm=/usr/bin/victoria-metrics
    if [ "${BENCH_INFLUX:-0}" != 0 ]; then
        install_peer influxdb /usr/bin/influxd && influx=/usr/bin/influxd
    fi
fi

# ---- release build --------------------------------------------------------
# -O3 makes GCC see maybe-uninitialized paths that -O2 does not; they stay
# warnings here so a release build is possible at all.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_C_FLAGS_RELEASE=-O3 -DNDEBUG -Wno-error=maybe-uninitialized" >/dev/null
targets=(octsdb)
for src in bench/bench_*.c; do
    targets+=("$(basename "$src" .c)")
done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >/dev/null

# ---- 1. peers -------------------------------------------------------------
mkdir -p bench/results
out=bench/results/$(date -u +%Y-%m-%d).md
[ -e "$out" ] && out=bench/results/$(date -u +%Y-%m-%d-%H%M).md
status=0
curve=${BENCH_CURVE:-10000,100000,1000000}
curve_args=()
[ "$curve" != 0 ] && curve_args=(--curve "$curve")
echo "== bench_peers (results to $out)"
"$build"/bench_peers --octsdb "$build"/octsdb --vm "$vm" --influx "$influx" --out "$out" \
    --runs "${BENCH_RUNS:-3}" "${curve_args[@]}" "$@" || status=1
echo

# ---- 2. micro-benchmarks --------------------------------------------------
if [ "${BENCH_MICRO:-1}" != 0 ]; then
    for b in "$build"/bench_*; do
        [ -x "$b" ] || continue
        [ "$(basename "$b")" = bench_peers ] && continue
        echo "== $(basename "$b")"
        "$b" || status=1
        echo
    done
fi
exit $status
