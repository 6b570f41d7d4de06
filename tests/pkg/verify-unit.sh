#!/usr/bin/env bash
# verify-unit.sh ROOT UNIT: `systemd-analyze verify` of UNIT (a path inside
# the installed tree ROOT) as systemd would load it on that system, without
# systemd running (it need not be PID 1). verify resolves ExecStart inside
# --root and needs the targets the unit is ordered against, so it runs on a
# copy of ROOT plus this machine's own system units; Documentation=man:...
# is looked up with man(1) in ROOT's man pages; /bin/kill (ExecReload) is
# copied in from this machine. Exit 0 only if verify
# passes and prints nothing.
set -uo pipefail
root=$1
unit=$2
vroot=$(mktemp -d)
trap 'rm -rf "$vroot"' EXIT
cp -a "$root/." "$vroot/"
mkdir -p "$vroot/usr/lib/systemd"
cp -an /usr/lib/systemd/system "$vroot/usr/lib/systemd/"
[ -e "$vroot/lib" ] || ln -s usr/lib "$vroot/lib"
# ExecReload runs /bin/kill (procps, on every Debian system): give the
# copy this machine's, as the target system has its own.
mkdir -p "$vroot/usr/bin"
cp -n "$(readlink -f /bin/kill)" "$vroot/usr/bin/kill"
[ -e "$vroot/bin" ] || ln -s usr/bin "$vroot/bin"
man=$(find "$vroot" -type d -path '*/share/man' | head -1)
out=$(MANPATH=$man systemd-analyze verify --root="$vroot" "$vroot${unit#"$root"}" 2>&1)
st=$?
if [ "$st" -ne 0 ] || [ -n "$out" ]; then
    echo "systemd-analyze verify $unit: exit $st"
    printf '%s\n' "$out"
    exit 1
fi
exit 0
