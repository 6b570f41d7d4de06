#!/usr/bin/env bash
# deb.sh SRC BUILD -- ctest pkg/deb: builds the .deb with Debian's tools
# (scripts/build-deb.sh: dpkg-buildpackage + debhelper, -j2), checks its
# metadata and contents, unpacks it into a temporary root (dpkg -x: the
# files exactly as dpkg installs them, without maintainer scripts) and runs
# the installed binary: `octsdb version`, `systemd-analyze verify` of the
# installed unit, then `octsdb tsd` from that tree on a loopback port with
# the packaged config (every default uncommented), a telnet put and an HTTP
# put, and a query whose answer is the sums of what this script sent.
#
# The package does not depend on the build dir under test, so the sanitizer
# runs of `make test` skip it (exit 77) rather than build it again.
set -uo pipefail
src=$1
build=$2
if [ -n "${OCT_SANITIZED:-}" ]; then
    echo "pkg/deb: skipped in the $OCT_SANITIZED run (the package is built from source, not from this build)"
    exit 77
fi
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

t0=$(date +%s)
deb=$("$src/scripts/build-deb.sh" "$build/pkg-deb" | tail -1)
[ -f "$deb" ] || { echo "FAIL: no .deb built"; exit 1; }
echo "pkg/deb: built $(basename "$deb") in $(($(date +%s) - t0)) s"

# Metadata: name, version (= the project's and the changelog's), depends.
want_version=$(sed -nE 's/^project\(octsdb VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")
[ "$(dpkg-deb -f "$deb" Package)" = octsdb ] || fail "package name"
[ "$(dpkg-deb -f "$deb" Version)" = "$want_version" ] ||
    fail "package version $(dpkg-deb -f "$deb" Version), project version $want_version (debian/changelog)"
depends=$(dpkg-deb -f "$deb" Depends)
for d in librocksdb libmicrohttpd adduser; do
    grep -q "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null | grep -qx /etc/octsdb/octsdb.conf ||
    fail "/etc/octsdb/octsdb.conf is not a conffile"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst 2>/dev/null >"$tmp/postinst"
grep -q 'adduser --system' "$tmp/postinst" || fail "postinst does not create the octsdb user"
# debhelper's unit handling found the unit (purge cleans it up); the
# install neither enables nor starts it (only an upgrade re-enables a unit
# the operator had enabled); removal stops it.
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postrm 2>/dev/null | grep -q "deb-systemd-helper purge 'octsdb.service'" ||
    fail "postrm does not purge octsdb.service's state"
grep -q 'deb-systemd-invoke start' "$tmp/postinst" && fail "postinst starts the service"
grep -B3 'deb-systemd-helper enable' "$tmp/postinst" | grep -q 'was-enabled' ||
    ! grep -q 'deb-systemd-helper enable' "$tmp/postinst" || fail "postinst enables the service"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./prerm 2>/dev/null | grep -q 'deb-systemd-invoke stop octsdb.service' ||
    fail "prerm does not stop octsdb.service"

# Installed into a temporary root.
root=$tmp/root
dpkg -x "$deb" "$root" || { echo "FAIL: dpkg -x"; exit 1; }
for f in usr/bin/octsdb etc/octsdb/octsdb.conf lib/systemd/system/octsdb.service \
    usr/lib/sysusers.d/octsdb.conf usr/share/man/man1/octsdb.1.gz usr/share/doc/octsdb/octsdb.conf.example; do
    [ -f "$root/$f" ] || fail "$f not in the package"
done
[ "$(stat -c %a "$root/usr/bin/octsdb")" = 755 ] || fail "usr/bin/octsdb mode"
bin=$root/usr/bin/octsdb
v=$("$bin" version)
[ "$v" = "octsdb $want_version" ] || fail "installed 'octsdb version' printed '$v'"
unit=$root/lib/systemd/system/octsdb.service
grep -qx 'ExecStart=/usr/bin/octsdb tsd --config=/etc/octsdb/octsdb.conf --datadir=/var/lib/octsdb' "$unit" ||
    fail "unit ExecStart: $(grep ExecStart= "$unit")"
"$src/tests/pkg/verify-unit.sh" "$root" "$unit" || fail "systemd-analyze verify of the packaged unit"

# The installed daemon: packaged config with every default set, loopback port.
sed -E 's/^#(tsd\.[^ ]+ = .+)$/\1/' "$root/etc/octsdb/octsdb.conf" >"$tmp/octsdb.conf"
port=
for _ in 1 2 3 4 5; do
    p=$((20000 + RANDOM % 30000))
    "$bin" tsd --config="$tmp/octsdb.conf" --bind=127.0.0.1 --port=$p --datadir="$tmp/data" \
        --auto-metric >"$tmp/tsd.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$p/api/version" >/dev/null 2>&1 && { port=$p; break; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$port" ] && break
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=
done
if [ -z "$port" ]; then
    cat "$tmp/tsd.log"
    echo "FAIL: the installed octsdb tsd did not start"
    exit 1
fi

# One point over telnet, two over HTTP (sync): sum at 1356998400 is 10,
# at 1356998460 20 + 5 = 25.
exec 3<>"/dev/tcp/127.0.0.1/$port"
echo "put deb.test.m 1356998400 10 host=a" >&3
exec 3>&-
code=$(curl -s -o "$tmp/put.out" -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/put?sync=true" -d '[
  {"metric":"deb.test.m","timestamp":1356998460,"value":20,"tags":{"host":"a"}},
  {"metric":"deb.test.m","timestamp":1356998460,"value":5,"tags":{"host":"b"}}]')
[ "$code" = 204 ] || fail "/api/put answered $code: $(cat "$tmp/put.out")"
want='"dps":{"1356998400":10,"1356998460":25}'
ans=
for _ in $(seq 50); do
    ans=$(curl -s "http://127.0.0.1:$port/api/query?start=1356998000&end=1356999000&m=sum:deb.test.m")
    grep -qF "$want" <<<"$ans" && break
    sleep 0.1
done
grep -qF "$want" <<<"$ans" || fail "query answered $ans, expected $want"

kill -TERM "$pid"
wait "$pid"
st=$?
pid=
[ "$st" -eq 0 ] || { cat "$tmp/tsd.log"; fail "tsd exit status $st after SIGTERM"; }

[ "$fails" -eq 0 ] && echo "pkg/deb: ok" && exit 0
echo "pkg/deb: $fails failure(s)"
exit 1
