#!/usr/bin/env bash
# Installs dependencies, builds, and runs `movegate demo` against a throwaway
# PostgreSQL. Extra arguments go to `movegate demo`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
echo "[demo] migrating and running the demo"
# shellcheck disable=SC2016 # $@ is expanded by the inner shell.
exec bash scripts/with-pg.sh \
  bash -c 'build/movegate migrate && build/movegate demo "$@"' movegate-demo "$@"
