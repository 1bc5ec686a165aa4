#!/usr/bin/env bash
# Installs movegate's build, test and runtime dependencies on Debian 12.
# Run as root. Re-runs are fast and work offline: apt is only touched when a
# package is missing (checked with dpkg-query).
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

packages=(
  build-essential cmake pkg-config
  libcaf-dev libpqxx-dev libpq-dev rapidjson-dev libcpp-httplib-dev
  libboost-test-dev libssl-dev libcrypto++-dev
  postgresql postgresql-contrib
  clang-format python3
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ $status != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "[install-deps] all ${#packages[@]} packages already installed"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "[install-deps] missing packages: ${missing[*]}" >&2
  echo "[install-deps] run this script as root to install them" >&2
  exit 1
fi

echo "[install-deps] missing: ${missing[*]}"
echo "[install-deps] apt-get update"
apt-get update -qq
echo "[install-deps] installing ${#missing[@]} package(s)"
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "[install-deps] done"
