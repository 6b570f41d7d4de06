#!/usr/bin/env bash
# Static checks: clang-format (dry run), cppcheck over the compile database.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
files=$(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c' 'bench/*.h')
rc=0
clang-format --dry-run $files 2>&1 | grep -c "warning:" | xargs -I{} echo "clang-format: {} formatting differences"
cppcheck --project="$build/compile_commands.json" --enable=warning,performance,portability \
    --inline-suppr --quiet --error-exitcode=1 -i"$build" 2>&1 || rc=1
exit $rc
