#!/usr/bin/env bash
# Installs dependencies, builds, and runs `movegate bench` against a throwaway
# PostgreSQL. Extra arguments go to `movegate bench`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
echo "[bench] migrating and running the benchmark"
# shellcheck disable=SC2016 # $@ is expanded by the inner shell.
exec bash scripts/with-pg.sh \
  bash -c 'build/movegate migrate && build/movegate bench "$@"' movegate-bench "$@"
