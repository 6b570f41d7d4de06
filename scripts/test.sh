#!/usr/bin/env bash
# `make test`: the whole suite of the normal build (ctest prints the closing
# "N tests passed" line CI reads). Sanitizer builds are added here.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
(cd "$build" && ctest --output-on-failure -j "$(nproc)")
