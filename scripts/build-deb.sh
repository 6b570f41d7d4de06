#!/usr/bin/env bash
# build-deb.sh OUTDIR: builds the Debian package with Debian's own tools
# (dpkg-buildpackage, debhelper; `install-deps.sh pkg` installs them) from a
# copy of the source tree, so nothing is written beside the tree (the tools
# put their results in the parent of the source dir). Leaves
# OUTDIR/octsdb_<version>_<arch>.deb and prints its path as the last line.
# Builds only the binary and the generated files (debian/rules), with -j2.
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
for tool in dpkg-buildpackage dh; do
    command -v "$tool" >/dev/null ||
        { echo "build-deb.sh: $tool missing (scripts/install-deps.sh pkg)" >&2; exit 1; }
done
version=$(dpkg-parsechangelog -S Version)
src="$out/src/octsdb-$version"
rm -rf "$out"
mkdir -p "$src"
# The files git knows of, committed or not (the build dirs are ignored).
git ls-files -z -co --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp -P --parents -t "$src"
(cd "$src" && DEB_BUILD_OPTIONS="parallel=${OCT_DEB_JOBS:-2} noddebs" \
    dpkg-buildpackage -b -uc -us >../../build.log 2>&1) ||
    { tail -40 "$out/build.log"; echo "build-deb.sh: dpkg-buildpackage failed (log: $out/build.log)" >&2; exit 1; }
deb=$(ls "$out"/src/octsdb_"$version"_*.deb)
mv "$out"/src/*.deb "$out"/src/*.buildinfo "$out"/src/*.changes "$out"/
rm -rf "$out/src"
echo "$out/$(basename "$deb")"
