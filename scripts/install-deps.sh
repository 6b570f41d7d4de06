#!/usr/bin/env bash
# Installs the Debian 12 packages octsdb needs to build and test, if missing.
# As root it runs apt-get; otherwise it prints the command to run.
set -euo pipefail

PKGS=(build-essential cmake pkg-config librocksdb-dev libzstd-dev zlib1g-dev libcmocka-dev
      libmicrohttpd-dev libpcre2-dev tzdata)

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
