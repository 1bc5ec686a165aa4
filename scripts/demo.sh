#!/usr/bin/env bash
# Installs dependencies, builds, and runs `movegate demo` against a throwaway
# PostgreSQL. Extra arguments go to `movegate demo`; with `--evm` a throwaway
# local chain (ganache) runs too and the demo adds a real EVM transfer.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
echo "[demo] migrating and running the demo"
chain=()
for arg in "$@"; do
  if [[ $arg == --evm ]]; then chain=(bash scripts/with-ganache.sh); fi
done
# shellcheck disable=SC2016 # $@ is expanded by the inner shell.
exec "${chain[@]}" bash scripts/with-pg.sh \
  bash -c 'build/movegate migrate && build/movegate demo "$@"' movegate-demo "$@"
