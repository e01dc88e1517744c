#!/usr/bin/env bash
# Configures and builds hybridbench (Release) into ./build. Extra arguments go to CMake
# configure, e.g. scripts/build.sh -DHYBRIDBENCH_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j "$(nproc)"
