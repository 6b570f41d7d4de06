#!/usr/bin/env bash
# gen-man.sh BIN OUT: writes the man page octsdb(1), made from the help text the
# binary itself prints (`octsdb --help`, then `octsdb <command> --help` for
# every command it lists), so the page cannot drift from the program.
# Used by packaging/CMakeLists.txt; the output is roff for man(1).
set -euo pipefail
bin=$1
out=$2
exec >"$out.tmp"

# Escapes help text for roff inside .nf: backslashes, and a leading . or '
# (which roff would read as a request).
roff_text() {
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" -e 's/-/\\-/g'
}

version=$("$bin" version | sed -n 's/^octsdb //p')
top=$("$bin" --help)
# The command names: the lines under "Commands:" ("  name   summary").
mapfile -t cmds < <(sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' <<<"$top")
[ ${#cmds[@]} -gt 0 ] || { echo "gen-man.sh: no commands in '$bin --help'" >&2; exit 1; }

cat <<ROFF
.TH OCTSDB 1 "" "octsdb $version" "User Commands"
.SH NAME
octsdb \\- OpenTSDB\\-compatible time\\-series database
.SH SYNOPSIS
.B octsdb
.I command
.RI [ flags ]
.RI [ args ]
.SH DESCRIPTION
octsdb stores time series with OpenTSDB's data model, telnet \\fBput\\fR
protocol, HTTP API and \\fBtsdb\\fR command line, on an embedded RocksDB store.
The text below is what the program prints for \\fB\\-\\-help\\fR.
.PP
.nf
$(roff_text <<<"$top")
.fi
.SH COMMANDS
ROFF
for c in "${cmds[@]}"; do
    echo ".SS octsdb $c"
    echo ".nf"
    "$bin" "$c" --help | roff_text
    echo ".fi"
done
cat <<'ROFF'
.SH FILES
.TP
.I /etc/octsdb/octsdb.conf
The configuration (Java .properties), read by every command unless
\fB\-\-config\fR names another; the installed example lists every key
with its default.
.TP
.I /var/lib/octsdb
The data dir of the packaged service (systemd unit \fBoctsdb.service\fR).
.SH EXIT STATUS
0 on success; 1 when nothing matched (a UID or name not found); 2 for a
usage or configuration error; 3 when the data dir cannot be opened (held
by a running TSD, or unreadable).
.SH SEE ALSO
.BR systemctl (1),
.BR systemd.exec (5)
ROFF
mv "$out.tmp" "$out"
