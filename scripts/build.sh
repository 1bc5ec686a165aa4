#!/usr/bin/env bash
# Configures and builds movegate into build/ (Release unless MG_BUILD_TYPE says otherwise).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_type=${MG_BUILD_TYPE:-Release}
jobs=$(nproc)

echo "[build] configuring ${build_type} build in build/"
cmake -S . -B build -DCMAKE_BUILD_TYPE="${build_type}"
echo "[build] building with -j${jobs}"
cmake --build build -j"${jobs}"
echo "[build] done"
