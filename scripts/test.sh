#!/usr/bin/env bash
# Installs dependencies, builds, runs each fuzz target for MG_FUZZ_SECONDS
# (default 3; 0 skips; skipped by default when ctest arguments select
# tests), then every CTest test against a throwaway PostgreSQL. Extra
# arguments go to ctest (e.g. `-R unit`). CTest runs last, so its summary
# closes the output.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
bash scripts/build.sh

rc=0
fuzz_seconds=${MG_FUZZ_SECONDS:-$(($# == 0 ? 3 : 0))}
if [[ $fuzz_seconds != 0 ]]; then
  echo "[test] fuzzing each target for ${fuzz_seconds} s (MG_FUZZ_SECONDS)"
  start=$SECONDS
  bash scripts/fuzz.sh "$fuzz_seconds" || rc=1
  echo "[test] fuzzing took $((SECONDS - start)) s"
fi

echo "[test] running ctest"
bash scripts/with-pg.sh ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 300 "$@" || rc=$?
exit "$rc"
