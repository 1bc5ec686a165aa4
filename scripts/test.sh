#!/usr/bin/env bash
# Installs dependencies, builds, and runs every CTest test against a throwaway
# PostgreSQL. Extra arguments go to ctest (e.g. `-R unit`).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
echo "[test] running ctest"
exec bash scripts/with-pg.sh \
  ctest --test-dir build --output-on-failure -j1 --timeout 300 "$@"
