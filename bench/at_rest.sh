#!/usr/bin/env bash
# at_rest.sh [SERIES] [POINTS] -- bytes a data dir holds after a clean stop,
# against the same data after `octsdb compact` (issue 15's at-rest figure;
# docs/format/store-keys.md, "At rest"). Defaults: 2,000 series x 1,000
# points (one a minute, 8 tags, values like a CPU gauge with 2 decimals),
# sent over telnet by one connection. Prints bytes, bytes/point and the ratio.
# OCTSDB_BIN picks the binary (default build/octsdb).
set -euo pipefail
series=${1:-2000}
points=${2:-1000}
bin=${OCTSDB_BIN:-$(dirname "$0")/../build/octsdb}
dir=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" tsd --bind=127.0.0.1 --port="$port" --datadir="$dir/data" --auto-metric 2>"$dir/tsd.log" &
pid=$!
for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1',$port)).close()" 2>/dev/null && break
    sleep 0.1
done
python3 - "$port" "$series" "$points" <<'PY'
import random, socket, sys
port, series, points = (int(a) for a in sys.argv[1:4])
rnd = random.Random(7)
s = socket.create_connection(("127.0.0.1", port))
level = [rnd.uniform(5, 60) for _ in range(series)]
for p in range(points):
    ts = 1700000000 + 60 * p
    lines = []
    for i in range(series):
        level[i] = min(100.0, max(0.0, level[i] + rnd.gauss(0, 1.5)))
        lines.append("put bench.cpu %d %.2f host=h%04d dc=dc%d rack=r%d env=prod "
                     "svc=s%d cpu=%d os=linux team=t%d\n"
                     % (ts, level[i], i, i % 4, i % 40, i % 20, i % 8, i % 10))
    s.sendall("".join(lines).encode())
s.sendall(b"version\n")
buf = b""
while b"octsdb" not in buf:
    buf += s.recv(65536)
s.close()
PY
kill "$pid"
wait "$pid" || true
pid=
rest=$(du -sb "$dir/data" | cut -f1)
cp -a "$dir/data" "$dir/compacted"
"$bin" compact --datadir="$dir/compacted" >/dev/null
comp=$(du -sb "$dir/compacted" | cut -f1)
n=$((series * points))
python3 - "$rest" "$comp" "$n" <<'PY'
import sys
rest, comp, n = (int(a) for a in sys.argv[1:4])
print(f"points {n}: at rest {rest} bytes ({rest/n:.2f} B/point), after octsdb compact "
      f"{comp} bytes ({comp/n:.2f} B/point), ratio {rest/comp:.3f}")
PY
