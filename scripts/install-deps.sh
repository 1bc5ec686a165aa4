#!/usr/bin/env bash
# Installs movegate's build, test and runtime dependencies on Debian 12.
# Run as root. Re-runs are fast and work offline: apt is only touched when a
# package is missing (checked with dpkg-query).
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

packages=(
  build-essential cmake pkg-config ccache # ccache: rebuilds of several checkouts share one cache
  libcaf-dev libpqxx-dev libpq-dev rapidjson-dev libcpp-httplib-dev
  libboost-test-dev libssl-dev libcrypto++-dev libsecp256k1-dev
  postgresql postgresql-contrib
  postgresql-15-auto-failover pg-auto-failover-cli # scripts/with-pg-ha.sh: the failover tests' formation
  clang-format python3 curl
  python3-venv python3-pip python3-setuptools # clients/python: its offline `pip install` test
  openssl # the cluster TLS tests make a throwaway CA and certificates with it
  chromium # the admin page's browser test (driven by playwright-core, never a downloaded browser)
  prometheus # promtool: the metrics test checks the live /metrics output
  gdb # a hung test process prints every thread's stack before it aborts (tests/support/hang_watchdog)
  clang libfuzzer-14-dev # scripts/fuzz.sh: the libFuzzer targets of tests/fuzz (ASan + UBSan)
  lintian # the Debian package test lints the .deb of scripts/package.sh
  dpkg-dev # dpkg-shlibdeps: that package's Depends
)

# npm packages of the JS-driven tests and the local chain (tests/js/package.json,
# pinned by its lock file: standardwebhooks, swagger-parser, playwright-core,
# ganache): only when node_modules is missing or older than the lock file, so
# re-runs stay offline.
js_deps() {
  local dir stamp
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/js"
  stamp=$dir/node_modules/.movegate-lock
  if [[ -f $dir/package.json ]] && ! cmp -s "$dir/package-lock.json" "$stamp" &&
    command -v npm >/dev/null; then
    echo "[install-deps] npm ci --prefix tests/js"
    npm ci --prefix "$dir" --no-audit --no-fund
    cp "$dir/package-lock.json" "$stamp"
  fi
}

# The callback tests verify Standard Webhooks signatures with the
# standardwebhooks npm package's own verifier (tests/js): Debian's nodejs and
# npm, installed only when `node` is missing (js_deps then runs `npm ci`).
ensure_node() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "[install-deps] installing nodejs and npm"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends nodejs npm
  fi
}
ensure_node

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ $status != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "[install-deps] all ${#packages[@]} packages already installed"
  js_deps
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
# Packages such as postgresql and prometheus start a system service on
# install; the project runs its own throwaway servers, so keep them from
# starting (policy-rc.d exit 101 = "not allowed"), unless the machine has
# its own policy.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}"
js_deps
echo "[install-deps] done"
