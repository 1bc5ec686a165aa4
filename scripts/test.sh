#!/usr/bin/env bash
# Installs dependencies, builds, and runs every CTest test against a throwaway
# PostgreSQL, then each fuzz target for MG_FUZZ_SECONDS (default 3; 0 skips;
# skipped by default when ctest arguments select tests). Extra arguments go
# to ctest (e.g. `-R unit`).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
bash scripts/build.sh
echo "[test] running ctest"
rc=0
bash scripts/with-pg.sh ctest --test-dir build --output-on-failure -j1 --timeout 300 "$@" || rc=$?

fuzz_seconds=${MG_FUZZ_SECONDS:-$(( $# == 0 ? 3 : 0 ))}
if [[ $fuzz_seconds != 0 ]]; then
  echo "[test] fuzzing each target for ${fuzz_seconds} s (MG_FUZZ_SECONDS)"
  start=$SECONDS
  bash scripts/fuzz.sh "$fuzz_seconds" || rc=1
  echo "[test] fuzzing took $((SECONDS - start)) s"
fi
exit "$rc"
