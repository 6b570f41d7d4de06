#!/usr/bin/env bash
# `make lint`: static checks, each of which must be clean.
#
#   clang-format  --dry-run -Werror over every C file in src/ tests/ bench/ fuzz/
#   cppcheck      over the compile database (warning, performance, portability),
#                 with scripts/cppcheck-cmocka.cfg so cmocka's assertions are
#                 understood as assertions
#   clang-tidy    over src/*.c with the checked-in .clang-tidy (every disabled
#                 check has its reason there); OCT_LINT_TIDY=0 skips it, as it
#                 is the slow one (minutes on two cores)
#
# Every tool runs even if an earlier one failed; a summary line per tool ends
# the output, and the exit status is non-zero if any of them found something.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
jobs=$(nproc)

if [ ! -f "$build/compile_commands.json" ]; then
    echo "lint: $build/compile_commands.json missing (configure the build first)" >&2
    exit 2
fi

# Tracked files plus new ones not yet committed (but not ignored ones).
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
    'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c' 'bench/*.h' 'fuzz/*.c' 'fuzz/*.h' |
    sort -u)
declare -A result
rc=0

# 1. clang-format: the list of files that differ from the style.
echo "== clang-format"
bad_fmt=()
for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad_fmt+=("$f")
done
if [ ${#bad_fmt[@]} -eq 0 ]; then
    result[clang-format]="clean (${#files[@]} files)"
else
    printf '   not formatted: %s\n' "${bad_fmt[@]}"
    echo "   fix: clang-format -i <file>"
    result[clang-format]="${#bad_fmt[@]} of ${#files[@]} files not formatted"
    rc=1
fi

# 2. cppcheck. Suppressions, each with its reason:
#   memleakOnRealloc in tests/ and bench/: those programs end on a failed
#     allocation, so the lost old pointer is irrelevant (src/ uses xrealloc).
#   internalAstError in src/server/api_uid.c: cppcheck 2.10 cannot parse a
#     compound literal as a ?: operand (valid C99).
echo "== cppcheck"
cpp_log=$(mktemp)
# Two passes: the cmocka mapping only for tests/ (its macro names, e.g.
# fail(), would clash with local macros in src/).
cpp_common=(--project="$build/compile_commands.json" --enable=warning,performance,portability
    --inline-suppr --quiet -j "$jobs" -i"$build"
    --suppress='memleakOnRealloc:*tests/*' --suppress='memleakOnRealloc:*bench/*'
    --suppress='internalAstError:*src/server/api_uid.c'
    --template='{file}:{line}:{column}: {severity}: {message} [{id}]' --error-exitcode=0)
cppcheck "${cpp_common[@]}" --file-filter='src/*' --file-filter='bench/*' \
    --file-filter='fuzz/*' >"$cpp_log" 2>&1 || echo "cppcheck: exit status $? (src/bench/fuzz pass)" >>"$cpp_log"
cppcheck "${cpp_common[@]}" --library=scripts/cppcheck-cmocka.cfg --file-filter='tests/*' \
    >>"$cpp_log" 2>&1 || echo "cppcheck: exit status $? (tests pass)" >>"$cpp_log"
n_cpp=$(grep -cE '^[^ ]+:[0-9]+:[0-9]+: |^cppcheck: ' "$cpp_log")
cat "$cpp_log"
rm -f "$cpp_log"
if [ "$n_cpp" -eq 0 ]; then
    result[cppcheck]="clean"
else
    result[cppcheck]="$n_cpp findings"
    rc=1
fi

# 3. clang-tidy over src/ (tests are cmocka macro soup; the sanitizers and
#    cppcheck cover them).
if [ "${OCT_LINT_TIDY:-1}" != 0 ]; then
    echo "== clang-tidy"
    tidy_log=$(mktemp)
    # run-clang-tidy (LLVM 14) always passes --use-color: strip the escapes,
    # or the finding lines below would not match.
    run-clang-tidy -p "$build" -quiet -j "$jobs" "$(pwd)/src/.*\.c\$" 2>&1 |
        sed 's/\x1b\[[0-9;]*m//g' >"$tidy_log"
    tidy_st=${PIPESTATUS[0]}
    grep -E '^/.*: (warning|error): ' "$tidy_log" | sort -u
    n_tidy=$(grep -E '^/.*: (warning|error): ' "$tidy_log" | sort -u | wc -l)
    rm -f "$tidy_log"
    if [ "$tidy_st" -eq 0 ] && [ "$n_tidy" -eq 0 ]; then
        result[clang-tidy]="clean"
    else
        result[clang-tidy]="$n_tidy findings"
        rc=1
    fi
else
    result[clang-tidy]="skipped (OCT_LINT_TIDY=0)"
fi

echo
echo "== lint summary"
for t in clang-format cppcheck clang-tidy; do printf '   %-13s %s\n' "$t" "${result[$t]}"; done
exit $rc
