#!/usr/bin/env bash
# Configures and builds movegate into build/ (Release unless MG_BUILD_TYPE says otherwise).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_type=${MG_BUILD_TYPE:-Release}
jobs=$(nproc)

echo "[build] configuring ${build_type} build in build/"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE="${build_type}" "${launcher[@]}"
echo "[build] building with -j${jobs}"
cmake --build build -j"${jobs}"
echo "[build] done"
