#!/usr/bin/env bash
# Installs the Debian 12 packages octsdb needs to build and test, if missing
# (plus optional groups: `install-deps.sh lint`).
# As root it runs apt-get; otherwise it prints the command to run.
set -euo pipefail

PKGS=(build-essential cmake pkg-config librocksdb-dev libzstd-dev zlib1g-dev libcmocka-dev
      libmicrohttpd-dev libpcre2-dev libssl-dev tzdata librados-dev libargon2-dev
      libcrypt-dev)

# Optional groups, named on the command line, for targets that need more than
# the build: `install-deps.sh lint` (from `make lint`) adds the static
# checkers scripts/lint.sh runs (clang-tidy brings run-clang-tidy);
# `install-deps.sh pkg` (from `make test` and `make deb`) what building the
# .deb and the tests/pkg/ checks use: Debian's packaging tools,
# systemd-analyze (package systemd; it need not run as PID 1), man, curl;
# `install-deps.sh ceph` (from `make test`) the Ceph daemons and CLI that
# scripts/ceph-cluster.sh starts for the rados backend's tests (1 monitor,
# 1 manager, 3 OSDs).
want_ui=
for group in "$@"; do
    case "$group" in
    lint) PKGS+=(clang-format clang-tidy cppcheck) ;;
    pkg) PKGS+=(debhelper dpkg-dev systemd man-db curl) ;;
    ceph) PKGS+=(ceph-mon ceph-mgr ceph-osd ceph-common python3) ;;
    # graph: gnuplot for /q?png (from `make test`; the TSD answers 501 without it)
    graph) PKGS+=(gnuplot-nox) ;;
    # ui: the browser tests (tests/ui/): Debian's chromium, Node and npm when
    # missing (a Node from elsewhere is kept: Debian's npm would conflict),
    # then puppeteer-core from tests/ui/package-lock.json, no browser download.
    ui)
        PKGS+=(chromium)
        command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
        command -v npm >/dev/null 2>&1 || PKGS+=(npm)
        want_ui=1
        ;;
    *)
        echo "octsdb: install-deps.sh: unknown group '$group' (known: lint, pkg, ceph, ui, graph)" >&2
        exit 2
        ;;
    esac
done

ui_npm() {
    local d
    d="$(dirname "$0")/../tests/ui"
    [ "$d/node_modules/.package-lock.json" -nt "$d/package-lock.json" ] && return 0
    echo "octsdb: npm ci in tests/ui (puppeteer-core)" >&2
    (cd "$d" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
}

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    if [ -n "$want_ui" ]; then ui_npm; fi
    exit 0
fi

echo "octsdb: installing missing packages: ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=sudo
    else
        echo "octsdb: run as root: apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
if [ -n "$want_ui" ]; then ui_npm; fi
