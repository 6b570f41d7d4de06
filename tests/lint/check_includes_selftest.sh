#!/usr/bin/env bash
# check_includes_selftest.sh -- proves scripts/check-includes.sh can fail:
# on a minimal tree under the repo's own src/MODULES, a clean tree passes,
# and each planted fault (an upward include, a private header from another
# module, an unlisted module, a cycle) fails and names its file. ctest runs
# it as lint/includes_selftest.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
check=$repo/scripts/check-includes.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# A clean tree: a few modules, each including only what the graph allows.
mkdir -p "$tmp/src"/{common,codec,store,tsdb}
cp "$repo/src/MODULES" "$tmp/src/MODULES"
printf '#include <stdint.h>\n' >"$tmp/src/common/err.h"
printf '#include "common/err.h"\n' >"$tmp/src/codec/cell.h"
printf '#include "codec/cell.h"\n#include "common/err.h"\n' >"$tmp/src/store/store.h"
printf '#include "store/store.h"\n' >"$tmp/src/store/store_int.h"
printf '#include "store/store_int.h"\n' >"$tmp/src/store/store_rocksdb.c"
printf '#include "store/store.h"\n' >"$tmp/src/tsdb/tsdb.h"
printf '#include "tsdb/tsdb.h"\n#include "tsdb/wal.h"\n' >"$tmp/src/tsdb/tsdb.c"
printf '\n' >"$tmp/src/tsdb/wal.h"

# expect NAME STATUS PATTERN: runs the checker on the tree; its exit status
# must be STATUS and its output must match PATTERN (grep -E), if given.
expect() {
    local name=$1 want=$2 pattern=${3:-} out st
    out=$("$check" "$tmp" 2>&1)
    st=$?
    if [ "$st" -ne "$want" ]; then
        echo "FAIL $name: exit status $st, expected $want; output:"
        printf '%s\n' "$out"
        fails=$((fails + 1))
    elif [ -n "$pattern" ] && ! grep -qE "$pattern" <<<"$out"; then
        echo "FAIL $name: output does not match /$pattern/:"
        printf '%s\n' "$out"
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}

expect "clean tree passes" 0

# codec sits below tsdb: including it points up the graph.
printf '/* planted */\n#include "codec/cell.h"\n#include "tsdb/tsdb.h"\n' >"$tmp/src/codec/x.c"
expect "upward include fails" 1 \
    "^src/codec/x\.c:3: module 'codec' may not include 'tsdb/tsdb\.h' \(allowed: common\)$"
rm "$tmp/src/codec/x.c"
expect "clean again after removing it" 0

# A ../ path would get round the graph (and the per-module include dirs).
printf '#include "../tsdb/tsdb.h"\n' >"$tmp/src/codec/y.c"
expect "../ include fails" 1 "^src/codec/y\.c:1: .*'\.\./tsdb/tsdb\.h' \(no \.\./ paths"
rm "$tmp/src/codec/y.c"

# tsdb may include store, but not store's private header (by name) nor
# tsdb/wal.h from another module (listed private).
printf '#include "store/store_int.h"\n' >"$tmp/src/tsdb/bad.c"
expect "another module's *_int.h fails" 1 "^src/tsdb/bad\.c:1: .*private to module 'store'"
rm "$tmp/src/tsdb/bad.c"
mkdir "$tmp/src/cli"
printf '#include "tsdb/tsdb.h"\n#include "tsdb/wal.h"\n' >"$tmp/src/cli/cmd.c"
expect "a listed private header fails" 1 "^src/cli/cmd\.c:2: .*'tsdb/wal\.h' \(private to module 'tsdb'\)"
rm -r "$tmp/src/cli"

# The temporary allow-list exempts exactly the listed file and header.
mkdir "$tmp/src/server"
printf '#include "store/store.h"\n' >"$tmp/src/server/api_uid.c"
printf '#include "store/store.h"\n' >"$tmp/src/server/api.c"
sed -i '/^allow:/d' "$tmp/src/MODULES"
printf 'allow: src/server/api_uid.c store/store.h\n' >>"$tmp/src/MODULES"
expect "allow-list exempts only its file" 1 "^src/server/api\.c:1: module 'server' may not include 'store/store\.h'"
rm "$tmp/src/server/api.c"
expect "allowed file passes" 0
rm -r "$tmp/src/server"

# A directory the graph does not list.
mkdir "$tmp/src/rados"
printf '#include "tsdb/tsdb.h"\n' >"$tmp/src/rados/r.c"
expect "unlisted module fails" 2 "src/rados/ is not listed"
rm -r "$tmp/src/rados"

# A cycle in the graph itself.
sed -i 's/^common:.*/common: codec/' "$tmp/src/MODULES"
expect "cycle fails" 2 "cycle: common -> codec -> common"

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "all checks passed"
