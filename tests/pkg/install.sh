#!/usr/bin/env bash
# install.sh SRC BUILD -- ctest pkg/install: `make install DESTDIR=<tmp>`
# (PREFIX=/usr/local) from the build dir, then checks the tree it leaves:
# exactly the expected files with their modes; the installed binary runs;
# the unit names the installed paths, carries the hardening the brief asks
# for and passes `systemd-analyze verify` against the installed root; the
# man page renders without roff warnings and holds every command's help;
# the example config lists exactly the keys of src/common/config_keys.c
# (read here from the source, independently of the generator) and is
# accepted by the binary with every default uncommented.
set -uo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
prefix=/usr/local
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! make -C "$src" install BUILD="$build" PREFIX=$prefix DESTDIR="$root" >"$tmp/make.log" 2>&1; then
    cat "$tmp/make.log"
    echo "FAIL: make install"
    exit 1
fi

# 1. The tree: these files, these modes, nothing else.
expected="755 $prefix/bin/octsdb
644 $prefix/etc/octsdb/octsdb.conf
644 $prefix/lib/systemd/system/octsdb.service
644 $prefix/lib/sysusers.d/octsdb.conf
644 $prefix/share/doc/octsdb/octsdb.conf.example
644 $prefix/share/man/man1/octsdb.1"
got=$(cd "$root" && find . -type f -printf '%m /%P\n' | sort -k2)
[ "$got" = "$expected" ] || fail "installed tree differs; expected:
$expected
got:
$got"

# 2. The installed binary runs and reports the project's version.
want_version=$(sed -nE 's/^project\(octsdb VERSION ([0-9.]+).*/\1/p' "$src/CMakeLists.txt")
v=$("$root$prefix/bin/octsdb" version)
[ "$v" = "octsdb $want_version" ] || fail "installed 'octsdb version' printed '$v', expected 'octsdb $want_version'"

# 3. The unit.
unit=$root$prefix/lib/systemd/system/octsdb.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
[ "$exec_start" = "$prefix/bin/octsdb tsd --config=$prefix/etc/octsdb/octsdb.conf --datadir=/var/lib/octsdb" ] ||
    fail "ExecStart is '$exec_start'"
for d in User=octsdb Group=octsdb StateDirectory=octsdb ProtectSystem=strict NoNewPrivileges=yes \
    Restart=on-failure ProtectHome=yes PrivateTmp=yes 'CapabilityBoundingSet=' WantedBy=multi-user.target; do
    grep -qx "$d" "$unit" || fail "unit lacks '$d'"
done
# ExecReload only once the daemon re-reads something on SIGHUP.
if grep -q SIGHUP "$src/src/server/tsd.c"; then
    grep -q '^ExecReload=' "$unit" || fail "tsd.c handles SIGHUP now: the unit should have ExecReload"
else
    grep -q '^ExecReload=' "$unit" && fail "unit has ExecReload but the daemon does not handle SIGHUP"
fi
"$src/tests/pkg/verify-unit.sh" "$root" "$unit" || fail "systemd-analyze verify"

# 4. The man page: no roff warnings; each command's help is in it.
man1=$root$prefix/share/man/man1/octsdb.1
warn=$(groff -man -Tascii -ww -z "$man1" 2>&1)
[ -z "$warn" ] || fail "groff warnings on octsdb.1: $warn"
page=$(MANWIDTH=200 man -E ascii -l "$man1" 2>/dev/null | col -b)
for c in compact fsck import mkmetric query scan tsd uid version; do
    grep -q "^ *octsdb $c\$" <<<"$page" || fail "man page has no section for '$c'"
    first=$("$root$prefix/bin/octsdb" "$c" --help | head -1)
    grep -qF -- "$first" <<<"$page" || fail "man page lacks '$first' ($c --help)"
done
grep -qF -- "--datadir" <<<"$page" || fail "man page lacks the common flags"

# 5. The example config: the keys of config_keys.c, read from the source.
conf=$root$prefix/etc/octsdb/octsdb.conf
cmp -s "$conf" "$root$prefix/share/doc/octsdb/octsdb.conf.example" || fail "octsdb.conf differs from the example"
keys_src=$({
    grep -oE '^ *(STR|STRN|BOOL|INT|ENUM)(_OFF)?\("tsd\.[^"]+"' "$src/src/common/config_keys.c" | sed -E 's/.*"(.*)"/\1/'
    grep -oE '^ *PLUGIN\("tsd\.[^"]+"' "$src/src/common/config_keys.c" | sed -E 's/.*"(.*)"/\1.enable\n\1.plugin/'
} | sort)
keys_conf=$(sed -nE 's/^#(tsd\.[^ ]+) =( .*)?$/\1/p' "$conf" | sort)
n=$(wc -l <<<"$keys_src")
[ "$n" -gt 100 ] || fail "only $n keys read from config_keys.c"
[ "$keys_src" = "$keys_conf" ] || fail "config keys differ from config_keys.c: $(diff <(echo "$keys_src") <(echo "$keys_conf") | head)"
grep -qx '#tsd.network.port = 4242' "$conf" || fail "tsd.network.port's default is not 4242 in the example"
grep -qx '#tsd.storage.wal.sync_interval_ms = 1000' "$conf" || fail "wal.sync_interval_ms default"
# Every default uncommented must be accepted: `uid grep` loads the config,
# then finds nothing in a fresh data dir (exit 1; a bad config is exit 2).
sed -E 's/^#(tsd\.[^ ]+ = .+)$/\1/' "$conf" >"$tmp/all.conf"
set_lines=$(grep -c '^tsd\.' "$tmp/all.conf")
[ "$set_lines" -gt 100 ] || fail "only $set_lines keys with defaults"
"$root$prefix/bin/octsdb" uid --config="$tmp/all.conf" --datadir="$tmp/data" grep nosuchname >"$tmp/uid.log" 2>&1
st=$?
[ "$st" -eq 1 ] || { cat "$tmp/uid.log"; fail "the uncommented example config: uid grep exit $st, expected 1"; }

[ "$fails" -eq 0 ] && echo "pkg/install: ok" && exit 0
echo "pkg/install: $fails failure(s)"
exit 1
