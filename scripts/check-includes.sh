#!/usr/bin/env bash
# check-includes.sh [ROOT] -- every `#include "<mod>/..."` in ROOT/src (default:
# this repo) must follow the module graph in ROOT/src/MODULES (the file says
# its syntax): no edge the graph lacks, no other module's private header, no
# "../" path. Prints one line per violation,
#   src/codec/x.c:3: module 'codec' may not include 'tsdb/tsdb.h' (allowed: common)
# and exits 1 if there is any, 2 if the graph itself is unusable (unknown
# module, a cycle). Also fails on a directory of src/ that the graph does not
# list, so a new module cannot slip in unchecked. Run by ctest as lint/includes.
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"
graph=src/MODULES
if [ ! -f "$graph" ]; then
    echo "check-includes: $root/$graph missing" >&2
    exit 2
fi

# What exists: directories of src/ and files at its top (dir/ or name).
existing=$(cd src && for f in *; do
    if [ -d "$f" ]; then echo "$f/"; else case $f in *.c | *.h) echo "$f" ;; esac; fi
done)

# "file:line:text" of every quoted include, then the awk below judges them.
{ grep -rnE --include='*.c' --include='*.h' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src || true; } |
    awk -v graph="$graph" -v existing="$existing" '
function fail_graph(msg) { print graph ": " msg > "/dev/stderr"; bad_graph = 1 }
# Module of a path under src/: its first directory, or the top-level file.
function module_of(path,   p) {
    p = substr(path, 5)
    return index(p, "/") ? substr(p, 1, index(p, "/") - 1) : p
}
function visit(m,   i, n, d, c) {   # depth-first; state 1 = on the path
    if (cycle) return
    if (state[m] == 1) {
        c = m
        for (i = depth; i >= 1 && path[i] != m; i--) c = path[i] " -> " c
        fail_graph("cycle: " m " -> " c)
        cycle = 1
        return
    }
    if (state[m] == 2) return
    state[m] = 1
    path[++depth] = m
    n = split(deps[m], d, " ")
    for (i = 1; i <= n; i++) visit(d[i])
    depth--
    state[m] = 2
}
BEGIN {
    while ((getline line < graph) > 0) {
        ln++
        sub(/#.*/, "", line)
        if (line ~ /^[[:space:]]*$/) continue
        if (!match(line, /^[A-Za-z0-9_.]+:/)) { fail_graph("line " ln ": not \"name: ...\""); continue }
        key = substr(line, 1, RLENGTH - 1)
        rest = substr(line, RLENGTH + 1)
        n = split(rest, w, " ")
        if (key == "private") {
            for (i = 1; i <= n; i++) private[w[i]] = 1
        } else if (key == "allow") {
            if (n != 2) { fail_graph("line " ln ": allow: wants <file> <mod>/<header>"); continue }
            allow[w[1] SUBSEP w[2]] = 1
            allow_used[w[1] SUBSEP w[2]] = 0
        } else {
            if (key in declared) fail_graph("line " ln ": module \x27" key "\x27 listed twice")
            declared[key] = 1
            order[++nmod] = key
            deps[key] = ""
            for (i = 1; i <= n; i++) {
                if (w[i] == key) fail_graph("module \x27" key "\x27 lists itself")
                deps[key] = deps[key] (i > 1 ? " " : "") w[i]
                ok[key SUBSEP w[i]] = 1
            }
        }
    }
    close(graph)
    for (i = 1; i <= nmod; i++) {
        n = split(deps[order[i]], d, " ")
        for (j = 1; j <= n; j++)
            if (!(d[j] in declared))
                fail_graph("module \x27" order[i] "\x27 depends on unknown \x27" d[j] "\x27")
    }
    if (!bad_graph) for (i = 1; i <= nmod; i++) visit(order[i])
    n = split(existing, e, "\n")
    for (i = 1; i <= n; i++) {
        name = e[i]; sub(/\/$/, "", name)
        if (e[i] ~ /\/$/) isdir[name] = 1
        if (!(name in declared)) fail_graph("src/" e[i] " is not listed")
    }
    if (bad_graph) exit 2
}
{
    # $0 = src/<path>:<line>:<text>; paths never hold a colon.
    c1 = index($0, ":"); file = substr($0, 1, c1 - 1)
    rest = substr($0, c1 + 1); c2 = index(rest, ":")
    lno = substr(rest, 1, c2 - 1); text = substr(rest, c2 + 1)
    sub(/^[^"]*"/, "", text); sub(/".*/, "", text)
    if (text ~ /(^|\/)\.\.\//) {            # would bypass the graph and the include dirs
        printf "%s:%s: module \x27%s\x27 may not include \x27%s\x27 (no ../ paths: name the module)\n",
            file, lno, module_of(file), text
        nbad++
        next
    }
    slash = index(text, "/")
    if (!slash) next                       # same-directory include
    to = substr(text, 1, slash - 1)
    if (!(to in declared) && !(to in isdir)) next   # not one of ours
    from = module_of(file)
    if ((file SUBSEP text) in allow) { allow_used[file SUBSEP text] = 1; next }
    if (to == from) next
    if (!((from SUBSEP to) in ok)) {
        printf "%s:%s: module \x27%s\x27 may not include \x27%s\x27 (allowed: %s)\n",
            file, lno, from, text, (deps[from] == "" ? "nothing" : deps[from])
        nbad++
    } else if (text ~ /_int\.h$/ || (text in private)) {
        printf "%s:%s: module \x27%s\x27 may not include \x27%s\x27 (private to module \x27%s\x27)\n",
            file, lno, from, text, to
        nbad++
    }
}
END {
    if (bad_graph) exit 2
    for (k in allow_used)
        if (!allow_used[k]) {
            split(k, p, SUBSEP)
            print graph ": note: allow: " p[1] " " p[2] " is no longer needed; delete it" > "/dev/stderr"
        }
    if (nbad) { print nbad " include(s) against " graph > "/dev/stderr"; exit 1 }
}'
