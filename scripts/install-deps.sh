#!/usr/bin/env bash
# Installs the Debian 12 packages octsdb needs to build and test, if missing
# (plus optional groups: `install-deps.sh lint`).
# As root it runs apt-get; otherwise it prints the command to run.
set -euo pipefail

PKGS=(build-essential cmake pkg-config librocksdb-dev libzstd-dev zlib1g-dev libcmocka-dev
      libmicrohttpd-dev libpcre2-dev libssl-dev tzdata librados-dev)

# Optional groups, named on the command line, for targets that need more than
# the build: `install-deps.sh lint` (from `make lint`) adds the static
# checkers scripts/lint.sh runs (clang-tidy brings run-clang-tidy);
# `install-deps.sh pkg` (from `make test` and `make deb`) what building the
# .deb and the tests/pkg/ checks use: Debian's packaging tools,
# systemd-analyze (package systemd; it need not run as PID 1), man, curl;
# `install-deps.sh ceph` (from `make test`) the Ceph daemons and CLI that
# scripts/ceph-cluster.sh starts for the rados backend's tests (no ceph-mgr:
# that cluster runs without a manager, see the script).
for group in "$@"; do
    case "$group" in
    lint) PKGS+=(clang-format clang-tidy cppcheck) ;;
    pkg) PKGS+=(debhelper dpkg-dev systemd man-db curl) ;;
    ceph) PKGS+=(ceph-mon ceph-osd ceph-common python3) ;;
    *)
        echo "octsdb: install-deps.sh: unknown group '$group' (known: lint, pkg, ceph)" >&2
        exit 2
        ;;
    esac
done

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
