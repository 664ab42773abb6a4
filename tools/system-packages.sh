#!/usr/bin/env bash
# Install the Debian packages named as arguments, only those missing, only as root.
# `make test` and `make demo` call this so that a fresh Debian machine needs nothing else.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "missing system packages: ${missing[*]}; install them as root:" \
       "apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing system packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
