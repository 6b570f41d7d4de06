#!/bin/bash
# bench/restart.sh -- what a restart and a large lookup cost the daemon, in
# CPU time (ticks of /proc/PID/stat, so a loaded machine changes the figures
# less than wall time would).
#
#   bench/restart.sh BIN [HOSTS] [PORT]
#
# Writes HOSTS x 20 metrics one-point series (8 tags, as bench_ingest's
# fleet) through telnet into a fresh data dir, restarts the TSD and reports:
# start-up CPU and RSS until a one-series /api/query answers; CPU of the
# first put of every series after the restart and of a second, warm one;
# CPU per /api/search/lookup of one metric's HOSTS series and per
# /api/suggest of HOSTS tag values. Run it with two binaries to compare.
set -euo pipefail
BIN=${1:?usage: bench/restart.sh BIN [HOSTS] [PORT]}
HOSTS=${2:-5000}
PORT=${3:-14299}
DIR=$(mktemp -d /tmp/octsdb-restart.XXXXXX)
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT

python3 - "$HOSTS" > "$DIR/lines" <<'PY'
import sys
for h in range(int(sys.argv[1])):
    tags = "host=web-%05d region=r%d dc=dc%d rack=rk%d os=linux arch=x86 team=t%d service=s%d" % (
        h, h % 4, h % 8, h % 50, h % 10, h % 20)
    for m in range(20):
        print("put sys.m%02d TS %d %s" % (m, h, tags))
PY

cpu() { awk '{print ($14 + $15) * 10}' "/proc/$PID/stat"; } # ms at 100 ticks/s
start() {
    "$BIN" tsd --port="$PORT" --datadir="$DIR/data" --auto-metric >>"$DIR/log" 2>&1 &
    PID=$!
}
stop() { kill "$PID"; wait "$PID" || true; PID=; }
send() { # the lines at timestamp $1, then wait until the TSD answered them all
    sed "s/ TS / $1 /" "$DIR/lines" | python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.stdin.buffer.read()); s.sendall(b"version\n"); s.settimeout(120)
b = b""
while b"built" not in b:
    d = s.recv(65536)
    if not d: sys.exit("connection closed")
    b += d' "$PORT"
}
up() { until curl -s -o /dev/null "http://127.0.0.1:$PORT/api/version"; do sleep 0.05; done; }

start; up; send 1700000000; stop
start
until curl -s -o /dev/null -f "http://127.0.0.1:$PORT/api/query?start=1699990000&m=sum:sys.m00%7Bhost=web-00001%7D"; do sleep 0.02; done
echo "start-up: $(cpu) ms CPU, $(awk '/VmRSS/{print $2}' "/proc/$PID/status") kB RSS"
sleep 0.5
a=$(cpu); send 1700000060; b=$(cpu); send 1700000120; c=$(cpu)
echo "first put of each series: $((b - a)) ms CPU; a warm one: $((c - b)) ms CPU"
q() {
    curl -s -o /dev/null -g "$1"
    local a; a=$(cpu)
    for _ in $(seq 40); do curl -s -o /dev/null -g "$1"; done
    echo "$2: $(( ($(cpu) - a) / 40 )) ms CPU per request"
}
q "http://127.0.0.1:$PORT/api/search/lookup?m=sys.m00{host=*}&limit=1000000" "lookup ($HOSTS series)"
q "http://127.0.0.1:$PORT/api/suggest?type=tagv&q=web-&max=1000000" "suggest ($HOSTS values)"
